// The event source every bench server shares: `rate` events per second, each stamped with its
// scheduled publish time in epoch microseconds. When the server falls behind, every due event is
// published at once (stamped with when it was due), so a saturated server shows its queueing in
// the latency instead of silently publishing less.
import { writeFileSync } from 'node:fs';

export interface BenchEvent {
  seq: number;
  /** scheduled publish time, epoch microseconds */
  ts: number;
}

export function benchEnv(): { rate: number; eventBytes: number } {
  const rate = Number(process.env.FANOUT_RATE ?? 10);
  const eventBytes = Number(process.env.FANOUT_EVENT_BYTES ?? 300);
  if (!(rate > 0) || !(eventBytes >= 100)) throw new Error('FANOUT_RATE > 0 and FANOUT_EVENT_BYTES >= 100 required');
  return { rate, eventBytes };
}

/** Padding that brings a frame built by `build` to about `targetBytes`. */
export function padFor(targetBytes: number, build: (pad: string) => string): string {
  const bare = Buffer.byteLength(build(''));
  return 'x'.repeat(Math.max(0, targetBytes - bare));
}

export function epochMicros(): number {
  return Math.round((performance.timeOrigin + performance.now()) * 1000);
}

/**
 * Publishes from SIGUSR1 on (the runner sends it once every connection is open, so a server
 * that saturates is measured at the full connection count instead of starving its accept loop),
 * or at once when FANOUT_START_ON_SIGNAL is not 1.
 */
export function startPublisher(rate: number, publish: (batch: BenchEvent[]) => void): () => void {
  let startUs = 0;
  const intervalUs = 1e6 / rate;
  let seq = 0;
  let timer: NodeJS.Timeout | null = null;
  let stopped = false;
  const begin = () => {
    if (startUs || stopped) return;
    startUs = epochMicros();
    fire();
  };
  const fire = () => {
    if (stopped) return;
    const now = epochMicros();
    const due: BenchEvent[] = [];
    while (startUs + seq * intervalUs <= now) {
      due.push({ seq, ts: Math.round(startUs + seq * intervalUs) });
      seq++;
    }
    if (due.length) publish(due);
    const wait = (startUs + seq * intervalUs - epochMicros()) / 1000;
    timer = setTimeout(fire, Math.max(0, wait));
  };
  if (process.env.FANOUT_START_ON_SIGNAL === '1') process.once('SIGUSR1', begin);
  else begin();
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
  };
}

/** Prints the port (and the path clients must request, when not the default) and exits cleanly on SIGTERM. */
export function announce(port: number, stop: () => void, path?: string): void {
  process.stdout.write(path ? `ready ${port} ${path}\n` : `ready ${port}\n`);
  const exit = () => {
    stop();
    process.exit(0);
  };
  process.on('SIGTERM', exit);
  process.on('SIGINT', exit);
}

/**
 * The server's side of the latency: per event, from its due time to the moment the server's
 * write to the last socket returned (the bytes are in the kernel), so the load client's own
 * queueing is left out. Events due in the warm-up (FANOUT_WARMUP_S from the first event) are not
 * counted. Written as JSON to FANOUT_SERVER_TRACE at exit.
 */
export class WriteTrace {
  private readonly samplesMs: number[] = [];
  private firstDueUs = 0;
  private readonly warmupUs = Number(process.env.FANOUT_WARMUP_S ?? 3) * 1e6;

  /** @param fileVar the environment variable naming the file written at exit (the broker hop: FANOUT_HOP_TRACE) */
  constructor(private readonly fileVar = 'FANOUT_SERVER_TRACE') {}

  record(dueUs: number, writtenUs: number): void {
    if (this.firstDueUs === 0) this.firstDueUs = dueUs;
    if (dueUs - this.firstDueUs >= this.warmupUs) this.samplesMs.push((writtenUs - dueUs) / 1000);
  }

  save(): void {
    const file = process.env[this.fileVar];
    if (!file || this.samplesMs.length === 0) return;
    const sorted = [...this.samplesMs].sort((a, b) => a - b);
    const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
    writeFileSync(
      file,
      JSON.stringify({ events: sorted.length, p50_ms: at(0.5), p99_ms: at(0.99), max_ms: sorted.at(-1) }),
    );
  }
}
