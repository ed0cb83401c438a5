import { spawn } from "node:child_process";
import { once } from "node:events";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { monotonicMs } from "./proc-stats.js";

// Compiled to dist-bench/bench/, so the package's command is three levels up.
const holdshelfBin = fileURLToPath(new URL("../../bin/holdshelf.js", import.meta.url));

/** One `holdshelf backup` that finished. */
export interface BackupRun {
  readonly seconds: number;
  readonly bytes: number;
}

/** Backups taken one after another until stopped. */
export interface BackupLoop {
  /** Stops after the backup under way (never cutting one off) and returns every one that finished; again, the same. */
  stop(): Promise<BackupRun[]>;
}

/**
 * Runs `holdshelf backup` against `address` again and again (`count` times at most), each into a new
 * file in `dir` that is removed once it is written, as an operator's backup
 * job would run it (a process of its own, writing and fsyncing its file).
 */
export function startBackupLoop(address: string, dir: string, count = Number.POSITIVE_INFINITY): BackupLoop {
  const runs: BackupRun[] = [];
  let stopping = false;
  const loop = (async () => {
    for (let n = 0; !stopping && n < count; n++) {
      const file = join(dir, `backup-${n}.hsb`);
      const startedMs = monotonicMs();
      const child = spawn(process.execPath, [holdshelfBin, "backup", file, "--address", address], {
        stdio: ["ignore", "pipe", "inherit"],
      });
      let stdout = "";
      child.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
      const [code] = (await once(child, "exit")) as [number];
      if (code !== 0) throw new Error(`holdshelf backup exited with ${code}`);
      const { bytes } = JSON.parse(stdout) as { bytes: number };
      runs.push({ seconds: (monotonicMs() - startedMs) / 1000, bytes });
      await rm(file);
    }
  })();
  return {
    async stop() {
      stopping = true;
      await loop;
      return runs;
    },
  };
}
