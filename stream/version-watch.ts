// Turns "a version number moved" into change notifications for the hub. The LiveView moves a
// slice's version when its content changes, also where no event is published (a freshness
// verdict, an alert pruned), so one shared timer compares versions instead of each writer having
// to call the hub: a burst of moves between two checks is one notification, and the hub's
// coalescing window merges what is left.
import type { Logger } from '../core/logger.ts';

export interface VersionSource {
  /** the change channel notified when `read()` returns something new */
  readonly channel: string;
  read(): number | string;
}

export interface VersionWatchOptions {
  readonly sources: readonly VersionSource[];
  /** called with the channels whose version moved since the last check */
  readonly onChange: (channels: readonly string[]) => void;
  /** how often versions are compared (one timer for all sources) */
  readonly intervalMs?: number;
  readonly log?: Logger;
}

export class VersionWatch {
  private readonly seen: Array<number | string | undefined>;
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly options: VersionWatchOptions) {
    // the first check only records where the versions stand
    this.seen = options.sources.map((source) => this.safeRead(source));
  }

  start(): this {
    this.timer ??= setInterval(() => this.check(), this.options.intervalMs ?? 100).unref();
    return this;
  }

  /** Compares every source now; returns the channels that moved (also passed to onChange). */
  check(): string[] {
    const moved: string[] = [];
    this.options.sources.forEach((source, i) => {
      const version = this.safeRead(source);
      if (version === undefined || version === this.seen[i]) return;
      this.seen[i] = version;
      if (!moved.includes(source.channel)) moved.push(source.channel);
    });
    if (moved.length) this.options.onChange(moved);
    return moved;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private safeRead(source: VersionSource): number | string | undefined {
    try {
      return source.read();
    } catch (err) {
      // a failing source must not stop the others (or the timer)
      this.options.log?.error({ err }, `version of ${source.channel} could not be read`);
      return undefined;
    }
  }
}
