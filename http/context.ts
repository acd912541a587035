// The per-request context handed to handlers. Methods live on the prototype so a request
// allocates no closures (this path runs tens of thousands of times a second).
import type { AuthenticatedKey } from '../accounts/auth.ts';
import type { CursorCodec, CursorValue } from './cursor.ts';
import type { PageRequest, RequestContext } from './types.ts';

export class PageCursor implements PageRequest {
  constructor(
    readonly limit: number,
    readonly after: CursorValue[] | null,
    private readonly codec: CursorCodec,
    private readonly scope: string,
  ) {}

  cursorFor(key: readonly CursorValue[]): string {
    return this.codec.encode(this.scope, key);
  }
}

export class Context implements RequestContext {
  constructor(
    readonly requestId: string,
    readonly nowMs: number,
    readonly method: string,
    readonly path: string,
    readonly query: Record<string, unknown>,
    readonly params: Record<string, string>,
    readonly body: unknown,
    readonly key: AuthenticatedKey | null,
    readonly headers: Readonly<Record<string, string>>,
    readonly page: PageRequest | null,
    /** the validated raw values, for links */
    private readonly rawQuery: Readonly<Record<string, string>>,
    /** base URL + path */
    private readonly base: string,
    /** stream-selection parameters of this route, never carried into links */
    private readonly streamNames: ReadonlySet<string>,
  ) {}

  url(overrides: Record<string, string | null> = {}): string {
    const values: Record<string, string> = { ...this.rawQuery };
    // links name the JSON resource: never the key, nor how a stream of it was requested
    for (const name of this.streamNames) delete values[name];
    for (const [name, value] of Object.entries(overrides)) {
      if (value === null) delete values[name];
      else values[name] = value;
    }
    const qs = Object.keys(values)
      .sort()
      .map((n) => `${encodeURIComponent(n)}=${encodeURIComponent(values[n]!)}`)
      .join('&');
    return qs ? `${this.base}?${qs}` : this.base;
  }
}
