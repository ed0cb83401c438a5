/** A scheduled callback that can be cancelled. */
export interface Timer {
  cancel(): void;
}

/**
 * Time as holdshelf sees it: milliseconds, and timers. Rules are tested with
 * a fake clock that moves only when a test says so.
 */
export interface Clock {
  /** Milliseconds since this clock's origin: the epoch for systemClock, so its readings are timestamps. */
  now(): number;
  /** Calls `callback` once, `delayMs` from now. */
  setTimer(delayMs: number, callback: () => void): Timer;
}

// Node's timers overflow past 2^31-1 ms (about 24.8 days) and fire at once;
// a longer wait is re-armed when the shorter one fires.
const maxTimerDelayMs = 2147483647;

/** Node's timers, re-armed past their cap, measured by `now`. */
function nodeClock(now: () => number): Clock {
  return {
    now,
    setTimer(delayMs, callback) {
      const dueAt = now() + delayMs;
      let handle: NodeJS.Timeout;
      const arm = (delay: number): void => {
        handle = setTimeout(
          () => {
            const remaining = dueAt - now();
            if (remaining > 0) arm(remaining);
            else callback();
          },
          Math.min(Math.max(delay, 0), maxTimerDelayMs),
        );
      };
      arm(delayMs);
      return { cancel: () => clearTimeout(handle) };
    },
  };
}

/** The wall clock and Node's timers: for times that are stored or sent. */
export const systemClock: Clock = nodeClock(() => Date.now());

/**
 * performance.now() and Node's timers: for intervals only, such as a client's
 * lease deadlines, which must not jump when the wall clock is stepped.
 */
export const monotonicClock: Clock = nodeClock(() => performance.now());
