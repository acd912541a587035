// Matches a method and a raw path against OpenAPI-style templates (/bus/{route_id}/realtime).
// Static segments win over parameters, so /bus/realtime never reads as a route id.

export type RouteMatch<T> =
  | { kind: 'found'; route: T; params: Record<string, string> }
  | { kind: 'method_not_allowed'; allow: string[] }
  | { kind: 'not_found' };

interface Entry<T> {
  method: string;
  segments: Array<{ literal: string } | { param: string }>;
  statics: number;
  route: T;
}

const PARAM = /^\{([A-Za-z_][A-Za-z0-9_]*)\}$/;

export function splitPath(template: string): string[] {
  return template.split('/').slice(1);
}

/** The parameters of a path without any: one shared, frozen object. */
const NO_PARAMS: Record<string, string> = Object.freeze({}) as Record<string, string>;
const NOT_FOUND = Object.freeze({ kind: 'not_found' as const });

export class Router<T> {
  /** static paths: their matches are built once, so a request allocates nothing to find its route */
  private readonly exact = new Map<string, Map<string, RouteMatch<T>>>();
  private readonly dynamic: Entry<T>[] = [];

  add(method: string, template: string, route: T): void {
    if (!template.startsWith('/')) throw new Error(`route path must start with /: ${template}`);
    const segments = splitPath(template).map((s) => {
      const m = PARAM.exec(s);
      return m ? { param: m[1]! } : { literal: s };
    });
    if (segments.every((s) => 'literal' in s)) {
      const byMethod = this.exact.get(template) ?? new Map<string, RouteMatch<T>>();
      if (byMethod.has(method)) throw new Error(`duplicate route ${method} ${template}`);
      byMethod.set(method, Object.freeze({ kind: 'found', route, params: NO_PARAMS }));
      this.exact.set(template, byMethod);
      return;
    }
    const duplicate = this.dynamic.find((e) => e.method === method && sameShape(e.segments, segments));
    if (duplicate) throw new Error(`duplicate route ${method} ${template}`);
    this.dynamic.push({ method, segments, statics: segments.filter((s) => 'literal' in s).length, route });
    // most specific first: more literal segments, then earlier literals
    this.dynamic.sort((a, b) => b.statics - a.statics || specificity(b) - specificity(a));
  }

  /** A static path's match is shared and frozen: callers read it, never change it. */
  match(method: string, rawPath: string): RouteMatch<T> {
    const byMethod = this.exact.get(rawPath);
    if (byMethod) {
      const found = byMethod.get(method);
      if (found) return found;
    }
    const raw = splitPath(rawPath);
    let allow: Set<string> | null = byMethod ? new Set(byMethod.keys()) : null;
    let decoded: string[] | null = null;
    for (const entry of this.dynamic) {
      if (entry.segments.length !== raw.length) continue;
      decoded ??= decodeSegments(raw);
      if (!decoded) return NOT_FOUND;
      const params = bind(entry.segments, decoded);
      if (!params) continue;
      if (entry.method === method) return { kind: 'found', route: entry.route, params };
      allow ??= new Set();
      allow.add(entry.method);
    }
    return allow?.size ? { kind: 'method_not_allowed', allow: [...allow].sort() } : NOT_FOUND;
  }
}

function decodeSegments(raw: string[]): string[] | null {
  try {
    return raw.map((s) => decodeURIComponent(s));
  } catch {
    return null;
  }
}

function bind(segments: Entry<unknown>['segments'], decoded: string[]): Record<string, string> | null {
  const params: Record<string, string> = {};
  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i]!;
    const value = decoded[i]!;
    if ('literal' in seg) {
      if (seg.literal !== value) return null;
    } else {
      if (value === '') return null;
      params[seg.param] = value;
    }
  }
  return params;
}

function sameShape(a: Entry<unknown>['segments'], b: Entry<unknown>['segments']): boolean {
  return (
    a.length === b.length &&
    a.every((s, i) => {
      const o = b[i]!;
      return 'literal' in s ? 'literal' in o && o.literal === s.literal : 'param' in o;
    })
  );
}

function specificity(entry: Entry<unknown>): number {
  // earlier literal segments weigh more
  return entry.segments.reduce((score, s, i) => score + ('literal' in s ? 2 ** (16 - i) : 0), 0);
}
