// A clock for tests of retry schedules measured in hours (webhooks/clock.ts).
import type { Clock, TimerHandle } from '../../webhooks/clock.ts';

interface ManualTimer {
  id: number;
  due: number;
  fn: () => void;
}

/** A clock that only moves when told to; timers fire in due order during `advance`. */
export class ManualClock implements Clock {
  private current: number;
  private nextId = 1;
  private timers: ManualTimer[] = [];

  constructor(startMs: number = Date.now()) {
    this.current = startMs;
  }

  now(): number {
    return this.current;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const timer = { id: this.nextId++, due: this.current + Math.max(0, ms), fn };
    this.timers.push(timer);
    return { id: timer.id };
  }

  clearTimeout(handle: TimerHandle): void {
    const id = (handle as { id: number }).id;
    this.timers = this.timers.filter((t) => t.id !== id);
  }

  /** Moves time forward by `ms`, firing each timer that falls due, at its own due time. */
  advance(ms: number): void {
    const target = this.current + ms;
    for (;;) {
      const due = this.timers.filter((t) => t.due <= target).sort((a, b) => a.due - b.due || a.id - b.id)[0];
      if (!due) break;
      this.timers = this.timers.filter((t) => t.id !== due.id);
      this.current = Math.max(this.current, due.due);
      due.fn();
    }
    this.current = target;
  }

  get pendingTimers(): number {
    return this.timers.length;
  }
}
