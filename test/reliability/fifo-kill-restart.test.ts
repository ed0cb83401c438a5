// The kill -9 harness's FIFO variant: one broker process, two FIFO queues
// (deduplication by id, and by content per group), producers that retry
// every send a kill left unknown with the same deduplication id, consumers
// that delete, release, abandon and hold runs of a group; SIGKILL at seeded
// random moments, restart on the same data. The checks: no group delivered
// out of order, no message stored twice, nothing acknowledged lost, sequence
// numbers in send order (fifo-invariants.ts). `npm run crash -- --fifo
// --minutes N` is the long form.
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeTempDir } from "../support/temp-dir.js";
import { CrashBroker } from "./crash/crash-broker.js";
import { crashSettingsFromEnv } from "./crash/crash-settings.js";
import { runFifoCrashCycles } from "./crash/fifo-crash-run.js";
import { runReported } from "./crash/reported-run.js";

// Shorter than the mixed run's 22 cycles, so that it takes under a minute on the loaded 2-core VM: the suite runs both.
const settings = crashSettingsFromEnv(process.env, { cycles: 10 });
const runLength = `${settings.cycles} kills or more${settings.minutes === undefined ? "" : `, for ${settings.minutes} min`}`;
// Generous: a cycle takes 2 to 4 s on the loaded 2-core VM, the settling and the drain under 10 s.
const timeoutMs = (settings.cycles * 10 + (settings.minutes ?? 0) * 60 + 120) * 1000;

describe("a broker process serving FIFO queues, killed with SIGKILL over and over", () => {
  let dir: { path: string; remove(): Promise<void> };
  beforeEach(async () => {
    dir = await makeTempDir("holdshelf-fifo-crash-");
  });
  afterEach(async () => {
    await dir.remove();
  });

  it(
    `delivers no group out of order and stores no deduplicated send twice (${runLength})`,
    async () => {
      // Load for at least 300 ms before most kills (the mixed run's floor is 100): its short form has fewer cycles.
      const target = new CrashBroker(join(dir.path, "data"));
      const { report, replay } = await runReported(
        "fifo-kill-restart",
        settings,
        target,
        runFifoCrashCycles,
        [300, 2000],
      );
      const { violations, ...figures } = report;
      expect(violations, replay).toEqual([]);
      // The run must have exercised what it claims to check; floors that hold for a seed whose kills
      // mostly come early, on a machine running other suites.
      expect(figures.cycles).toBeGreaterThanOrEqual(10);
      expect(figures.sendsAcknowledged, replay).toBeGreaterThan(100);
      expect(figures.groups, replay).toBeGreaterThanOrEqual(20);
      expect(figures.orderChecks, replay).toBeGreaterThan(50);
      expect(figures.answersWithRuns, replay).toBeGreaterThan(0);
      expect(figures.groupLeaseWindows, replay).toBeGreaterThan(50);
      // Sends a kill left unknown that had been stored: their retries, after the restart, were deduplicated.
      expect(figures.retriesFoundStored, replay).toBeGreaterThan(0);
      expect(figures.repeatsAcrossRestarts, replay).toBeGreaterThan(0);
      expect(figures.releasesAcknowledged, replay).toBeGreaterThan(0);
      expect(figures.leasesChecked, replay).toBeGreaterThan(50);
    },
    timeoutMs,
  );
});
