// What an error may say where anyone can read it. Feed and schedule errors carry the operator's
// URLs (tokens in query strings, user:password@), local paths and OS messages; the status page,
// /status.json, its stream and the API's source freshness show them through publicText() and
// nothing else. The full text stays in the operator log and the admin `status`.
import { fileURLToPath } from 'node:url';

/** What a local file or folder is called in public text. */
export const LOCAL_FILE = '(local file)';
const HIDDEN = '(hidden)';

/** OS and HTTP-client error codes in words; a code not listed is shown as it is (it names no secret). */
const CODE_WORDS: Readonly<Record<string, string>> = {
  ENOENT: 'file not found',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EISDIR: 'a folder where a file was expected',
  ENOTDIR: 'not a folder',
  EMFILE: 'too many open files',
  ENFILE: 'too many open files',
  ENOSPC: 'disk full',
  EIO: 'read error',
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ECONNABORTED: 'connection aborted',
  EPIPE: 'connection closed',
  ETIMEDOUT: 'connection timed out',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  EADDRNOTAVAIL: 'address not available',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  UND_ERR_HEADERS_TIMEOUT: 'no response headers in time',
  UND_ERR_BODY_TIMEOUT: 'response body stalled',
  UND_ERR_SOCKET: 'connection closed by the server',
  UND_ERR_CLOSED: 'connection closed',
  CERT_HAS_EXPIRED: 'TLS certificate expired',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'TLS certificate not trusted',
  SELF_SIGNED_CERT_IN_CHAIN: 'TLS certificate not trusted',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'TLS certificate not trusted',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'TLS certificate not trusted',
  ERR_TLS_CERT_ALTNAME_INVALID: 'TLS certificate is for another host',
};

/**
 * Node's system errors: `ENOENT: no such file or directory, stat '/path'` (a path, sometimes two),
 * a bare code, or a code after its syscall (`connect ECONNREFUSED 10.0.0.1:80`).
 */
const SYSTEM_ERROR = new RegExp(
  String.raw`\b(?:(?:connect|getaddrinfo|read|write|open|stat|lstat|scandir|opendir|mkdir|access|spawn)\s+)?(E[` +
    String.raw`A-Z][A-Z0-9_]+|UND_ERR_[A-Z_]+|CERT_[A-Z_]+|[A-Z_]*_CERT[A-Z_]*)\b(?::[^,\n]*,\s*[a-z]+(?:\s+'[^']` +
    String.raw`*')?(?:\s*->\s*'[^']*')?)?`,
  'g',
);
/** Anything with a scheme; what ends it is whitespace, a quote or an angle bracket. */
const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]*:\/\/[^\s'"<>]*/gi;
/** An absolute (or home-, dot-relative) path in quotes, or after a space, a bracket, `=` or the start. */
const QUOTED_PATH = /(['"`])(?:~?\/|\.\.?\/|[A-Za-z]:\\)[^'"`\n]*\1/g;
const BARE_PATH = /(^|[\s([=])(?:~|\.\.?)?\/(?=[^\s/])[^\s'"<>,;)\]]*/g;
const WINDOWS_PATH = /(^|[\s([=])[A-Za-z]:\\[^\s'"<>,;)\]]*/g;
/** what undici says about a URL with user:password@ (it refuses such URLs) */
const CREDENTIALS_REFUSED = /Request cannot be constructed from a URL that includes credentials(?::\s*\S+)?/g;
const TRAILING = /[.,:;!?)\]]+$/;

/**
 * A URL as it may be shown: scheme, host, port and path, without user:password@, query string or
 * fragment. A file:// URL names a local path: LOCAL_FILE. Text that does not parse: '(hidden)'.
 */
export function publicUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return HIDDEN;
  }
  if (parsed.protocol === 'file:') return LOCAL_FILE;
  if (parsed.host === '') return HIDDEN;
  return `${parsed.protocol}//${parsed.host}${parsed.pathname === '/' ? '' : parsed.pathname}`;
}

/** The forms a configured value may take inside an error message, longest first. */
function forms(secret: string): string[] {
  const out = new Set([secret]);
  try {
    const u = new URL(secret);
    out.add(u.href);
    if (u.protocol === 'file:') out.add(fileURLToPath(u));
    try {
      out.add(decodeURIComponent(u.href));
    } catch {
      // not percent-decodable: the forms above stay
    }
  } catch {
    // not a URL: a path or a header value, matched as written
  }
  return [...out].filter((s) => s.length >= 3).sort((a, b) => b.length - a.length);
}

function replaceAll(text: string, find: string, by: string): string {
  return text.split(find).join(by);
}

/** Configured values an error message may repeat, so they are replaced whatever its wording. */
export interface Secrets {
  /** URLs (shown through publicUrl) and local paths (shown as LOCAL_FILE): a feed's url, a schedule's source */
  readonly locations?: readonly string[];
  /** values shown as '(hidden)': request header values */
  readonly values?: readonly string[];
}

const isUrl = (s: string) => /^[a-z][a-z0-9+.-]*:\/\//i.test(s);

/**
 * An error message fit for a public page: every URL through publicUrl(), local paths and OS
 * errors in words ("file not found", "connection refused"), and every configured value in
 * `secrets` replaced wherever it appears, whatever the message's own wording. null stays null.
 */
export function publicText(text: string, secrets?: Secrets): string;
export function publicText(text: string | null, secrets?: Secrets): string | null;
export function publicText(text: string | null, secrets: Secrets = {}): string | null {
  if (text === null) return null;
  let out = text;
  const known: Array<[string, string]> = [
    ...(secrets.locations ?? []).map((s): [string, string] => [s, isUrl(s) ? publicUrl(s) : LOCAL_FILE]),
    ...(secrets.values ?? []).map((s): [string, string] => [s, HIDDEN]),
  ];
  for (const [secret, shown] of known) if (secret) for (const form of forms(secret)) out = replaceAll(out, form, shown);
  out = out.replace(CREDENTIALS_REFUSED, 'the URL holds a user name and password, which the HTTP client refuses');
  out = out.replace(
    SYSTEM_ERROR,
    (match: string, code: string) => CODE_WORDS[code] ?? (match.includes("'") ? code : match),
  );
  out = out.replace(URL_IN_TEXT, (url) => {
    const tail = TRAILING.exec(url)?.[0] ?? '';
    return publicUrl(url.slice(0, url.length - tail.length)) + tail;
  });
  out = out.replace(QUOTED_PATH, LOCAL_FILE);
  out = out.replace(BARE_PATH, (_match: string, before: string) => `${before}${LOCAL_FILE}`);
  out = out.replace(WINDOWS_PATH, (_match: string, before: string) => `${before}${LOCAL_FILE}`);
  return out;
}
