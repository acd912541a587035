// The ids the API serves, unique across schedules (docs/guides/api.md, "Ids across agencies").
// Stored rows keep each feed's and schedule's own ids beside their schedule_id; what is served is
// computed here, both ways: an id listed by more than one imported schedule is served as
// `<prefix>:<id>` (the prefix is `schedules[].id_prefix`, else the schedule id), an id listed by
// one schedule as it is. A deployment with one schedule, or whose schedules share no id, serves
// every id as stored. The catalog (which schedule lists which id) is read by store/id-scope.ts.
//
// Ids no schedule lists (vehicles; trips, routes and stops only a feed names) cannot be checked:
// those of a schedule that shares ids with another are prefixed too, so two agencies numbering
// alike never meet in one served id. Rows of a feed without a schedule keep their ids.

export const ID_KINDS = ['route', 'stop', 'trip', 'vehicle'] as const;
/** route: routes and rail lines; stop: stops and stations; trip; vehicle */
export type IdKind = (typeof ID_KINDS)[number];
/** The kinds a schedule lists (routes.txt, stops.txt, trips.txt). */
export type CatalogKind = Exclude<IdKind, 'vehicle'>;
export const CATALOG_KINDS: readonly CatalogKind[] = ['route', 'stop', 'trip'];

/** A NULL schedule_id (a feed without a schedule) in lists of schedules handed to SQL. */
export const NO_SCHEDULE = '';

/** What the store reads: every schedule with its prefix, and which schedules list each id. */
export interface IdCatalog {
  /** schedule id → prefix, every imported or configured schedule */
  prefixes: ReadonlyMap<string, string>;
  /** per kind: id → the schedules listing it */
  owners: Readonly<Record<CatalogKind, ReadonlyMap<string, readonly string[]>>>;
  /** moves when a schedule version or a prefix changes: equal fingerprints, equal mapping */
  fingerprint: string;
}

/** A served id read back: the stored id, and the schedules whose rows serve it so (null: any). */
export interface ResolvedId {
  id: string;
  /** schedule ids, NO_SCHEDULE for rows without one; null when ids are not scoped */
  schedules: readonly string[] | null;
}

/** Where a row's ids belong: its own schedule_id when it carries one, else its feed's schedule. */
export interface ScopedRow {
  feed_id: string;
  schedule_id?: string | null;
}

let generations = 0;
/** Two or more schedules list the id (or it reads as another schedule's prefixed id). */
const SHARED = 1;

export class ServedIds {
  /** Every id served as stored: one schedule, or scoping off. */
  static readonly NONE = new ServedIds(null, new Map());

  /** false: serve() and resolve() are the identity */
  readonly scoped: boolean;
  /** moves with every distinct mapping: a cache key */
  readonly generation: number;
  readonly fingerprint: string;
  /** schedules sharing at least one id with another */
  readonly colliding: ReadonlySet<string>;
  private readonly lists: IdCatalog['owners'];
  private readonly prefixes: ReadonlyMap<string, string>;
  private readonly byPrefix: ReadonlyMap<string, string>;

  private constructor(
    catalog: IdCatalog | null,
    private readonly feedSchedules: ReadonlyMap<string, string | null>,
  ) {
    this.generation = ++generations;
    this.fingerprint = catalog?.fingerprint ?? 'none';
    this.prefixes = catalog?.prefixes ?? new Map();
    this.byPrefix = new Map([...this.prefixes].map(([id, prefix]) => [prefix, id]));
    this.lists = catalog?.owners ?? { route: new Map(), stop: new Map(), trip: new Map() };
    // one schedule can share nothing: its rows serve their ids as stored, at no cost
    const listed = new Set<string>();
    for (const kind of CATALOG_KINDS)
      for (const schedules of this.lists[kind].values()) for (const s of schedules) listed.add(s);
    this.scoped = listed.size > 1;
    const colliding = new Set<string>();
    if (this.scoped) {
      for (const kind of CATALOG_KINDS)
        for (const [id, schedules] of this.lists[kind])
          if (schedules.length > 1 || this.looksPrefixed(id)) for (const s of schedules) colliding.add(s);
    }
    this.colliding = colliding;
  }

