// The kill -9 harness in cluster mode: three broker processes sharing the
// shards of one real PostgreSQL, the clients on a random one of them (which
// forwards what it does not own), the same workload and the same checks as
// kill-restart.test.ts. Each cycle ends a random broker's life: SIGKILL
// (sometimes a second one's too); SIGSTOP past its shard lease and SIGCONT
// once the others serve its queues; or its member session cut in PostgreSQL
// while it runs on, so that its commits race the others' claims and meet
// the fence. Once, at the middle cycle, the PostgreSQL primary is killed and
// its synchronous standby promoted instead. `npm run crash -- --cluster
// --minutes N` is the long form.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  skipWithoutPostgres,
  startPostgres,
  startStandby,
  type PostgresServer,
  type PostgresStandby,
} from "../support/postgres-server.js";
import { CrashCluster } from "./crash/crash-cluster.js";
import { runReportedCrash } from "./crash/reported-run.js";
import { crashSettingsFromEnv } from "./crash/crash-settings.js";
import { SeededRandom } from "./crash/seeded-random.js";

const settings = crashSettingsFromEnv(process.env, { cycles: 12 });
const runLength = `${settings.cycles} cycles or more${settings.minutes === undefined ? "" : `, for ${settings.minutes} min`}`;
// A shard lease short enough that a paused broker's cycle stays short, long enough for a loaded machine's renewals.
const shardLeaseTtlMs = 2000;
// Generous: a cycle takes 3 to 8 s on the loaded 2-core VM (a paused one waits out the lease), the drain under 10 s.
const timeoutMs = (settings.cycles * 15 + (settings.minutes ?? 0) * 60 + 120) * 1000;

describe.skipIf(skipWithoutPostgres)(
  "a cluster's brokers killed with SIGKILL or paused past their lease, one at a time, over and over",
  () => {
    // A primary whose commits wait for a synchronous standby: the run fails the database over once.
    let primary: PostgresServer;
    let standby: PostgresStandby;
    beforeAll(async () => {
      primary = await startPostgres({ synchronousStandby: "crash_standby" });
      standby = await startStandby(primary, "crash_standby");
    }, 60_000);
    afterAll(async () => {
      await standby?.stop();
      await primary?.stop();
    });

    it(
      `loses no acknowledged send, revives no acknowledged delete and ends no lease early (${runLength})`,
      async () => {
        // The database is created on the primary and reaches the standby through replication.
        const database = new URL(await primary.createDatabase()).pathname.slice(1);
        const target = new CrashCluster({
          postgresUrls: [primary.url(database), standby.url(database)],
          failOverDatabase: async () => {
            await primary.kill();
            await standby.promote();
          },
          cycles: settings.cycles,
          random: new SeededRandom(settings.seed).fork(11),
          brokers: 3,
          pauseEvery: 4,
          shardLeaseTtlMs,
        });
        const { report, replay } = await runReportedCrash("cluster kill-takeover", settings, target);
        const { violations, ...figures } = report;
        expect(violations, replay).toEqual([]);
        // The run must have exercised what it claims to check: both takeover paths included.
        expect(figures.cycles).toBeGreaterThanOrEqual(settings.cycles);
        expect(figures.sendsAcknowledged, replay).toBeGreaterThan(100);
        expect(figures.strictDeletes, replay).toBeGreaterThan(0);
        expect(figures.leasesChecked, replay).toBeGreaterThan(50);
        const takeovers = figures.target as Record<string, { count: number }>;
        expect(takeovers["servingAgainAfterDatabaseFailover"]!.count, replay).toBe(1);
        expect(takeovers["takeoversAfterKill"]!.count, replay).toBeGreaterThan(0);
        expect(takeovers["takeoversAfterPause"]!.count, replay).toBeGreaterThan(0);
        expect(takeovers["takeoversAfterCut"]!.count, replay).toBeGreaterThan(0);
      },
      timeoutMs,
    );
  },
);
