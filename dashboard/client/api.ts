// The API client: one GET with the key in the Authorization header, and where the key is kept
// (this tab's sessionStorage only; never a URL, never a cookie).
import { fmtSeconds, problemText } from './format.ts';

export const API = 'api/v1/';
const STORAGE_KEY = 'transit-api.dashboard.key';

export interface ApiResult<T = unknown> {
  ok: boolean;
  status: number;
  data: T;
  headers: Headers | null;
  message: string | null;
}

/** One GET with the key in the Authorization header; never throws. */
export async function request<T = unknown>(path: string, key: string): Promise<ApiResult<T>> {
  let res: Response;
  try {
    res = await fetch(path, {
      headers: { Authorization: `Bearer ${key}`, Accept: 'application/json' },
      cache: 'no-store',
      credentials: 'omit',
      redirect: 'error',
    });
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    return { ok: false, status: 0, data: null as T, headers: null, message: `The server cannot be reached (${why}).` };
  }
  let body: unknown = null;
  try {
    body = await res.json();
  } catch {
    body = null;
  }
  const result: ApiResult<T> = { ok: res.ok, status: res.status, data: body as T, headers: res.headers, message: null };
  if (!res.ok) {
    result.message = problemText(body, res.status);
    const retry = res.headers.get('Retry-After');
    if (res.status === 429 && retry) result.message += ` Retry in ${fmtSeconds(retry)}.`;
  } else if (body === null) {
    result.ok = false;
    result.message = `The server sent an answer that is not JSON (HTTP ${res.status}).`;
  }
  return result;
}

export function storedKey(): string | null {
  try {
    return sessionStorage.getItem(STORAGE_KEY);
  } catch {
    return null;
  }
}

export function storeKey(key: string): void {
  // without sessionStorage (some private modes) the key lives in this page only
  try {
    sessionStorage.setItem(STORAGE_KEY, key);
  } catch {
    /* kept in memory */
  }
}

export function forgetKey(): void {
  try {
    sessionStorage.removeItem(STORAGE_KEY);
  } catch {
    /* nothing stored */
  }
}
