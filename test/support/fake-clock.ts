import type { Clock, Timer } from "../../src/time/clock.js";

interface Scheduled {
  readonly at: number;
  readonly seq: number;
  readonly callback: () => void;
  cancelled: boolean;
}

/** A clock that moves only when a test says so, firing due timers in time order. */
export class FakeClock implements Clock {
  private current: number;
  private seq = 0;
  private scheduled: Scheduled[] = [];

  constructor(start = Date.UTC(2026, 0, 1)) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  setTimer(delayMs: number, callback: () => void): Timer {
    const entry: Scheduled = { at: this.current + Math.max(0, delayMs), seq: this.seq++, callback, cancelled: false };
    this.scheduled.push(entry);
    return { cancel: () => void (entry.cancelled = true) };
  }

  /** Moves time forward by `ms`, firing every timer that falls due, in order. */
  advance(ms: number): void {
    const target = this.current + ms;
    for (;;) {
      this.scheduled = this.scheduled.filter((entry) => !entry.cancelled);
      const due = this.scheduled.filter((entry) => entry.at <= target).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (due === undefined) break;
      this.current = Math.max(this.current, due.at);
      due.cancelled = true;
      due.callback();
    }
    this.current = target;
  }
}
