import type { Clock, Timer } from "../time/clock.js";

/** Waits ms on `clock`, or less if the signal aborts first. */
export function pause(clock: Clock, ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      timer.cancel();
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer: Timer = clock.setTimer(ms, done);
    signal.addEventListener("abort", done, { once: true });
  });
}

/** Waits for a promise, but no longer than ms on `clock`. */
export async function within(clock: Clock, promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: Timer | undefined;
  await Promise.race([promise, new Promise((resolve) => (timer = clock.setTimer(ms, () => resolve(undefined))))]);
  timer?.cancel();
}
