// An edge's link to the ingest node: where it is (ingest.url from the config, else the address
// the ingest node announces in the broker) and whether it answers. The forwarder asks for the
// address on every forwarded request; a probe (HEAD /status.json, which the ingest node serves
// from memory and neither meters nor counts) runs every few seconds, so the edge's own status
// page can say whether history paths would answer here, with the broker up or down.
import { Agent, request as httpRequest } from 'node:http';
import type { Logger } from '../core/logger.ts';

export interface IngestLinkOptions {
  /** ingest.url (no trailing slash), or null */
  configured: string | null;
  /** the broker's announcement, read at most once a second; absent: none */
  announced?: () => Promise<string | null>;
  /** default 2 s */
  probeEveryMs?: number;
  /** a probe with no answer within this counts as unreachable (default 1 s) */
  probeTimeoutMs?: number;
  now?: () => number;
  log?: Logger;
}

export interface IngestLinkState {
  url: string | null;
  /** where the url came from */
  source: 'config' | 'broker' | null;
  /** null before the first probe */
  reachable: boolean | null;
  checkedMs: number | null;
  lastOkMs: number | null;
  /** why the last probe failed; null after a good one */
  error: string | null;
  latencyMs: number | null;
}

export const PROBE_PATH = '/status.json';
const ANNOUNCED_WAIT_MS = 500;

function readWithin<T>(read: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(fallback), ms);
  });
  return Promise.race([read, late]).finally(() => clearTimeout(timer));
}

export class IngestLink {
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 2 });
  private readonly now: () => number;
  private timer: NodeJS.Timeout | null = null;
  private probing: Promise<void> | null = null;
  private differing: string | null = null;
  private current: IngestLinkState;

  constructor(private readonly options: IngestLinkOptions) {
    this.now = options.now ?? Date.now;
    this.current = {
      url: options.configured,
      source: options.configured ? 'config' : null,
      reachable: null,
      checkedMs: null,
      lastOkMs: null,
      error: null,
      latencyMs: null,
    };
  }

  get state(): IngestLinkState {
    return this.current;
  }

  start(): this {
    void this.probe();
    this.timer ??= setInterval(() => void this.probe(), this.options.probeEveryMs ?? 2_000);
    this.timer.unref();
    return this;
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.probing;
    this.agent.destroy();
  }

  /** The ingest node's base URL now: the configured one, else the announced one (null: none known). */
  async target(): Promise<string | null> {
    const configured = this.options.configured;
    if (configured) {
      void this.compareAnnounced(configured);
      return configured;
    }
    const known = this.current.source === 'broker' ? this.current.url : null;
    let url: string | null = null;
    try {
      // a read caught by the broker going down waits for its return: the last address meanwhile
      url = (await readWithin(this.options.announced?.() ?? Promise.resolve(null), ANNOUNCED_WAIT_MS, known)) ?? null;
    } catch (err) {
      this.options.log?.warn({ err }, 'the announced ingest address could not be read');
      url = known;
    }
    if (url !== this.current.url) this.current = { ...this.current, url, source: url ? 'broker' : null };
    return url;
  }

  /** Checks the ingest node answers now (one probe at a time; a caller arriving meanwhile shares it). */
  probe(): Promise<void> {
    this.probing ??= this.probeOnce().finally(() => {
      this.probing = null;
    });
    return this.probing;
  }

  private async probeOnce(): Promise<void> {
    const url = await this.target();
    const started = this.now();
    if (!url) {
      this.current = {
        ...this.current,
        reachable: false,
        checkedMs: started,
        error: 'no address: ingest.url is not set and the ingest node has not announced one in the broker',
        latencyMs: null,
      };
      return;
    }
    const error = await this.head(new URL(PROBE_PATH, url));
    const at = this.now();
    this.current = {
      ...this.current,
      reachable: error === null,
      checkedMs: at,
      lastOkMs: error === null ? at : this.current.lastOkMs,
      error,
      latencyMs: error === null ? at - started : null,
    };
  }

  /** null when the ingest node answered (below 500), else why not. */
  private head(url: URL): Promise<string | null> {
    const timeoutMs = this.options.probeTimeoutMs ?? 1_000;
    return new Promise((resolve) => {
      const req = httpRequest(url, { method: 'HEAD', agent: this.agent, timeout: timeoutMs }, (res) => {
        res.resume();
        const status = res.statusCode ?? 0;
        resolve(status > 0 && status < 500 ? null : `HTTP ${status} from ${url.origin}`);
      });
      req.on('timeout', () => req.destroy(new Error(`no answer from ${url.origin} within ${timeoutMs} ms`)));
      req.on('error', (err: NodeJS.ErrnoException) =>
        resolve(err.code ? `${err.code} connecting to ${url.origin}` : err.message),
      );
      req.end();
    });
  }

  /** A configured address other than the announced one is most likely a mistake: said once per address. */
  private async compareAnnounced(configured: string): Promise<void> {
    const announced = await this.options.announced?.().catch(() => null);
    if (!announced || announced === configured || announced === this.differing) return;
    this.differing = announced;
    this.options.log?.warn(
      { configured, announced },
      'ingest.url differs from the address the ingest node announces; the configured one is used',
    );
  }
}
