// The one rule on ids in query filters (docs/guides/api.md, "Unknown ids"): a route, line, station or source
// that this server does not know is 404 not_found naming the parameter; a known id that matches
// nothing right now is an empty list. Known means in an imported schedule or in the live data.
// The request chain applies it to every parameter declared with an IdKind, on JSON and streams alike.
import { ApiError } from '../core/errors.ts';
import type { Mode } from '../core/types.ts';
import type { IdKind } from './params.ts';
import type { RouteDirectory } from './read/directory.ts';
import type { LiveIndex } from './read/live-index.ts';

/** The rule as the documents state it (OpenAPI introduction, llms.txt). */
export const UNKNOWN_IDS_RULE =
  'A `route`, `line`, `station` or `source` filter (in a query, JSON or event stream alike) and a route id in a path ' +
  'must name something this server knows: a route, line or stop of an imported schedule, or a route, station or feed ' +
  'present in the live data. An unknown id is 404 `not_found` with the parameter in `errors`; a known id that ' +
  "matches nothing right now gives an empty list. `route` names bus and streetcar routes (on a mode's endpoint, " +
  "that mode's) and `line` rail lines, so a rail line given as `route` is unknown there. Ids are the ones the API " +
  'serves: an id two imported schedules share is `<prefix>:<id>`, and given bare it names no route or stop of ' +
  'theirs. Webhook endpoint filters are subscriptions and are stored as given.';

export interface KnownIds {
  route(modes: readonly Mode[], id: string): boolean;
  station(id: string): boolean;
  source(id: string): boolean;
}

/** 404 for the first id of `ids` that `known` does not know. */
export function assertKnownIds(known: KnownIds, parameter: string, kind: IdKind, ids: readonly string[]): void {
  for (const id of ids) {
    let ok: boolean;
    let what: string;
    if (kind.kind === 'route') {
      ok = known.route(kind.modes, id);
      what = `${kind.noun} ${JSON.stringify(id)} for ${kind.modes.join('/')}`;
    } else if (kind.kind === 'station') {
      ok = known.station(id);
      what = `station or stop ${JSON.stringify(id)}`;
    } else {
      ok = known.source(id);
      what = `source (feed id) ${JSON.stringify(id)}`;
    }
    if (!ok) {
      throw new ApiError('not_found', `Unknown ${what}.`, {
        errors: [{ parameter, detail: `unknown ${kind.kind === 'route' ? kind.noun : kind.kind}` }],
      });
    }
  }
}

/** What the API knows: the schedules' directory and the live data. */
export function directoryKnownIds(directory: RouteDirectory, index: LiveIndex): KnownIds {
  return {
    route: (modes, id) => modes.some((m) => directory.route(m, id) !== undefined || index.routesSeen(m).has(id)),
    station: (id) => directory.hasStop(id) || index.stationsSeen().has(id),
    source: (id) => index.sourcesSeen().has(id),
  };
}
