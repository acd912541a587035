// The add/update/remove diff between two results of one query, by item identity (type + id) and
// a hash of each item's JSON. Pure: the topic runs it once per change for all its subscribers.
import { createHash } from 'node:crypto';

/** One resource of a result, as the JSON endpoint renders it in `data`. */
export interface TopicItem {
  readonly id: string | number;
  readonly type: string;
  readonly [field: string]: unknown;
}

/** What a stream's route computes: the diffable items and the full JSON body (sent as `reset`). */
export interface TopicSnapshot {
  readonly items: readonly TopicItem[];
  readonly body: unknown;
}

/** item key → content hash of its JSON, and the id as the item had it (string or number) */
export type ItemIndex = Map<string, { readonly hash: string; readonly id: string | number; readonly type: string }>;

export interface ItemChange {
  readonly kind: 'add' | 'update' | 'remove';
  /** JSON text of the event data: the item for add/update, {id, type} for remove */
  readonly data: string;
}

function itemKey(item: TopicItem): string {
  if ((typeof item.id !== 'string' && typeof item.id !== 'number') || typeof item.type !== 'string') {
    throw new TypeError('every stream item needs a string type and a string or number id');
  }
  // NUL cannot appear in a type name, so keys of distinct (type, id) pairs never collide
  return `${item.type}\u0000${item.id}`;
}

function contentHash(json: string): string {
  // sha1 is plenty to detect a change (not a security boundary) and is native, so cheap per item
  return createHash('sha1').update(json).digest('base64');
}

/**
 * The item's JSON without the top-level fields that only say how old it is (`observed_at`,
 * `age_s`): what its content hash covers. Every poll moves those, so a change in them alone is no
 * update, or every arrival and vehicle of a result would be re-sent on every poll. Items sent
 * keep their current values; a client reads the age of an item it holds from its
 * `timestamp`/`predicted_at`, or from the last update.
 */
function hashedJson(item: TopicItem): string {
  if (!('observed_at' in item) && !('age_s' in item)) return JSON.stringify(item);
  const { observed_at: _observed, age_s: _age, ...rest } = item;
  return JSON.stringify(rest);
}

export function indexItems(items: readonly TopicItem[]): ItemIndex {
  const index: ItemIndex = new Map();
  for (const item of items) {
    const key = itemKey(item);
    if (!index.has(key)) index.set(key, { hash: contentHash(hashedJson(item)), id: item.id, type: item.type });
  }
  return index;
}

/** Removes first, then adds and updates in the result's order. `previous` is left untouched. */
export function diffItems(
  previous: ItemIndex,
  items: readonly TopicItem[],
): { next: ItemIndex; changes: ItemChange[] } {
  const next: ItemIndex = new Map();
  const upserts: ItemChange[] = [];
  for (const item of items) {
    const key = itemKey(item);
    // a duplicate (type, id) within one result: the first one is the item, like indexItems
    if (next.has(key)) continue;
    const hash = contentHash(hashedJson(item));
    next.set(key, { hash, id: item.id, type: item.type });
    const before = previous.get(key);
    if (before === undefined) upserts.push({ kind: 'add', data: JSON.stringify(item) });
    else if (before.hash !== hash) upserts.push({ kind: 'update', data: JSON.stringify(item) });
  }
  const removes: ItemChange[] = [];
  for (const [key, gone] of previous) {
    if (!next.has(key)) removes.push({ kind: 'remove', data: JSON.stringify({ id: gone.id, type: gone.type }) });
  }
  return { next, changes: removes.length ? removes.concat(upserts) : upserts };
}