  /** The mapping for a catalog and the feeds' schedules (feed id → schedule id, null without one). */
  static build(catalog: IdCatalog, feedSchedules: ReadonlyMap<string, string | null>): ServedIds {
    return new ServedIds(catalog, feedSchedules);
  }

  /** The schedule a feed's rows belong to (null: a feed without a schedule, or an unknown feed). */
  scopeOfFeed(feedId: string): string | null {
    return this.feedSchedules.get(feedId) ?? null;
  }

  /** A row's schedule: the one it was stored with, else its feed's. */
  scopeOf(row: ScopedRow): string | null {
    return row.schedule_id !== undefined ? row.schedule_id : this.scopeOfFeed(row.feed_id);
  }

  /** The prefix of a schedule's served ids. */
  prefix(scheduleId: string): string {
    return this.prefixes.get(scheduleId) ?? scheduleId;
  }

  /** The id as served for a stored id of `scheduleId` (null: a feed without a schedule). */
  serve(scheduleId: string | null, kind: IdKind, id: string): string {
    if (!this.scoped || scheduleId === null) return id;
    const owner = this.owner(kind, id);
    if (owner === scheduleId) return id;
    if (owner === undefined && !this.colliding.has(scheduleId) && !this.looksPrefixed(id)) return id;
    return `${this.prefix(scheduleId)}:${id}`;
  }

  serveNullable(scheduleId: string | null, kind: IdKind, id: string | null): string | null {
    return id === null ? null : this.serve(scheduleId, kind, id);
  }

  /**
   * A served id (a filter, a path) as stored: the id and the schedules whose rows serve it so.
   * Filters on live rows compare served ids; SQL over stored rows uses this.
   */
  resolve(kind: IdKind, served: string): ResolvedId {
    if (!this.scoped) return { id: served, schedules: null };
    const colon = served.indexOf(':');
    if (colon > 0) {
      const schedule = this.byPrefix.get(served.slice(0, colon));
      const id = served.slice(colon + 1);
      if (schedule !== undefined && this.serve(schedule, kind, id) === served) return { id, schedules: [schedule] };
    }
    // served as stored: by its one schedule, by rows without a schedule, or (listed by none)
    // by every schedule that shares nothing
    const owner = this.owner(kind, served);
    if (owner !== undefined && owner !== SHARED) return { id: served, schedules: [owner, NO_SCHEDULE] };
    if (owner === SHARED || this.looksPrefixed(served)) return { id: served, schedules: [NO_SCHEDULE] };
    const quiet = [...this.prefixes.keys()].filter((s) => !this.colliding.has(s)).sort();
    return { id: served, schedules: [...quiet, NO_SCHEDULE] };
  }

  /** The schedules listing an id of a kind, sorted (empty: no schedule lists it). */
  listedBy(kind: CatalogKind, id: string): readonly string[] {
    return this.lists[kind].get(id) ?? [];
  }

  /** Every id of a kind some schedule lists. */
  listed(kind: CatalogKind): Iterable<string> {
    return this.lists[kind].keys();
  }

  /** Every schedule the mapping knows, sorted. */
  schedules(): string[] {
    return [...this.prefixes.keys()].sort();
  }

  /** The one schedule listing the id as it is served, SHARED when it is served prefixed, undefined when unlisted. */
  private owner(kind: IdKind, id: string): string | typeof SHARED | undefined {
    if (kind === 'vehicle') return undefined;
    const schedules = this.lists[kind].get(id);
    if (schedules === undefined) return undefined;
    // `a:7` of one schedule would read as id 7 of the schedule prefixed `a`: served prefixed
    return schedules.length === 1 && !this.looksPrefixed(id) ? schedules[0]! : SHARED;
  }

  private looksPrefixed(id: string): boolean {
    const colon = id.indexOf(':');
    return colon > 0 && this.byPrefix.has(id.slice(0, colon));
  }
}
