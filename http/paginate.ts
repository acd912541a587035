// Keyset pagination over a list already sorted by its key: the page starts after the cursor's
// key, so rows inserted or removed elsewhere never shift it (no duplicates, no gaps).
import { compareKeys, type CursorValue } from './cursor.ts';
import type { RequestContext } from './types.ts';

export interface Page<R> {
  data: R[];
  meta: { limit: number; next_cursor: string | null; total: number };
  links: { self: string; next: string | null };
}

/** Index of the first item whose key is greater than `after`. */
function firstAfter<T>(sorted: readonly T[], keyOf: (item: T) => CursorValue[], after: readonly CursorValue[]): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareKeys(keyOf(sorted[mid]!), after) <= 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export function paginate<T, R>(
  sorted: readonly T[],
  keyOf: (item: T) => CursorValue[],
  ctx: Pick<RequestContext, 'page' | 'url'>,
  map: (item: T) => R,
): Page<R> {
  const page = ctx.page;
  if (!page) throw new Error('paginate() on a route that is not paginated');
  const start = page.after ? firstAfter(sorted, keyOf, page.after) : 0;
  const slice = sorted.slice(start, start + page.limit);
  const more = start + slice.length < sorted.length;
  const last = slice[slice.length - 1];
  const next = more && last !== undefined ? page.cursorFor(keyOf(last)) : null;
  return {
    data: slice.map(map),
    meta: { limit: page.limit, next_cursor: next, total: sorted.length },
    links: { self: ctx.url(), next: next ? ctx.url({ cursor: next }) : null },
  };
}
