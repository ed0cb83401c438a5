// The broker's log lines for notable events a real server meets: a broken
// Heartbeat stream (one line per stream, not per lease) and a storage write
// that fails (one line per batch), each a JSON object with its fields.
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createLogger } from "../../src/logging/logger.js";
import { startGrpcHarness, type GrpcHarness } from "../support/grpc-harness.js";
import { inCluster } from "../support/test-storage.js";
import { openHeartbeatStream } from "../support/heartbeat-stream.js";
import { parseExposition, sampleValue } from "../support/prometheus-text.js";

describe("log lines", () => {
  let h: GrpcHarness;
  let lines: Record<string, unknown>[];
  afterEach(async () => {
    await h.stop();
  });

  async function start(): Promise<void> {
    lines = [];
    const logger = createLogger({
      level: "info",
      write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>),
    });
    h = await startGrpcHarness({ logger, metricsListen: "127.0.0.1:0" });
    await h.rpc.createQueue({ name: "jobs" });
  }

  async function holdTwoLeases(releaseOnDisconnect: boolean) {
    await h.rpc.sendBatch({ queue: "jobs", entries: [{ body: Buffer.from("a") }, { body: Buffer.from("b") }] });
    const { messages } = await h.rpc.receive({ queue: "jobs", maxMessages: 2 });
    const stream = openHeartbeatStream(h.server.address);
    stream.send({
      queue: "jobs",
      releaseOnDisconnect,
      leases: messages.map((message) => ({
        receiptHandle: message.receiptHandle,
        visibilityTimeout: durationFromMs(30_000),
      })),
    });
    await stream.next();
    return stream;
  }

  const named = (msg: string) => lines.filter((line) => line.msg === msg);

  it("logs a broken stream once, with the leases it held and whether they were released", async () => {
    await start();
    const stream = await holdTwoLeases(true);
    stream.cancel();
    await vi.waitFor(() => expect(named("heartbeat stream broken")).toHaveLength(1));
    expect(named("heartbeat stream broken")[0]).toMatchObject({
      level: "info",
      leases: 2,
      released: true,
      peer: expect.any(String),
    });
    stream.close();
  });

  it("does not log a stream the client ended cleanly", async () => {
    await start();
    const clean = await holdTwoLeases(false);
    clean.end();
    expect(await clean.closed).toBeUndefined();
    clean.close();
    // A broken stream after it: its line comes after any the clean one could have caused.
    const broken = await holdTwoLeases(true);
    broken.cancel();
    await vi.waitFor(() => expect(named("heartbeat stream broken").some((line) => line.released === true)).toBe(true));
    expect(named("heartbeat stream broken")).toEqual([expect.objectContaining({ leases: 2, released: true })]);
    broken.close();
  });

  // In the cluster run the failing store is another broker's than the one whose metrics the client reads:
  // the LevelDB and PostgreSQL runs cover it.
  it.skipIf(inCluster)(
    "logs a failed storage write once per outage, not per call, and counts the failed batch",
    async () => {
      await start();
      // A closed database refuses every write, as a failing disk would.
      await h.server.store.close();
      const sends = await Promise.allSettled(
        [1, 2, 3].map(() => h.rpc.send({ queue: "jobs", body: Buffer.from("m") })),
      );
      expect(sends.map((send) => send.status)).toEqual(["rejected", "rejected", "rejected"]);
      const failures = named("storage unavailable: refusing calls that need it until writes succeed again");
      expect(failures).toHaveLength(1);
      expect(failures[0]).toMatchObject({
        level: "error",
        reason: expect.stringContaining("storage write failed"),
        error: { message: expect.any(String) },
      });
      expect(named("unexpected error in a call")).toEqual([]);
      const samples = parseExposition(await (await fetch(`http://${h.server.metricsAddress}/metrics`)).text());
      // The three sends shared one batch; later commits would be refused unwritten, not counted.
      expect(sampleValue(samples, "holdshelf_storage_commit_failures_total")).toBe(1);
    },
  );
});
