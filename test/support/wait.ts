import { createServer } from 'node:net';

// The two waits every integration test needs, defined once.

export interface UntilOptions {
  /** how long to keep asking (default 30 s: generous, since CI machines run three files at a time) */
  timeoutMs?: number;
  /** pause between two asks (default 25 ms) */
  intervalMs?: number;
  /** run before each pause: a test that drives a clock or a loop advances it here */
  step?: () => void;
}

type Truthy<T> = Exclude<T, false | null | undefined | 0 | ''>;

/**
 * Asks `probe` until it answers something truthy and returns that answer; throws
 * `timed out waiting for <what>` once the time is up.
 */
export async function until<T>(
  what: string,
  probe: () => T | Promise<T>,
  options: UntilOptions | number = {},
): Promise<Truthy<T>> {
  const { timeoutMs = 30_000, intervalMs = 25, step } = typeof options === 'number' ? { timeoutMs: options } : options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value as Truthy<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    step?.();
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** A port the kernel just handed out as ephemeral, free again. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}
