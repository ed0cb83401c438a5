import { readFile } from "node:fs/promises";

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

/** Where a profile's busy samples went. */
export interface ProfileSummary {
  /** Whether the samples were cut to the window asked for (false: the whole profile). */
  readonly windowed: boolean;
  /** Samples in which the process was not idle. */
  readonly busySamples: number;
  /** Share of the busy samples by area of code, largest first. */
  readonly byArea: readonly { readonly area: string; readonly percent: number }[];
  /** The functions with the most self time, as a share of the busy samples. */
  readonly topFunctions: readonly { readonly name: string; readonly percent: number }[];
}

/**
 * Summarizes a CPU profile's self time between two instants of the monotonic
 * clock (milliseconds), by area (holdshelf, grpc-js, protobuf-es, LevelDB,
 * Node internals, GC) and by function.
 */
export async function summarizeCpuProfile(path: string, fromMs: number, toMs: number, top = 12): Promise<ProfileSummary> {
  const profile = JSON.parse(await readFile(path, "utf8")) as CpuProfile;
  const frames = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const inWindow: number[] = [];
  let at = profile.startTime;
  profile.samples.forEach((id, index) => {
    at += profile.timeDeltas[index] ?? 0;
    if (at / 1000 >= fromMs && at / 1000 <= toMs) inWindow.push(id);
  });
  // The profile's clock is the one monotonicMs() reads; if it does not
  // overlap the window after all, summarize the whole run rather than nothing.
  const windowed = inWindow.length > 0;
  const samples = windowed ? inWindow : profile.samples;
  const byArea = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let busySamples = 0;
  for (const id of samples) {
    const frame = frames.get(id)!;
    if (frame.functionName === "(idle)") continue;
    busySamples++;
    const area = areaOf(frame.functionName, frame.url);
    byArea.set(area, (byArea.get(area) ?? 0) + 1);
    const name = `${frame.functionName || "(anonymous)"} ${shortUrl(frame.url)}:${frame.lineNumber + 1}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + 1);
  }
  const ranked = (counts: Map<string, number>) =>
    [...counts].sort((a, b) => b[1] - a[1]).map(([name, count]) => ({ name, percent: (100 * count) / Math.max(busySamples, 1) }));
  return {
    windowed,
    busySamples,
    byArea: ranked(byArea).map(({ name, percent }) => ({ area: name, percent })),
    topFunctions: ranked(byFunction).slice(0, top),
  };
}

function areaOf(functionName: string, url: string): string {
  if (functionName === "(garbage collector)") return "garbage collection";
  if (functionName === "(program)") return "(program: native, not JS)";
  if (url.includes("/@grpc/")) return "grpc-js";
  if (url.includes("/@bufbuild/")) return "protobuf-es";
  if (url.includes("/classic-level/") || url.includes("/abstract-level/")) return "classic-level";
  if (url.includes("/dist/gen/")) return "holdshelf generated code";
  if (url.includes("/dist/src/")) return "holdshelf";
  if (url.startsWith("node:")) return "Node internals";
  return url === "" ? "(native)" : "other JS";
}

function shortUrl(url: string): string {
  const modules = url.lastIndexOf("/node_modules/");
  if (modules >= 0) return url.slice(modules + "/node_modules/".length);
  const dist = url.lastIndexOf("/dist/");
  return dist >= 0 ? url.slice(dist + 1) : url;
}
