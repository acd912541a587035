// Time is injected so retry schedules measured in hours can be tested in milliseconds.

export type TimerHandle = { readonly id: number } | ReturnType<typeof setTimeout>;

export interface Clock {
  /** epoch milliseconds */
  now(): number;
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const handle = setTimeout(fn, ms);
    // a pending retry hours away must not keep the process alive on shutdown
    handle.unref?.();
    return handle;
  },
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};
