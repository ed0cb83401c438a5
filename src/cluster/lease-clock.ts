import type { Clock } from "../time/clock.js";

/**
 * The cluster's clock: performance.now() (leases are intervals, which must
 * not jump when the wall clock is stepped) and Node timers that do not keep
 * the process alive (a broker that exits without closing is not held up by
 * its renewals). Lease TTLs are seconds, far under Node's timer cap.
 */
export const leaseClock: Clock = {
  now: () => performance.now(),
  setTimer(delayMs, callback) {
    const handle = setTimeout(callback, delayMs);
    handle.unref();
    return { cancel: () => clearTimeout(handle) };
  },
};
