// The broker's metrics as its rules drive them, on a fake clock: every
// counter and histogram against the events that feed it, and the gauges as
// a scrape reads them.
import { Registry } from "prom-client";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BrokerMetrics } from "../../src/metrics/broker-metrics.js";
import { parseExposition, sampleValue, type Sample } from "../support/prometheus-text.js";
import {
  createQueue,
  openBrokerHarness,
  receiveOne,
  send,
  sendAndReceive,
  sendBatch,
  sendText,
  type BrokerHarness,
} from "../broker/broker-harness.js";

const vt = 10_000;

describe("broker metrics", () => {
  let h: BrokerHarness;
  let registry: Registry;
  let metrics: BrokerMetrics;
  beforeEach(async () => {
    registry = new Registry();
    metrics = new BrokerMetrics(registry);
    h = await openBrokerHarness({ events: metrics });
    metrics.observe(h.broker);
    await createQueue(h, "jobs", { visibilityTimeoutMs: vt });
  });
  afterEach(async () => {
    await h.dispose();
  });

  const scrape = async (): Promise<Sample[]> => parseExposition(await registry.metrics());
  const jobs = { queue: "jobs" };

  it("starts every counter of a new queue at 0, so the first event shows in rate()", async () => {
    const samples = await scrape();
    for (const name of [
      "holdshelf_messages_sent_total",
      "holdshelf_messages_received_total",
      "holdshelf_messages_redelivered_total",
      "holdshelf_messages_deleted_total",
      "holdshelf_messages_expired_total",
      "holdshelf_leases_expired_total",
      "holdshelf_empty_receives_total",
      "holdshelf_messages_moved_by_tasks_total",
      "holdshelf_messages_deduplicated_total",
    ]) {
      expect(sampleValue(samples, name, jobs), name).toBe(0);
    }
    for (const via of ["change_visibility", "heartbeat"]) {
      expect(sampleValue(samples, "holdshelf_leases_extended_total", { queue: "jobs", via })).toBe(0);
    }
    for (const reason of ["change_visibility", "heartbeat", "disconnect"]) {
      expect(sampleValue(samples, "holdshelf_leases_released_total", { queue: "jobs", reason })).toBe(0);
    }
  });

  it("counts sends, deliveries and deletes, and times processing and queue wait on the broker's clock", async () => {
    await sendBatch(h.broker, "jobs", [{ body: Buffer.from("a") }, { body: Buffer.from("b") }]);
    await sendText(h, "jobs", "c");
    h.clock.advance(500); // waiting on the shelf
    const first = await receiveOne(h, "jobs");
    h.clock.advance(2000); // being processed
    await h.broker.delete("jobs", first.receiptHandle);

    const samples = await scrape();
    expect(sampleValue(samples, "holdshelf_messages_sent_total", jobs)).toBe(3);
    expect(sampleValue(samples, "holdshelf_messages_received_total", jobs)).toBe(1);
    expect(sampleValue(samples, "holdshelf_messages_redelivered_total", jobs)).toBe(0);
    expect(sampleValue(samples, "holdshelf_messages_deleted_total", jobs)).toBe(1);
    expect(sampleValue(samples, "holdshelf_message_processing_seconds_count", jobs)).toBe(1);
    expect(sampleValue(samples, "holdshelf_message_processing_seconds_sum", jobs)).toBe(2);
    expect(sampleValue(samples, "holdshelf_message_processing_seconds_bucket", { queue: "jobs", le: "1" })).toBe(0);
    expect(sampleValue(samples, "holdshelf_message_processing_seconds_bucket", { queue: "jobs", le: "2.5" })).toBe(1);
    expect(sampleValue(samples, "holdshelf_message_queue_wait_seconds_count", jobs)).toBe(1);
    expect(sampleValue(samples, "holdshelf_message_queue_wait_seconds_sum", jobs)).toBe(0.5);
  });

  it("counts an expired lease, how late its message came back, and its redelivery (without a second queue wait)", async () => {
    await sendAndReceive(h, "jobs");
    h.clock.advance(vt + 40); // the timer fires at the deadline; maintenance runs 40 ms later
    await h.broker.runMaintenance();
    const again = await receiveOne(h, "jobs");
    expect(again.receiveCount).toBe(2);

    const samples = await scrape();
    expect(sampleValue(samples, "holdshelf_leases_expired_total", jobs)).toBe(1);
    expect(sampleValue(samples, "holdshelf_messages_received_total", jobs)).toBe(2);
    expect(sampleValue(samples, "holdshelf_messages_redelivered_total", jobs)).toBe(1);
    expect(sampleValue(samples, "holdshelf_message_queue_wait_seconds_count", jobs)).toBe(1);
    expect(sampleValue(samples, "holdshelf_redelivery_lateness_seconds_count")).toBe(1);
    // The fake clock fires the queue's timer exactly at the deadline.
    expect(sampleValue(samples, "holdshelf_redelivery_lateness_seconds_sum")).toBe(0);
  });

  it("counts extensions and releases by how they came: ChangeVisibility, Heartbeat, or a broken stream", async () => {
    const extended = await sendAndReceive(h, "jobs", "extended");
    await h.broker.changeVisibility("jobs", extended.receiptHandle, 20_000);
    const released = await sendAndReceive(h, "jobs", "released");
    await h.broker.changeVisibilityBatch("jobs", [released.receiptHandle], 0);
    const stream = h.broker.streams.open({ leasesExpired: () => undefined, brokerClosing: () => undefined });
    const renewed = await sendAndReceive(h, "jobs", "renewed");
    const dropped = await sendAndReceive(h, "jobs", "dropped");
    await h.broker.streams.renew(stream, "jobs", [
      { receiptHandle: renewed.receiptHandle },
      { receiptHandle: dropped.receiptHandle, visibilityTimeoutMs: 0 },
    ]);
    const held = await h.broker.streams.close(stream, true);
    expect(held).toBe(1);

    const samples = await scrape();
    const extendedVia = (via: string) =>
      sampleValue(samples, "holdshelf_leases_extended_total", { queue: "jobs", via });
    const releasedFor = (reason: string) =>
      sampleValue(samples, "holdshelf_leases_released_total", { queue: "jobs", reason });
    expect([extendedVia("change_visibility"), extendedVia("heartbeat")]).toEqual([1, 1]);
    expect([releasedFor("change_visibility"), releasedFor("heartbeat"), releasedFor("disconnect")]).toEqual([1, 1, 1]);
  });

  it("counts dead-lettered messages by source and dead-letter queue, from 0 once a policy names the queue", async () => {
    await createQueue(h, "jobs-dlq");
    await createQueue(h, "risky", {
      visibilityTimeoutMs: vt,
      redrivePolicy: { deadLetterQueue: "jobs-dlq", maxReceiveCount: 1 },
    });
    const labels = { queue: "risky", dead_letter_queue: "jobs-dlq" };
    expect(sampleValue(await scrape(), "holdshelf_messages_dead_lettered_total", labels)).toBe(0);

    await sendAndReceive(h, "risky");
    h.clock.advance(vt);
    await h.broker.runMaintenance();

    const samples = await scrape();
    expect(sampleValue(samples, "holdshelf_messages_dead_lettered_total", labels)).toBe(1);
    expect(sampleValue(samples, "holdshelf_messages", { queue: "jobs-dlq", state: "visible" })).toBe(1);
  });

  it("counts messages moved by move tasks, by source queue", async () => {
    await createQueue(h, "jobs-retry");
    await sendText(h, "jobs", "a");
    await sendText(h, "jobs", "b");
    await h.broker.startMessageMoveTask("jobs", "jobs-retry", 0);
    await h.broker.settled();
    expect(sampleValue(await scrape(), "holdshelf_messages_moved_by_tasks_total", jobs)).toBe(2);
  });

  it("counts a FIFO queue's repeated sends as deduplicated, not sent", async () => {
    await createQueue(h, "orders.fifo", { fifo: true });
    const order = { body: Buffer.from("o"), messageGroupId: "customer-1", deduplicationId: "order-1" };
    await send(h.broker, "orders.fifo", order);
    await sendBatch(h.broker, "orders.fifo", [order, { ...order, deduplicationId: "order-2" }]);
    const samples = await scrape();
    const orders = { queue: "orders.fifo" };
    expect(sampleValue(samples, "holdshelf_messages_sent_total", orders)).toBe(2);
    expect(sampleValue(samples, "holdshelf_messages_deduplicated_total", orders)).toBe(1);
  });

  it("counts retention expiries and empty receives", async () => {
    await createQueue(h, "short", { retentionMs: 60_000 });
    await sendText(h, "short", "old");
    await sendText(h, "short", "older");
    h.clock.advance(60_000);
    await h.broker.runMaintenance();
    expect(await h.broker.receive("short")).toEqual([]);
    const abandoned = new AbortController();
    abandoned.abort();
    await h.broker.receive("short", { signal: abandoned.signal });

    const samples = await scrape();
    expect(sampleValue(samples, "holdshelf_messages_expired_total", { queue: "short" })).toBe(2);
    // A receive its caller abandoned is not an empty receive.
    expect(sampleValue(samples, "holdshelf_empty_receives_total", { queue: "short" })).toBe(1);
  });

  it("reads depth by state, oldest age, visibility timeout and open streams at scrape time", async () => {
    await sendText(h, "jobs", "visible");
    h.clock.advance(3000);
    await sendText(h, "jobs", "delayed", { delayMs: 60_000 });
    await sendAndReceive(h, "jobs", "in flight");
    h.broker.streams.open({ leasesExpired: () => undefined, brokerClosing: () => undefined });

    const samples = await scrape();
    const state = (name: string) => sampleValue(samples, "holdshelf_messages", { queue: "jobs", state: name });
    // The receive took the oldest ready message ("visible"), so one of the others is left visible.
    expect([state("visible"), state("in_flight"), state("delayed")]).toEqual([1, 1, 1]);
    expect(sampleValue(samples, "holdshelf_oldest_message_age_seconds", jobs)).toBe(3);
    expect(sampleValue(samples, "holdshelf_queue_visibility_timeout_seconds", jobs)).toBe(vt / 1000);
    expect(sampleValue(samples, "holdshelf_heartbeat_streams")).toBe(1);
  });

  it("reports true gauges after a restart, read from the reloaded broker", async () => {
    await sendText(h, "jobs", "waiting");
    await sendAndReceive(h, "jobs", "leased");
    await h.restart();
    metrics = new BrokerMetrics((registry = new Registry()));
    metrics.observe(h.broker);

    const samples = await scrape();
    expect(sampleValue(samples, "holdshelf_messages", { queue: "jobs", state: "visible" })).toBe(1);
    expect(sampleValue(samples, "holdshelf_messages", { queue: "jobs", state: "in_flight" })).toBe(1);
  });

  it("drops a deleted queue's series, so labels stay bounded by the queues that exist", async () => {
    await sendText(h, "jobs", "m");
    expect(sampleValue(await scrape(), "holdshelf_messages_sent_total", jobs)).toBe(1);
    await h.broker.deleteQueue("jobs");

    const samples = await scrape();
    expect(samples.filter((sample) => sample.labels.queue === "jobs")).toEqual([]);
  });
});
