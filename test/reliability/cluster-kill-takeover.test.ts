// The kill -9 harness in cluster mode: three broker processes on one real
// PostgreSQL, the same workload and the same checks as kill-restart.test.ts.
// Each cycle ends the serving broker's life: SIGKILL (sometimes a standby's
// too); SIGSTOP past its shard lease and SIGCONT once another broker serves;
// or its member session cut in PostgreSQL while it runs on, so that its
// commits race a standby's claim and meet the fence. `npm run crash --
// --cluster --minutes N` is the long form.
import { writeFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startPostgres, skipWithoutPostgres, type PostgresServer } from "../support/postgres-server.js";
import { CrashCluster } from "./crash/crash-cluster.js";
import { runCrashCycles } from "./crash/crash-run.js";
import { crashSettingsFromEnv } from "./crash/crash-settings.js";
import { SeededRandom } from "./crash/seeded-random.js";

const settings = crashSettingsFromEnv(process.env, { cycles: 12 });
const runLength = `${settings.cycles} cycles or more${settings.minutes === undefined ? "" : `, for ${settings.minutes} min`}`;
// A shard lease short enough that a paused broker's cycle stays short, long enough for a loaded machine's renewals.
const shardLeaseTtlMs = 2000;
// Generous: a cycle takes 3 to 8 s on the loaded 2-core VM (a paused one waits out the lease), the drain under 10 s.
const timeoutMs = (settings.cycles * 15 + (settings.minutes ?? 0) * 60 + 120) * 1000;

describe.skipIf(skipWithoutPostgres)("a cluster's serving broker killed with SIGKILL or paused past its lease, over and over", () => {
  let postgres: PostgresServer;
  beforeAll(async () => {
    postgres = await startPostgres();
  }, 60_000);
  afterAll(async () => {
    await postgres?.stop();
  });

  it(
    `loses no acknowledged send, revives no acknowledged delete and ends no lease early (${runLength})`,
    async () => {
      const replay = `replay with HOLDSHELF_CRASH_SEED=${settings.seed}`;
      console.log(`cluster kill-takeover: ${replay}`);
      const target = new CrashCluster({
        postgresUrl: await postgres.createDatabase(),
        random: new SeededRandom(settings.seed).fork(11),
        brokers: 3,
        pauseEvery: 4,
        shardLeaseTtlMs,
      });
      const report = await runCrashCycles({
        target,
        seed: settings.seed,
        cycles: settings.cycles,
        minutes: settings.minutes,
        runMs: [100, 2000],
        log: settings.minutes !== undefined || settings.cycles > 100 ? (line) => console.log(line) : () => undefined,
      });
      const { violations, ...figures } = report;
      console.log(`cluster kill-takeover figures: ${JSON.stringify(figures)}`);
      if (settings.reportFile) await writeFile(settings.reportFile, JSON.stringify(report, null, 2));
      expect(violations, replay).toEqual([]);
      // The run must have exercised what it claims to check: both takeover paths included.
      expect(figures.cycles).toBeGreaterThanOrEqual(settings.cycles);
      expect(figures.sendsAcknowledged, replay).toBeGreaterThan(100);
      expect(figures.strictDeletes, replay).toBeGreaterThan(0);
      expect(figures.leasesChecked, replay).toBeGreaterThan(50);
      const takeovers = figures.target as Record<"takeoversAfterKill" | "takeoversAfterPause" | "takeoversAfterCut", { count: number }>;
      expect(takeovers.takeoversAfterKill.count, replay).toBeGreaterThan(0);
      expect(takeovers.takeoversAfterPause.count, replay).toBeGreaterThan(0);
      expect(takeovers.takeoversAfterCut.count, replay).toBeGreaterThan(0);
    },
    timeoutMs,
  );
});
