import { availableParallelism, cpus, tmpdir } from "node:os";

/** Where a benchmark ran, recorded at the top of its JSON report so figures can be compared across machines. */
export function runEnvironment(): { date: string; node: string; cpus: string; dataDirParent: string } {
  return {
    date: new Date().toISOString(),
    node: process.version,
    cpus: `${availableParallelism()} × ${cpus()[0]?.model ?? "unknown"}`,
    dataDirParent: tmpdir(),
  };
}
