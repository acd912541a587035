// A meter that keeps what it is told, for tests that assert what was metered.
import type { Meter, UsageRecord } from '../../accounts/meter.ts';

export class MemoryMeter implements Meter {
  readonly records: UsageRecord[] = [];
  record(usage: UsageRecord): void {
    this.records.push(usage);
  }
  async flush(): Promise<void> {}
  async close(): Promise<void> {}
}
