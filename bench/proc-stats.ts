import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

/** One reading of a process's resource use, from /proc (Linux only). */
export interface ProcessSample {
  /** When it was read, in milliseconds of the monotonic clock. */
  readonly atMs: number;
  /** User plus system CPU time of all its threads so far, in seconds. */
  readonly cpuSeconds: number;
  /** The part of cpuSeconds spent in the kernel (system calls such as fsync and socket I/O). */
  readonly systemSeconds: number;
  /**
   * The part of cpuSeconds used by the main thread: the event loop, where
   * JavaScript runs. The rest is libuv's pool (where LevelDB writes and
   * fsyncs), LevelDB's compaction thread and V8's helpers (GC, compiler).
   */
  readonly mainThreadSeconds: number;
  /** Resident set size, in bytes. */
  readonly rssBytes: number;
  /** The highest resident set size so far (VmHWM), in bytes. */
  readonly peakRssBytes: number;
}

/** Which CPU time cpuPercent counts. */
export type CpuPart = "all" | "system" | "mainThread";

// utime and stime are counted in clock ticks; 100 a second nearly everywhere,
// but ask rather than assume.
/** Clock ticks per second, the unit of /proc's CPU times. */
export const clockTicksPerSecond = readClockTicks();

/** Reads a process's CPU time and resident memory from /proc/<pid>/stat, its main thread's stat, and status. */
export function sampleProcess(pid: number): ProcessSample {
  const atMs = monotonicMs();
  const all = readTicks(`/proc/${pid}/stat`);
  const main = readTicks(`/proc/${pid}/task/${pid}/stat`);
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const rss = /^VmRSS:\s+(\d+) kB$/m.exec(status);
  const peak = /^VmHWM:\s+(\d+) kB$/m.exec(status);
  if (rss === null || peak === null) throw new Error(`no VmRSS in /proc/${pid}/status: has the process exited?`);
  return {
    atMs,
    cpuSeconds: (all.user + all.system) / clockTicksPerSecond,
    systemSeconds: all.system / clockTicksPerSecond,
    mainThreadSeconds: (main.user + main.system) / clockTicksPerSecond,
    rssBytes: Number(rss[1]) * 1024,
    peakRssBytes: Number(peak[1]) * 1024,
  };
}

/** CPU used between two samples, as a percentage of one core. */
export function cpuPercent(from: ProcessSample, to: ProcessSample, part: CpuPart = "all"): number {
  const field = ({ all: "cpuSeconds", system: "systemSeconds", mainThread: "mainThreadSeconds" } as const)[part];
  return (100 * (to[field] - from[field])) / ((to.atMs - from.atMs) / 1000);
}

/**
 * The pid of the process named `name` (its /proc comm) that is `rootPid` or
 * descends from it, or undefined if none is: a server's own process behind
 * the scripts and wrappers that started it.
 */
export function findProcess(rootPid: number, name: string): number | undefined {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // Field 4 (ppid) follows the state, after the command's closing parenthesis.
      const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
    } catch {
      // The process exited between the listing and the read.
    }
  }
  const queue = [rootPid];
  for (let pid = queue.shift(); pid !== undefined; pid = queue.shift()) {
    let comm: string;
    try {
      comm = readFileSync(`/proc/${pid}/comm`, "utf8").trim();
    } catch {
      continue;
    }
    if (comm === name) return pid;
    queue.push(...(children.get(pid) ?? []));
  }
  return undefined;
}

/** Milliseconds of the monotonic clock (the one V8's CPU profiles use, in microseconds). */
export function monotonicMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

/** utime and stime, fields 14 and 15 of stat(5), in clock ticks. */
function readTicks(path: string): { user: number; system: number } {
  const stat = readFileSync(path, "utf8");
  // The command name, field 2, is in parentheses and may hold spaces: count fields after its last ")".
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // fields[0] is field 3 (state).
  return { user: Number(fields[11]), system: Number(fields[12]) };
}

function readClockTicks(): number {
  try {
    const ticks = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim());
    if (Number.isInteger(ticks) && ticks > 0) return ticks;
  } catch {
    // No getconf: fall through to Linux's usual value.
  }
  return 100;
}
