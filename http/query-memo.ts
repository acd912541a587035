// Parsing and validating a query string costs more than the rest of a cached request, so each
// route's parsed queries are memoized, bounded: past the limit the oldest entry goes (the same
// route's first, else another route's).
import type { CompiledRoute } from './compile.ts';
import type { IdKind } from './params.ts';
import { parseQuery, validate, type ParsedQuery } from './validate.ts';

/** A route's query string parsed and validated once, with the keys derived from it. */
export interface QueryEntry {
  readonly parsed: ParsedQuery & { scope: string };
  readonly query: Record<string, unknown>;
  /** the id filters the query gives (the route's idParams that are set), checked per request */
  readonly ids: ReadonlyArray<{ readonly name: string; readonly kind: IdKind; readonly ids: readonly string[] }>;
  /** response-cache key on a path without parameters (the path is the route's), made on first use */
  cacheKey?: string;
}

export class QueryMemo {
  /** by route, then by raw query string */
  private readonly byRoute = new Map<CompiledRoute, Map<string, QueryEntry>>();
  private count = 0;

  constructor(private readonly maxEntries: number) {}

  /** entries held, over every route */
  get size(): number {
    return this.count;
  }

  /** The route's query `raw` parsed and validated (throws the validation's ApiError). */
  get(compiled: CompiledRoute, raw: string): QueryEntry {
    let byQuery = this.byRoute.get(compiled);
    if (!byQuery) {
      byQuery = new Map();
      this.byRoute.set(compiled, byQuery);
    }
    let entry = byQuery.get(raw);
    if (!entry) {
      const parsed: ParsedQuery & { scope: string } = {
        ...parseQuery(raw, compiled.allowedQuery, compiled.hints),
        scope: '',
      };
      parsed.scope = scopeQuery(parsed, compiled.pagingNames);
      const query = Object.freeze(validate(compiled.query, parsed.values) as Record<string, unknown>);
      const ids = compiled.idParams.flatMap(({ name, kind }) => {
        const given = query[name] as readonly string[] | undefined;
        return given ? [{ name, kind, ids: given }] : [];
      });
      entry = { parsed, query, ids };
      if (this.count >= this.maxEntries) this.forgetOne(byQuery);
      byQuery.set(raw, entry);
      this.count++;
    }
    return entry;
  }

  private forgetOne(preferred: Map<string, QueryEntry>): void {
    for (const byQuery of [preferred, ...this.byRoute.values()]) {
      const oldest = byQuery.keys().next();
      if (oldest.done) continue;
      byQuery.delete(oldest.value);
      this.count--;
      return;
    }
  }
}

/** The query's parameters but `excluded` ones, in one canonical order: what a cursor or stream is scoped to. */
export function scopeQuery(parsed: ParsedQuery, excluded: ReadonlySet<string>): string {
  return Object.keys(parsed.values)
    .filter((n) => !excluded.has(n))
    .sort()
    .map((n) => `${encodeURIComponent(n)}=${encodeURIComponent(parsed.values[n]!)}`)
    .join('&');
}
