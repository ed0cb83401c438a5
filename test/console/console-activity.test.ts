// The console's activity API against known loads: the rate figures equal
// the events sent over the window the answer names, arrivals count in the
// destination's rates, and the overview and cluster routes answer as the
// contract says, for an admin token and for a token that may not read the
// brokers' status.
import { afterEach, describe, expect, it, vi } from "vitest";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { makeToken } from "../security/auth-harness.js";
import { startConsoleHarness, type ConsoleBrowser, type ConsoleHarness } from "./console-harness.js";

// Sampled every half second: the list's window (30 intervals) is 15 s, longer than any of these tests.
const history = { sampleIntervalMs: 500, samples: 60 };

interface Row {
  name: string;
  rates: Record<string, number[]> & { t: number[] };
  averageRates: Record<string, number>;
  rateWindowMs: number;
}

async function rowOf(browser: ConsoleBrowser, name: string): Promise<Row> {
  const list = (await browser.api("GET", "/api/queues")).body;
  return list.queues.find((row: Row) => row.name === name);
}

/** The events a row's sparkline counts: each point's rate over its interval, the first's ending the window's start. */
function sparklineEvents(row: Row, rate: string): number {
  const { t } = row.rates;
  let events = 0;
  for (let index = 0; index < t.length; index++) {
    const intervalMs = index === 0 ? row.rateWindowMs - (t[t.length - 1]! - t[0]!) : t[index]! - t[index - 1]!;
    events += (row.rates[rate]![index]! * intervalMs) / 1000;
  }
  return events;
}

/** Waits until the history has sampled every queue named: from then on their events are rates. */
async function sampled(browser: ConsoleBrowser, ...names: string[]): Promise<void> {
  await vi.waitFor(
    async () => {
      for (const name of names) expect((await rowOf(browser, name)).rates.t.length, name).toBeGreaterThan(0);
    },
    { timeout: 10_000, interval: 50 },
  );
}

describe("the console's rates", () => {
  let h: ConsoleHarness;
  afterEach(() => h.stop());

  it("gives a list row's rate as the events sent over the window its sparkline covers, and says the window", async () => {
    h = await startConsoleHarness({ history });
    const browser = h.browser();
    await browser.session();
    await browser.api("POST", "/api/queues", { name: "jobs" });
    await sampled(browser, "jobs");
    const rpc = h.rpc();
    const sent = 12;
    for (let i = 0; i < sent; i++) await rpc.send({ queue: "jobs", body: new TextEncoder().encode(`m${i}`) });
    await vi.waitFor(
      async () => {
        const row = await rowOf(browser, "jobs");
        expect((row.averageRates.sent! * row.rateWindowMs) / 1000).toBeCloseTo(sent, 6);
      },
      { timeout: 10_000, interval: 100 },
    );
    const list = (await browser.api("GET", "/api/queues")).body;
    expect(list.rateWindowMs).toBe(30 * history.sampleIntervalMs);
    const row = list.queues[0] as Row;
    // The figure is N over the window, and the sparkline's points add up to the same N.
    expect(row.averageRates.sent).toBeCloseTo(sent / (row.rateWindowMs / 1000), 9);
    expect(sparklineEvents(row, "sent")).toBeCloseTo(sent, 6);
    expect(row.rateWindowMs).toBeGreaterThan(0);
    expect(row.rates.t.length).toBe(row.rates.sent!.length);
    expect(row.averageRates.arrived).toBe(0);
  });

  it("counts dead-lettered and moved messages as arrivals in the queue they reach", async () => {
    h = await startConsoleHarness({ history });
    const browser = h.browser();
    await browser.session();
    await browser.api("POST", "/api/queues", { name: "jobs-dlq" });
    await browser.api("POST", "/api/queues", { name: "target" });
    await browser.api("POST", "/api/queues", {
      name: "jobs",
      config: { redrivePolicy: { deadLetterQueue: "jobs-dlq", maxReceiveCount: 1 } },
    });
    await sampled(browser, "jobs", "jobs-dlq", "target");
    const rpc = h.rpc();
    for (let i = 0; i < 2; i++) await rpc.send({ queue: "jobs", body: new TextEncoder().encode(`m${i}`) });
    const first = await rpc.receive({ queue: "jobs", maxMessages: 10 });
    for (const message of first.messages) {
      await rpc.changeVisibility({
        queue: "jobs",
        receiptHandle: message.receiptHandle,
        visibilityTimeout: durationFromMs(0),
      });
    }
    // Their second delivery would pass max_receive_count: they go to the dead-letter queue instead.
    await vi.waitFor(
      async () => {
        await rpc.receive({ queue: "jobs", maxMessages: 10 });
        expect((await browser.api("GET", "/api/queues/jobs-dlq")).body.queue.stats.visible).toBe(2);
      },
      { timeout: 10_000, interval: 100 },
    );
    const eventsOf = async (queue: string, rate: string): Promise<number> => {
      const row = await rowOf(browser, queue);
      return (row.averageRates[rate]! * row.rateWindowMs) / 1000;
    };
    await vi.waitFor(
      async () => {
        expect(await eventsOf("jobs-dlq", "arrived")).toBeCloseTo(2, 6);
        expect(await eventsOf("jobs", "deadLettered")).toBeCloseTo(2, 6);
      },
      { timeout: 10_000, interval: 100 },
    );
    expect(await eventsOf("jobs-dlq", "sent")).toBe(0);
    const started = await browser.api("POST", "/api/queues/jobs-dlq/move-tasks", { destinationQueue: "target" });
    expect(started.status).toBe(200);
    await vi.waitFor(async () => expect(await eventsOf("target", "arrived")).toBeCloseTo(2, 6), {
      timeout: 10_000,
      interval: 100,
    });
    // The queue page's series carry the arrivals too, and end at the page's "Now".
    const detail = (await browser.api("GET", "/api/queues/target")).body;
    expect(detail.history.arrived.slice(0, -1).some((value: number) => value > 0)).toBe(true);
    expect(detail.history.arrived.at(-1)).toBeNull();
    expect(detail.history.visible.at(-1)).toBe(detail.queue.stats.visible);
    expect(detail.servedBy).toBeNull();
  });
});

