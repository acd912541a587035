// The demo city sleeps from about 01:30 to 05:00 local time (later on holidays). Tests that run
// its simulator on the real clock and need vehicles and trips run it on the city's last noon
// instead, whatever the hour, with allow_old_snapshots on their feeds: the snapshots are as old as
// that shift.
import { wallClock } from '../../core/dates.ts';
import { DEMO_TIMEZONE } from '../../fixtures/demo-network.ts';

/** `now` for the simulator, and how far behind the real clock it runs (ms) */
export function demoNoonClock(): { now: () => number; shiftMs: number } {
  const local = wallClock(new Date(), DEMO_TIMEZONE);
  const shiftMs = ((local.minutes - 12 * 60 + 1440) % 1440) * 60_000;
  return { now: () => Date.now() - shiftMs, shiftMs };
}
