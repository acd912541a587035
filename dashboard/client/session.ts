// The signed-in session and the GET every section makes with its key. A 401 anywhere ends the
// session (main.ts decides how); metered answers update the rate-limit window shown.
import { API, request, type ApiResult } from './api.ts';
import { renderWindow } from './sections.ts';
import type { Account, Usage } from './types.ts';

export interface Session {
  key: string | null;
  /** bumped by every sign-in and sign-out: answers for an older generation are dropped */
  generation: number;
  account: Account | null;
  busy: boolean;
  timer: ReturnType<typeof setInterval> | null;
  ticks: number;
  usage: Usage | null;
  /** called with the server's message when it refused the key */
  onRefused: (message: string) => void;
}

export const session: Session = {
  key: null,
  generation: 0,
  account: null,
  busy: false,
  timer: null,
  ticks: 0,
  usage: null,
  onRefused: () => {},
};

/** A GET for the signed-in key; null when the session ended meanwhile or the key was refused. */
export async function call<T = unknown>(path: string): Promise<ApiResult<T> | null> {
  const generation = session.generation;
  const url = /^(https?:)?\//.test(path) ? path : API + path;
  const result = await request<T>(url, session.key ?? '');
  if (generation !== session.generation) return null;
  if (result.status === 401) {
    session.onRefused(result.message ?? '');
    return null;
  }
  noteWindow(result.headers);
  return result;
}

/** Metered answers carry the window in the RateLimit header ("5m";r=<left>;t=<seconds>). */
function noteWindow(headers: Headers | null): void {
  const account = session.account;
  const value = headers?.get('RateLimit');
  const match = value ? /;r=(\d+);t=(\d+)/.exec(value) : null;
  if (!account || !match) return;
  account.window = { limit: account.window.limit, remaining: Number(match[1]), reset_seconds: Number(match[2]) };
  renderWindow(account.window);
}