describe("the console's overview and cluster routes", () => {
  let h: ConsoleHarness;
  afterEach(() => h.stop());

  it("answers the whole broker's totals, rates, brokers and attention to an admin token", async () => {
    const ops = makeToken("ops", { queues: "*", allow: ["admin", "send", "receive"] });
    h = await startConsoleHarness({ history, tokens: [ops] });
    const browser = h.browser();
    await browser.signIn(ops.token);
    await browser.api("POST", "/api/queues", { name: "busy", config: { maxInFlight: 1 } });
    await browser.api("POST", "/api/queues", { name: "busy-dlq" });
    await browser.api("PUT", "/api/queues/busy", {
      config: { maxInFlight: 1, redrivePolicy: { deadLetterQueue: "busy-dlq", maxReceiveCount: 5 } },
    });
    await sampled(browser, "busy");
    const rpc = h.rpc(ops.token);
    for (let i = 0; i < 3; i++) await rpc.send({ queue: "busy", body: new TextEncoder().encode(`m${i}`) });
    await rpc.receive({ queue: "busy", maxMessages: 1 });
    await vi.waitFor(
      async () => {
        const overview = (await browser.api("GET", "/api/overview")).body;
        expect(overview.rates.sent.reduce((sum: number, value: number) => sum + value, 0)).toBeGreaterThan(0);
      },
      { timeout: 10_000, interval: 100 },
    );
    const overview = await browser.api("GET", "/api/overview");
    expect(overview.status).toBe(200);
    expect(overview.body).toMatchObject({
      sampleIntervalMs: 500,
      rateWindowMs: 15_000,
      totals: { queues: 2, visible: 2, inFlight: 1, delayed: 0, deadLetterDepth: 0 },
      consumers: { heartbeatStreams: 0, subscribeStreams: 0 },
      brokersDenied: null,
      attention: [{ queue: "busy", reasons: ["at-max-in-flight"] }],
      truncated: false,
    });
    const [broker] = overview.body.brokers;
    expect(broker).toMatchObject({
      nodeId: null,
      version: expect.stringMatching(/^\d+\.\d+\.\d+/),
      storage: "leveldb",
      state: "serving",
    });
    expect(broker.uptimeMs).toBeGreaterThanOrEqual(0);
    expect(broker.budgets).toContainEqual({ name: "max-stored-messages", used: 3, limit: 5_000_000, unit: "messages" });
    expect(broker.budgets).toContainEqual({ name: "max-queues", used: 2, limit: 10_000, unit: "queues" });
    for (const series of ["t", "sent", "received", "deleted", "deadLettered", "arrived"])
      expect(overview.body.rates[series].length, series).toBe(overview.body.rates.t.length);
    expect(await browser.api("GET", "/api/cluster")).toMatchObject({ status: 200, body: { clustered: false } });
    expect((await browser.api("POST", "/api/overview", {})).status).toBe(405);
    expect((await browser.api("GET", "/api/overview/more")).status).toBe(404);
  });

  it("shows a token without admin on every queue its own queues, and no brokers or cluster", async () => {
    const ops = makeToken("ops", { queues: "*", allow: ["admin", "send", "receive"] });
    const sender = makeToken("orders-sender", { queues: "orders-*", allow: ["send"] });
    h = await startConsoleHarness({ history, tokens: [ops, sender] });
    const admin = h.rpc(ops.token);
    for (const name of ["orders-1", "billing"]) await admin.createQueue({ name });
    await admin.send({ queue: "billing", body: new TextEncoder().encode("secret") });
    const browser = h.browser();
    await browser.signIn(sender.token);
    const overview = await browser.api("GET", "/api/overview");
    expect(overview.status).toBe(200);
    expect(overview.body).toMatchObject({
      totals: { queues: 1, visible: 0 },
      brokers: null,
      consumers: null,
      brokersDenied: expect.stringContaining("admin on every queue"),
    });
    // The Cluster page's answer says why in words, as the overview's does, not a refusal.
    const cluster = await browser.api("GET", "/api/cluster");
    expect(cluster.status).toBe(200);
    expect(cluster.body).toEqual({ clustered: null, denied: expect.stringContaining("admin on every queue") });
    // The queue list's activity shows only the token's queues too.
    const list = (await browser.api("GET", "/api/queues")).body;
    expect(list.queues.map((row: Row) => row.name)).toEqual(["orders-1"]);
  });
});
