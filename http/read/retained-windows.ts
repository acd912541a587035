// The retained window of each mode, reused for a few seconds. Finding it scans the observations
// of the days not finalized yet (about as long as a year's weekly rollup on a large agency),
// while it only moves when a new service date is first seen or a day is finalized.
import { performance } from 'node:perf_hooks';
import type { Mode } from '../../core/types.ts';
import type { RetainedWindow } from '../../store/reliability/index.ts';

export class RetainedWindows {
  private readonly cached = new Map<Mode, { atMs: number; value: Promise<RetainedWindow | null> }>();

  /** `maxAgeMs` 0: every call loads */
  constructor(
    private readonly load: (mode: Mode) => Promise<RetainedWindow | null>,
    private readonly maxAgeMs: number,
    private readonly clock: () => number = () => performance.now(),
  ) {}

  /** Concurrent callers share one load; a failed load is not kept. */
  get(mode: Mode): Promise<RetainedWindow | null> {
    const now = this.clock();
    const hit = this.cached.get(mode);
    if (hit && now - hit.atMs < this.maxAgeMs) return hit.value;
    const value = this.load(mode);
    this.cached.set(mode, { atMs: now, value });
    value.catch(() => {
      if (this.cached.get(mode)?.value === value) this.cached.delete(mode);
    });
    return value;
  }
}
