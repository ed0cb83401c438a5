import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeTempDir } from "../support/temp-dir.js";
import { CrashBroker } from "./crash/crash-broker.js";
import { runReportedCrash } from "./crash/reported-run.js";
import { crashSettingsFromEnv } from "./crash/crash-settings.js";

// The short form by default; `npm run crash -- --cycles 500` or `--minutes 30` runs the long form.
const settings = crashSettingsFromEnv(process.env);
const runLength = `${settings.cycles} kills or more${settings.minutes === undefined ? "" : `, for ${settings.minutes} min`}`;
// Generous: a cycle takes 3 to 6 s on the loaded 2-core VM, the drain under 10 s.
const timeoutMs = (settings.cycles * 10 + (settings.minutes ?? 0) * 60 + 120) * 1000;

describe("a broker process killed with SIGKILL under mixed load, over and over", () => {
  let dir: { path: string; remove(): Promise<void> };
  beforeEach(async () => {
    dir = await makeTempDir("holdshelf-crash-");
  });
  afterEach(async () => {
    await dir.remove();
  });

  it(
    `loses no acknowledged send, revives no acknowledged delete and ends no lease early (${runLength})`,
    async () => {
      const { report, replay } = await runReportedCrash(
        "kill-restart",
        settings,
        new CrashBroker(join(dir.path, "data")),
      );
      const { violations, ...figures } = report;
      expect(violations, replay).toEqual([]);
      // The run must have exercised what it claims to check.
      expect(figures.cycles).toBeGreaterThanOrEqual(20);
      expect(figures.sendsAcknowledged, replay).toBeGreaterThan(200);
      expect(figures.deadLettered, replay).toBeGreaterThan(0);
      expect(figures.strictDeletes, replay).toBeGreaterThan(0);
      expect(figures.renewalsAcknowledged, replay).toBeGreaterThan(0);
      expect(figures.releasesAcknowledged, replay).toBeGreaterThan(0);
      expect(figures.leasesChecked, replay).toBeGreaterThan(100);
      // A share of the load went through the SQS endpoint, and crossed to gRPC and back.
      expect(figures.sqsSendsAcknowledged, replay).toBeGreaterThan(50);
      expect(figures.sqsDeliveries, replay).toBeGreaterThan(50);
      expect(figures.sqsStrictDeletes, replay).toBeGreaterThan(0);
      expect(figures.sqsChangesAcknowledged, replay).toBeGreaterThan(0);
      expect(figures.sentOverSqsReceivedOverGrpc, replay).toBeGreaterThan(0);
      expect(figures.sentOverGrpcReceivedOverSqs, replay).toBeGreaterThan(0);
      // Subscribe consumers acked, renewed and failed on streams.
      expect(figures.subscribe.deliveries, replay).toBeGreaterThan(50);
      expect(figures.subscribe.acksConfirmed, replay).toBeGreaterThan(0);
      expect(figures.subscribe.renewalsHeld, replay).toBeGreaterThan(0);
      expect(figures.failuresAcknowledged, replay).toBeGreaterThan(0);
    },
    timeoutMs,
  );
});
