// Repeats a load every few seconds while the tab is visible, so a console
// left open in a background tab does not keep the broker busy.
import { useEffect, useRef } from "preact/hooks";

/**
 * Calls `load` now, then `intervalMs` after each call settles (never two at
 * once, however slow the broker), pausing while the document is hidden and
 * loading at once when it shows again. `deps` restart the cycle.
 */
export function usePoll(load: () => Promise<unknown>, intervalMs: number, deps: readonly unknown[]): void {
  const latest = useRef(load);
  latest.current = load;
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let running = false;
    let stopped = false;
    const tick = async () => {
      timer = undefined;
      if (stopped || running || document.hidden) return;
      running = true;
      try {
        await latest.current();
      } catch {
        // The load reports its own failure; polling goes on, so the page recovers with the broker.
      } finally {
        running = false;
        if (!stopped && !document.hidden) timer = setTimeout(tick, intervalMs);
      }
    };
    const onVisibility = () => {
      if (!document.hidden && timer === undefined) void tick();
    };
    void tick();
    document.addEventListener("visibilitychange", onVisibility);
    return () => {
      stopped = true;
      clearTimeout(timer);
      document.removeEventListener("visibilitychange", onVisibility);
    };
  }, [intervalMs, ...deps]);
}
