// Metering of open event streams: one connection-minute per started minute of each stream.
// A minute counts as soon as it starts (a 61 s stream is 2 minutes). One shared tick reports the
// minutes every open stream has started since the last report; nothing runs per connection.
import type { Logger } from '../core/logger.ts';

/** Where usage goes; the HTTP layer maps it onto its usage records (unit connection-minute). */
export interface ConnectionMinuteSink<T> {
  /** `minutes` more started minutes of the stream described by `tag`, observed at `atMs` */
  record(tag: T, minutes: number, atMs: number): void;
}

export interface MeteredStream {
  /** Reports the minutes started up to now and stops metering; safe to call more than once. */
  close(): void;
}

export interface ConnectionMeterOptions<T> {
  readonly sink: ConnectionMinuteSink<T>;
  readonly now?: () => number;
  /** how often started minutes are reported; a minute is recorded at most this late */
  readonly tickMs?: number;
  readonly log?: Logger;
}

const MINUTE_MS = 60_000;

interface Open<T> {
  readonly tag: T;
  readonly openedAtMs: number;
  counted: number;
}

export class ConnectionMeter<T> {
  private readonly open = new Set<Open<T>>();
  private timer: NodeJS.Timeout | null = null;
  private readonly now: () => number;

  constructor(private readonly options: ConnectionMeterOptions<T>) {
    this.now = options.now ?? Date.now;
  }

  start(): this {
    this.timer ??= setInterval(() => this.tick(), this.options.tickMs ?? 5_000).unref();
    return this;
  }

  /** Starts metering one stream; its first minute is recorded at once. */
  openStream(tag: T): MeteredStream {
    const entry: Open<T> = { tag, openedAtMs: this.now(), counted: 0 };
    this.open.add(entry);
    this.settle(entry, entry.openedAtMs);
    return {
      close: () => {
        if (!this.open.delete(entry)) return;
        this.settle(entry, this.now());
      },
    };
  }

  get openCount(): number {
    return this.open.size;
  }

  /** The open streams whose tag matches, oldest first (the account page lists a key's own). */
  openWhere(predicate: (tag: T) => boolean): Array<{ tag: T; openedAtMs: number }> {
    const found: Array<{ tag: T; openedAtMs: number }> = [];
    // a Set iterates in insertion order, which is the order the streams opened in
    for (const entry of this.open)
      if (predicate(entry.tag)) found.push({ tag: entry.tag, openedAtMs: entry.openedAtMs });
    return found;
  }

  tick(nowMs = this.now()): void {
    for (const entry of this.open) this.settle(entry, nowMs);
  }

  /** Reports what is open so far and stops the timer (streams still open are not closed). */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.tick();
  }

  private settle(entry: Open<T>, nowMs: number): void {
    const started = Math.floor(Math.max(0, nowMs - entry.openedAtMs) / MINUTE_MS) + 1;
    const due = started - entry.counted;
    if (due <= 0) return;
    entry.counted = started;
    try {
      this.options.sink.record(entry.tag, due, nowMs);
    } catch (err) {
      this.options.log?.error({ err }, 'connection-minute record failed');
    }
  }
}
