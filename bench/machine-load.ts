import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { clockTicksPerSecond } from "./proc-stats.js";
import { setTimeout as sleep } from "node:timers/promises";

/** Rows measured with the 1-minute load average above this are marked: something else was using the cores. */
export const loadMarkThreshold = 0.5;

// The kernel recomputes the load average every 5 s; polling faster shows nothing new.
const pollMs = 5_000;

/** The 1-minute load average (Linux: runnable and uninterruptible tasks, exponentially damped). */
export function oneMinuteLoad(): number {
  return loadavg()[0] ?? NaN;
}

/** CPU time of all the machine's cores since boot, in seconds. */
export interface MachineCpu {
  /**
   * Busy: user, nice, system, and interrupts, softirqs included (the kernel
   * charges those it runs for a process, loopback TCP's above all, to that
   * process's system time). Around a window, less what the bench's own
   * processes used, it is what other work took.
   */
  readonly busySeconds: number;
  /** Stolen: time the hypervisor gave the VM's cores to other guests. */
  readonly stolenSeconds: number;
}

/** Reads the machine's CPU time from the first line of /proc/stat. */
export function machineCpu(): MachineCpu {
  // "cpu  user nice system idle iowait irq softirq steal …", in clock ticks.
  const [user, nice, system, , , irq, softirq, steal] = readFileSync("/proc/stat", "utf8")
    .split("\n")[0]!
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  return {
    busySeconds: (user! + nice! + system! + irq! + softirq!) / clockTicksPerSecond,
    stolenSeconds: steal! / clockTicksPerSecond,
  };
}

/**
 * Waits up to `waitMs` for the 1-minute load average to fall below `max`,
 * and resolves with the last reading and whether it did. The average decays
 * with a one-minute time constant, so after a scenario that kept both cores
 * busy (a load near 2) it takes about 80 s to fall below 0.5.
 */
export async function waitForLoadBelow(
  max: number,
  waitMs: number,
  log: (line: string) => void,
): Promise<{ load: number; below: boolean }> {
  const untilMs = Date.now() + waitMs;
  let load = oneMinuteLoad();
  if (load < max) return { load, below: true };
  log(`load average ${load.toFixed(2)} is not below ${max}: waiting up to ${Math.round(waitMs / 1000)} s`);
  while (Date.now() + pollMs <= untilMs) {
    await sleep(pollMs);
    load = oneMinuteLoad();
    if (load < max) return { load, below: true };
  }
  return { load, below: false };
}
