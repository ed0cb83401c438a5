// The metrics listener of a real broker: /metrics after real gRPC calls
// (grpc-prometheus names and labels, storage and process metrics), and the
// /healthz and /readyz probes, including readiness during a shutdown.
import { rm } from "node:fs/promises";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { status } from "@grpc/grpc-js";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { expectRpcError } from "../support/expect-rpc-error.js";
import { FakeClock } from "../support/fake-clock.js";
import { startGrpcHarness, type GrpcHarness } from "../support/grpc-harness.js";
import { openHeartbeatStream } from "../support/heartbeat-stream.js";
import { parseExposition, sampleValue, type Sample } from "../support/prometheus-text.js";

const queueService = { grpc_service: "holdshelf.v1.QueueService" };

describe("metrics listener", () => {
  let h: GrpcHarness;
  beforeEach(async () => {
    h = await startGrpcHarness({ metricsListen: "127.0.0.1:0" });
  });
  afterEach(async () => {
    await h.stop();
  });

  const get = (path: string, init?: RequestInit) => fetch(`http://${h.server.metricsAddress}${path}`, init);
  const scrape = async (): Promise<Sample[]> => {
    const response = await get("/metrics");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    return parseExposition(await response.text());
  };

  it("counts gRPC calls under grpc-prometheus's names, with Go's spelling of codes", async () => {
    await h.rpc.createQueue({ name: "jobs", config: { visibilityTimeout: durationFromMs(30_000) } });
    await expectRpcError(h.rpc.getQueue({ name: "missing" }), status.NOT_FOUND, "QUEUE_NOT_FOUND");
    await h.rpc.send({ queue: "jobs", body: Buffer.from("m") });
    const [message] = (await h.rpc.receive({ queue: "jobs" })).messages;
    const stream = openHeartbeatStream(h.server.address);
    stream.send({ queue: "jobs", leases: [{ receiptHandle: message!.receiptHandle }] });
    await stream.next();
    stream.end();
    await stream.closed;
    stream.close();

    const samples = await scrape();
    const unary = (method: string) => ({ grpc_type: "unary", ...queueService, grpc_method: method });
    const heartbeat = { grpc_type: "bidi_stream", ...queueService, grpc_method: "Heartbeat" };
    expect(sampleValue(samples, "grpc_server_started_total", unary("CreateQueue"))).toBe(1);
    expect(sampleValue(samples, "grpc_server_handled_total", { ...unary("CreateQueue"), grpc_code: "OK" })).toBe(1);
    expect(sampleValue(samples, "grpc_server_handled_total", { ...unary("GetQueue"), grpc_code: "NotFound" })).toBe(1);
    expect(sampleValue(samples, "grpc_server_handled_total", { ...unary("GetQueue"), grpc_code: "OK" })).toBe(0);
    expect(sampleValue(samples, "grpc_server_msg_received_total", unary("Send"))).toBe(1);
    expect(sampleValue(samples, "grpc_server_msg_sent_total", unary("Receive"))).toBe(1);
    expect(sampleValue(samples, "grpc_server_handling_seconds_count", unary("Receive"))).toBe(1);
    expect(sampleValue(samples, "grpc_server_msg_received_total", heartbeat)).toBe(1);
    expect(sampleValue(samples, "grpc_server_msg_sent_total", heartbeat)).toBe(1);
    expect(sampleValue(samples, "grpc_server_handled_total", { ...heartbeat, grpc_code: "OK" })).toBe(1);
    // Methods never called are exported at 0, so that their rates exist.
    expect(sampleValue(samples, "grpc_server_started_total", unary("PurgeQueue"))).toBe(0);
    expect(
      sampleValue(samples, "grpc_server_handled_total", { ...unary("PurgeQueue"), grpc_code: "Unavailable" }),
    ).toBe(0);
    expect(sampleValue(samples, "holdshelf_leases_extended_total", { queue: "jobs", via: "heartbeat" })).toBe(1);
  });

  it("records a cancelled call as Canceled", async () => {
    await h.rpc.createQueue({ name: "jobs" });
    const abandoned = new AbortController();
    const poll = h.rpc.receive({ queue: "jobs", waitTime: durationFromMs(20_000) }, { signal: abandoned.signal });
    await vi.waitFor(async () =>
      expect(
        sampleValue(await scrape(), "grpc_server_started_total", {
          grpc_type: "unary",
          ...queueService,
          grpc_method: "Receive",
        }),
      ).toBe(1),
    );
    abandoned.abort();
    await expect(poll).rejects.toThrow();
    await vi.waitFor(async () =>
      expect(
        sampleValue(await scrape(), "grpc_server_handled_total", {
          grpc_type: "unary",
          ...queueService,
          grpc_method: "Receive",
          grpc_code: "Canceled",
        }),
      ).toBe(1),
    );
  });

  it("exports group-commit timings and batch sizes, and Node.js process metrics", async () => {
    await h.rpc.createQueue({ name: "jobs" });
    await Promise.all(Array.from({ length: 20 }, () => h.rpc.send({ queue: "jobs", body: Buffer.from("m") })));

    const samples = await scrape();
    const batches = sampleValue(samples, "holdshelf_storage_commit_seconds_count")!;
    const commits = sampleValue(samples, "holdshelf_storage_commit_batch_size_sum")!;
    expect(batches).toBeGreaterThan(0);
    expect(sampleValue(samples, "holdshelf_storage_commit_batch_size_count")).toBe(batches);
    // 21 commits (the queue and 20 sends), some sharing a batch.
    expect(commits).toBe(21);
    expect(batches).toBeLessThanOrEqual(commits);
    expect(sampleValue(samples, "process_resident_memory_bytes")).toBeGreaterThan(0);
    expect(sampleValue(samples, "nodejs_eventloop_lag_p99_seconds")).toBeGreaterThanOrEqual(0);
  });

  it("answers the probes, and refuses what it does not serve", async () => {
    expect((await get("/healthz")).status).toBe(200);
    expect((await get("/readyz")).status).toBe(200);
    const missing = await get("/nope");
    expect(missing.status).toBe(404);
    expect(await missing.text()).toContain("/metrics");
    const post = await get("/metrics", { method: "POST" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD");
    const head = await get("/metrics", { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
  });
});

describe("readiness during a shutdown", () => {
  it("answers /readyz 503 (and /healthz 200) while running calls drain", async () => {
    const clock = new FakeClock();
    const h = await startGrpcHarness({ clock, metricsListen: "127.0.0.1:0" });
    const get = (path: string) => fetch(`http://${h.server.metricsAddress}${path}`);
    try {
      await h.rpc.createQueue({ name: "dlq" });
      await h.rpc.createQueue({
        name: "work",
        config: {
          visibilityTimeout: durationFromMs(1000),
          redrivePolicy: { deadLetterQueue: "dlq", maxReceiveCount: 1 },
        },
      });
      await h.rpc.send({ queue: "work", body: Buffer.from("poison") });
      await h.rpc.receive({ queue: "work" });
      clock.advance(1000);
      await h.server.broker.settled();
      expect(h.server.broker.getQueue("dlq").counts.visible).toBe(1);

      // A paced redrive waits on the fake clock after its first message, so the call stays running.
      const redrive = h.rpc.redriveMessages({ deadLetterQueue: "dlq", maxMessages: 1n, maxPerSecond: 1 });
      await vi.waitFor(() => expect(h.server.broker.getQueue("work").counts.visible).toBe(1));
      const stopping = h.server.shutdown();
      expect((await get("/readyz")).status).toBe(503);
      expect((await get("/healthz")).status).toBe(200);
      clock.advance(1000);
      expect((await redrive).movedCount).toBe(1n);
      await stopping;
      await expect(get("/healthz")).rejects.toThrow();
    } finally {
      h.rpc.close();
      await rm(h.dataDir, { recursive: true, force: true });
    }
  });
});
