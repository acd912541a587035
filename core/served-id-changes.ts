// Which served ids a change of schedules (an import, a refresh, a reload) changes, and how: what
// the import and reload commands print and the service logs, so a client's ids never change
// unannounced (docs/guides/api.md, "Ids across agencies").
import { CATALOG_KINDS, ServedIds, type CatalogKind } from './served-ids.ts';

export interface IdChange {
  schedule_id: string;
  /** `unlisted`: ids no schedule lists (vehicles, trips and stops only a feed names) */
  kind: CatalogKind | 'unlisted';
  /** ids of the kind whose served form changed */
  count: number;
  /** a few of them: stored id, served before, served now */
  examples: Array<{ id: string; before: string; after: string }>;
  /** the other schedules listing those ids now */
  shared_with: string[];
}

const EXAMPLES = 5;
const NATURAL = new Intl.Collator('en', { numeric: true });

/**
 * Every served id that differs between two mappings, by schedule and kind: of the schedules both
 * know (a schedule new in `after` had no ids served before), or of every schedule against
 * ServedIds.NONE (what a start serves otherwise than stored).
 */
export function idChanges(before: ServedIds, after: ServedIds): IdChange[] {
  if (before === after || (!before.scoped && !after.scoped)) return [];
  const present = new Set(after.schedules());
  if (before !== ServedIds.NONE) {
    const known = new Set(before.schedules());
    for (const s of present) if (!known.has(s)) present.delete(s);
  }
  const groups = new Map<string, IdChange>();
  const note = (schedule: string, kind: IdChange['kind'], id: string, was: string, now: string, others: string[]) => {
    const key = `${schedule}\u0000${kind}`;
    const group = groups.get(key) ?? { schedule_id: schedule, kind, count: 0, examples: [], shared_with: [] };
    groups.set(key, group);
    group.count++;
    if (group.examples.length < EXAMPLES * 4) group.examples.push({ id, before: was, after: now });
    for (const o of others) if (!group.shared_with.includes(o)) group.shared_with.push(o);
  };
  for (const kind of CATALOG_KINDS) {
    const ids = new Set([...before.listed(kind), ...after.listed(kind)]);
    for (const id of ids) {
      const listing = after.listedBy(kind, id);
      for (const schedule of new Set([...before.listedBy(kind, id), ...listing])) {
        if (!present.has(schedule)) continue;
        const was = before.serve(schedule, kind, id);
        const now = after.serve(schedule, kind, id);
        if (was !== now)
          note(
            schedule,
            kind,
            id,
            was,
            now,
            listing.filter((s) => s !== schedule),
          );
      }
    }
  }
  for (const schedule of present) {
    const was = before.serve(schedule, 'vehicle', '<id>');
    const now = after.serve(schedule, 'vehicle', '<id>');
    if (was !== now) note(schedule, 'unlisted', '<id>', was, now, []);
  }
  return [...groups.values()]
    .sort((a, b) => NATURAL.compare(a.schedule_id, b.schedule_id) || kindOrder(a.kind) - kindOrder(b.kind))
    .map((group) => ({
      ...group,
      examples: group.examples.sort((a, b) => NATURAL.compare(a.id, b.id)).slice(0, EXAMPLES),
      shared_with: group.shared_with.sort(NATURAL.compare),
    }));
}

function kindOrder(kind: IdChange['kind']): number {
  return kind === 'unlisted' ? CATALOG_KINDS.length : CATALOG_KINDS.indexOf(kind);
}

/** One line per schedule and kind, as the commands print them. */
export function formatIdChanges(changes: readonly IdChange[]): string[] {
  return changes.map((c) => {
    const head = `schedule ${c.schedule_id}`;
    if (c.kind === 'unlisted') {
      const e = c.examples[0]!;
      return `${head}: ids no schedule lists (vehicles, added trips) are now served as ${e.after} (were ${e.before})`;
    }
    const shared = c.shared_with.length ? ` (also listed by ${c.shared_with.join(', ')})` : '';
    const shown = c.examples.map((e) => `${e.before} → ${e.after}`).join(', ');
    const more = c.count > c.examples.length ? `, … ${c.count - c.examples.length} more` : '';
    return `${head}: ${c.count} ${c.kind} id${c.count === 1 ? '' : 's'} now served otherwise${shared}: ${shown}${more}`;
  });
}
