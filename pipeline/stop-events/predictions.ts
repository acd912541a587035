// The predictions a trip update made for one stop, kept small until the stop is passed: one
// sample per 30 s of observation, in the horizon bin it was made in, run-length coded by
// predicted time (a feed repeats the same prediction poll after poll). When the stop event is
// written, each sample becomes an error against the actual arrival; nothing of every poll is kept.
import { PREDICTION_HORIZONS, type PredictionError, type PredictionHorizon } from '../../core/types.ts';

/** At most one sample per stop per this much observed time: a 10 s feed and a 30 s feed weigh alike. */
export const SAMPLE_EVERY_MS = 30_000;

/** Upper bounds (exclusive) of the horizon bins, seconds before the predicted arrival. */
const BIN_ENDS_S = [180, 360, 720, 1_800] as const;

/** The bin of a prediction made `horizonMs` before the time it predicts, or -1 outside 0–30 min. */
export function horizonBin(horizonMs: number): number {
  if (!(horizonMs >= 0)) return -1;
  const s = horizonMs / 1000;
  for (let i = 0; i < BIN_ENDS_S.length; i++) if (s < BIN_ENDS_S[i]!) return i;
  return -1;
}

export class PredictionSamples {
  /** [bin, predicted ms, samples] triples, in the order seen */
  private readonly runs: number[] = [];
  private lastSlot = Number.NEGATIVE_INFINITY;

  /** Adds what a poll at `observedMs` predicted; ignored within the same 30 s slot or outside 0–30 min. */
  add(observedMs: number, predictedMs: number): void {
    const slot = Math.floor(observedMs / SAMPLE_EVERY_MS);
    if (slot <= this.lastSlot) return;
    const bin = horizonBin(predictedMs - observedMs);
    if (bin < 0) return;
    this.lastSlot = slot;
    const n = this.runs.length;
    if (n > 0 && this.runs[n - 3] === bin && this.runs[n - 2] === predictedMs) this.runs[n - 1]!++;
    else this.runs.push(bin, predictedMs, 1);
  }

  get size(): number {
    return this.runs.length / 3;
  }

  /** Each sample's error against the actual arrival (actual − predicted, whole seconds), grouped. */
  errors(actualMs: number): PredictionError[] {
    const grouped = new Map<string, PredictionError>();
    for (let i = 0; i < this.runs.length; i += 3) {
      const horizon = PREDICTION_HORIZONS[this.runs[i]!] as PredictionHorizon;
      const error_s = Math.round((actualMs - this.runs[i + 1]!) / 1000);
      const key = `${horizon}|${error_s}`;
      const seen = grouped.get(key);
      if (seen) seen.samples += this.runs[i + 2]!;
      else grouped.set(key, { horizon, error_s, samples: this.runs[i + 2]! });
    }
    return [...grouped.values()];
  }
}
