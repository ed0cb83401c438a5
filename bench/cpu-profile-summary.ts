import { readFile } from "node:fs/promises";
import { cpuProfileGroup, cpuProfileGroups } from "./cpu-profile-group.js";

/** The parts of a V8 .cpuprofile (as `node --cpu-prof` writes it) that the summary reads. */
interface CpuProfile {
  readonly nodes: readonly {
    readonly id: number;
    readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  }[];
  /** Microseconds of the monotonic clock. */
  readonly startTime: number;
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** An interval of the monotonic clock, in milliseconds (monotonicMs()). */
export interface TimeSpan {
  readonly fromMs: number;
  readonly toMs: number;
}

/** Where a profile's busy samples went. */
export interface ProfileSummary {
  /** Whether the samples were cut to the windows asked for (false: the whole profile). */
  readonly windowed: boolean;
  /** Samples in which the process was not idle. */
  readonly busySamples: number;
  /** Share of the busy samples by group (cpuProfileGroups), largest first. */
  readonly byArea: readonly { readonly area: string; readonly percent: number }[];
  /** The functions with the most self time, as a share of the busy samples. */
  readonly topFunctions: readonly { readonly name: string; readonly percent: number }[];
}

/**
 * Summarizes a CPU profile's self time inside some intervals of the monotonic
 * clock, by group (holdshelf, grpc-js, HTTP/2 and streams, protobuf-es,
 * LevelDB, GC, other) and by function.
 */
export async function summarizeCpuProfile(
  path: string,
  windows: readonly TimeSpan[],
  top = 15,
): Promise<ProfileSummary> {
  const profile = JSON.parse(await readFile(path, "utf8")) as CpuProfile;
  const frames = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const inWindow: number[] = [];
  let at = profile.startTime;
  profile.samples.forEach((id, index) => {
    at += profile.timeDeltas[index] ?? 0;
    const ms = at / 1000;
    if (windows.some((window) => ms >= window.fromMs && ms <= window.toMs)) inWindow.push(id);
  });
  // The profile's clock is the one monotonicMs() reads; if it does not
  // overlap the windows after all, summarize the whole run rather than nothing.
  const windowed = inWindow.length > 0;
  const samples = windowed ? inWindow : profile.samples;
  const byArea = new Map<string, number>(cpuProfileGroups.map((group) => [group, 0]));
  const byFunction = new Map<string, number>();
  let busySamples = 0;
  for (const id of samples) {
    const frame = frames.get(id)!;
    if (frame.functionName === "(idle)") continue;
    busySamples++;
    const group = cpuProfileGroup(frame.functionName, frame.url);
    byArea.set(group, byArea.get(group)! + 1);
    const name = `${frame.functionName || "(anonymous)"} ${shortUrl(frame.url)}${frame.url === "" ? "" : `:${frame.lineNumber + 1}`}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + 1);
  }
  const ranked = (counts: Map<string, number>) =>
    [...counts]
      .sort((a, b) => b[1] - a[1])
      .map(([name, count]) => ({ name, percent: (100 * count) / Math.max(busySamples, 1) }));
  return {
    windowed,
    busySamples,
    byArea: ranked(byArea).map(({ name, percent }) => ({ area: name, percent })),
    topFunctions: ranked(byFunction).slice(0, top),
  };
}

function shortUrl(url: string): string {
  if (url === "") return "(native)";
  const modules = url.lastIndexOf("/node_modules/");
  if (modules >= 0) return url.slice(modules + "/node_modules/".length);
  const dist = url.lastIndexOf("/dist/");
  return dist >= 0 ? url.slice(dist + 1) : url;
}
