// Group commit for attempt verdicts: attempts finishing together share one transaction,
// so the audit costs one write per batch rather than one per delivery.
import type { Db } from '../store/db.ts';
import { recordVerdicts, type AttemptVerdict } from './delivery-store.ts';

const MAX_BATCH = 200;
const RETRY_WRITE_MS = 1_000;

interface Waiting {
  verdict: AttemptVerdict;
  done: () => void;
}

export class VerdictRecorder {
  private buffer: Waiting[] = [];
  private flushing: Promise<void> | null = null;
  private giveUp = false;
  /** endpoints whose failing_since is known to be NULL */
  private readonly knownClear = new Set<string>();

  constructor(
    private readonly db: Db,
    private readonly now: () => number,
    private readonly onError: (err: unknown) => void,
    private readonly onDisabled: (endpointIds: string[]) => void = () => undefined,
  ) {}

  /** Resolves once the verdict is committed (or abandoned at shutdown after a failed write). */
  add(verdict: AttemptVerdict): Promise<void> {
    return new Promise((done) => {
      this.buffer.push({ verdict, done });
      this.kick();
    });
  }

  /** After a failed write at shutdown, stop retrying: the rows stay in flight and start-up recovery retries them. */
  abandonOnFailure(): void {
    this.giveUp = true;
  }

  async idle(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  private kick(): void {
    if (this.flushing) return;
    this.flushing = this.loop().finally(() => {
      this.flushing = null;
      if (this.buffer.length) this.kick();
    });
  }

  private async loop(): Promise<void> {
    while (this.buffer.length) {
      const batch = this.buffer.splice(0, MAX_BATCH);
      for (;;) {
        try {
          const disabled = await recordVerdicts(
            this.db,
            batch.map((w) => w.verdict),
            Math.round(this.now()),
            this.knownClear,
          );
          if (disabled.length) this.onDisabled(disabled);
          break;
        } catch (err) {
          this.onError(err);
          if (this.giveUp) break;
          await new Promise((r) => setTimeout(r, RETRY_WRITE_MS).unref());
        }
      }
      for (const w of batch) w.done();
    }
  }
}
