// One HTTP attempt. The socket goes to the address the SSRF check approved (the `lookup`
// hook answers with it), so a DNS answer that changes after the check cannot redirect us.
import http from 'node:http';
import https from 'node:https';
import { performance } from 'node:perf_hooks';
import type { Clock } from './clock.ts';
import type { AttemptResult } from './retry-policy.ts';
import { parseRetryAfter } from './retry-policy.ts';
import type { CheckedTarget } from './ssrf.ts';

export interface Agents {
  http: http.Agent;
  https: https.Agent;
}

export function createAgents(): Agents {
  // keep-alive: a busy endpoint reuses its connections instead of a handshake per delivery
  return {
    http: new http.Agent({ keepAlive: true, keepAliveMsecs: 10_000 }),
    https: new https.Agent({ keepAlive: true, keepAliveMsecs: 10_000 }),
  };
}

export interface SendOptions {
  target: CheckedTarget;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  clock: Clock;
  agents: Agents;
}

export interface InFlightAttempt {
  result: Promise<AttemptResult>;
  /** cuts the attempt short (shutdown); its outcome becomes `interrupted` */
  interrupt(): void;
}

const KEEP_BODY_CHARS = 200;

class AttemptStop extends Error {
  constructor(
    readonly outcome: 'timeout' | 'interrupted',
    message: string,
  ) {
    super(message);
  }
}

function describeNetworkError(err: NodeJS.ErrnoException): string {
  return err.code ? `${err.code}: ${err.message}` : err.message;
}

export function sendAttempt(options: SendOptions): InFlightAttempt {
  const { target, clock } = options;
  const started = performance.now();
  const elapsed = () => Math.round((performance.now() - started) * 100) / 100;
  let request: http.ClientRequest | undefined;
  let interrupt: () => void = () => undefined;

  const result = new Promise<AttemptResult>((resolve) => {
    let settled = false;
    const finish = (value: AttemptResult) => {
      if (settled) return;
      settled = true;
      clock.clearTimeout(timer);
      resolve(value);
    };
    const fail = (err: Error) => {
      const outcome = err instanceof AttemptStop ? err.outcome : 'network_error';
      finish({
        outcome,
        status_code: null,
        latency_ms: elapsed(),
        retry_after_ms: null,
        error: err instanceof AttemptStop ? err.message : describeNetworkError(err),
      });
    };
    const stop = (err: AttemptStop) => {
      request?.destroy(err);
      fail(err);
    };
    const timer = clock.setTimeout(() => {
      stop(new AttemptStop('timeout', `no complete response within ${options.timeoutMs} ms`));
    }, options.timeoutMs);
    interrupt = () => stop(new AttemptStop('interrupted', 'attempt interrupted by shutdown; it will be retried'));

    const isHttps = target.url.protocol === 'https:';
    const body = Buffer.from(options.body, 'utf8');
    request = (isHttps ? https : http).request({
      method: 'POST',
      protocol: target.url.protocol,
      host: target.url.hostname.replace(/^\[|\]$/g, ''),
      port: target.url.port || (isHttps ? 443 : 80),
      path: `${target.url.pathname}${target.url.search}`,
      agent: isHttps ? options.agents.https : options.agents.http,
      headers: {
        ...options.headers,
        'content-type': 'application/json',
        'content-length': String(body.length),
        'user-agent': 'transit-api-webhooks/1',
      },
      // connect to the checked address; TLS still verifies the certificate against the host name
      lookup: ((_host: string, opts: { all?: boolean }, cb: (...args: unknown[]) => void) => {
        if (opts?.all) cb(null, [{ address: target.address, family: target.family }]);
        else cb(null, target.address, target.family);
      }) as never,
    });
    request.on('error', fail);
    request.on('response', (res) => {
      const status = res.statusCode ?? 0;
      let kept = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (kept.length < KEEP_BODY_CHARS) kept += chunk.slice(0, KEEP_BODY_CHARS - kept.length);
      });
      res.on('error', fail);
      res.on('end', () => {
        // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is replaced
        const excerpt = kept.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
        const base = { status_code: status, latency_ms: elapsed() };
        if (status >= 200 && status < 300) {
          finish({ ...base, outcome: 'succeeded', error: null, retry_after_ms: null });
        } else if (status === 410) {
          finish({ ...base, outcome: 'gone', error: 'HTTP 410 Gone: the endpoint is disabled', retry_after_ms: null });
        } else if (status >= 300 && status < 400) {
          const location = res.headers.location;
          finish({
            ...base,
            outcome: 'redirect',
            retry_after_ms: null,
            ...(location ? { location } : {}),
            error:
              `HTTP ${status} redirect${location ? ` to ${location.slice(0, 300)}` : ''} not followed (webhook ` +
              `targets must answer directly)`,
          });
        } else {
          const retryAfter =
            status === 429 || status === 503 ? parseRetryAfter(res.headers['retry-after'], clock.now()) : null;
          finish({
            ...base,
            outcome: 'http_error',
            retry_after_ms: retryAfter,
            error: `HTTP ${status}${excerpt ? `: ${excerpt}` : ''}`,
          });
        }
      });
    });
    request.end(body);
  });
  return { result, interrupt: () => interrupt() };
}
