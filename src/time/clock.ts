/** A scheduled callback that can be cancelled. */
export interface Timer {
  cancel(): void;
}

/**
 * Time as holdshelf sees it: milliseconds since the epoch, and timers. Rules
 * are tested with a fake clock that moves only when a test says so.
 */
export interface Clock {
  now(): number;
  /** Calls `callback` once, `delayMs` from now. */
  setTimer(delayMs: number, callback: () => void): Timer;
}

// Node's timers overflow past 2^31-1 ms (about 24.8 days) and fire at once;
// a longer wait is re-armed when the shorter one fires.
const maxTimerDelayMs = 2147483647;

/** The wall clock and Node's timers. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(delayMs, callback) {
    const dueAt = Date.now() + delayMs;
    let handle: NodeJS.Timeout;
    const arm = (delay: number): void => {
      handle = setTimeout(() => {
        const remaining = dueAt - Date.now();
        if (remaining > 0) arm(remaining);
        else callback();
      }, Math.min(Math.max(delay, 0), maxTimerDelayMs));
    };
    arm(delayMs);
    return { cancel: () => clearTimeout(handle) };
  },
};
