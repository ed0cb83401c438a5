/**
 * Scenario 4: redelivery precision. `size` messages (default 100,000) are
 * sent and received, never deleted, and their leases are then set so that
 * the deadlines are spread evenly over 10 s: for each message, how long
 * after its lease deadline it became receivable again (p50 / p99 / p99.9 /
 * max lateness), and how many came back before their deadline (early).
 *
 * How: SendBatch 100 from 4 producers; Receive 100 from 4 consumers with a
 * 10 min lease; then ChangeVisibilityBatch, 100 handles a call, gives slice
 * k (messages 100k to 100k+99) the deadline T + k × 10 s / slices, where T
 * leaves room for that setup to finish first. Each message's deadline is the
 * one the broker reported. Meanwhile consumers long-poll Receive (100, wait
 * 1 s, 10 min lease) and record, per message, the wall clock at the
 * Receive's return minus its deadline; broker and client share the
 * machine's clock.
 *
 * That client-side lateness includes the redelivering Receive's own durable
 * lease write (an fsync) and the loopback round trip, not only the broker's
 * timer; so the broker's own view, the holdshelf_redelivery_lateness_seconds
 * histogram (deadline to visible), is scraped before and after and its p99
 * estimated from the buckets.
 */
import { durationFromMs, timestampMs } from "@bufbuild/protobuf/wkt";
import { setTimeout as sleep } from "node:timers/promises";
import { createQueueServiceRpc, type QueueServiceRpc } from "../../src/client/rpc-client.js";
import { histogramBuckets, scrapeBroker, type Buckets } from "../broker-scrape.js";
import { progressLog, receiveMessages, sendMessages, withChannels } from "../bulk-load.js";
import { measureWindow, percentiles, resultOf, type Scenario } from "../scenario.js";

const queue = "bench";
const spreadMs = 10_000;
/** Leases of the first receive and of the redeliveries: far longer than the scenario, so none runs out by accident. */
const longLeaseMs = 10 * 60_000;
const producers = 4;
const consumers = 4;
/** ChangeVisibilityBatch calls in flight at once while the deadlines are set. */
const setters = 8;
/** How long consumers keep trying after the last deadline before the missing messages are reported. */
const giveUpAfterMs = 30_000;
/** The broker's max_in_flight bound: every message is in flight at once here. */
const maxInFlightBound = 1_000_000;

interface Leased {
  readonly id: string;
  readonly receiptHandle: string;
}

export const redeliveryPrecision: Scenario = {
  name: "redelivery",
  sizeMeaning: "messages whose leases run out",
  defaultSize: 100_000,
  async run(context) {
    const messages = context.size ?? this.defaultSize;
    if (messages > maxInFlightBound)
      throw new Error(`redelivery: --size at most ${maxInFlightBound} (max_in_flight's bound)`);
    const broker = await context.startBroker();
    const admin = createQueueServiceRpc(broker.address);
    try {
      // Every message is in flight at once: raise max_in_flight above its default of 120,000 if needed.
      await admin.createQueue({ name: queue, config: { maxInFlight: Math.max(120_000, messages) } });
    } finally {
      admin.close();
    }

    await sendMessages(
      broker.address,
      queue,
      messages,
      producers,
      progressLog(context.log, "redelivery: sent", messages),
    );
    const leased: Leased[] = [];
    const receiveProgress = progressLog(context.log, "redelivery: received", messages);
    await receiveMessages(broker.address, queue, messages, consumers, longLeaseMs, receiveProgress, (received) => {
      for (const message of received) leased.push({ id: message.messageId, receiptHandle: message.receiptHandle });
    });
    const receiveSeconds = receiveProgress.seconds();

    // Setting the deadlines costs about what receiving cost (a lease write per
    // message), so start the spread well after that setup should have ended.
    const leadMs = 2_000 + 1.5 * receiveSeconds * 1000;
    const firstDeadline = Date.now() + leadMs;
    const slices = Math.ceil(messages / 100);
    const deadlines = new Map<string, number>();
    // The consumers start now, long-polling while nothing is visible, so that none can miss an early deadline.
    const stopConsumers = new AbortController();
    const redelivery = redeliver(
      broker.address,
      deadlines,
      messages,
      firstDeadline + spreadMs + giveUpAfterMs,
      stopConsumers.signal,
    );
    context.log(
      `redelivery: setting ${slices} slices' deadlines over ${spreadMs / 1000} s from ${Math.round(leadMs)} ms from now`,
    );
    try {
      await setDeadlines(
        broker.address,
        leased,
        slices,
        (slice) => firstDeadline + (slice * spreadMs) / slices,
        deadlines,
      );
    } catch (error) {
      stopConsumers.abort();
      await redelivery.catch(() => undefined);
      throw error;
    }
    // No lease can have run out yet, so this is the histogram as the spread
    // begins; reading it now keeps the scrape away from the first deadlines.
    const histogramBefore = await readLatenessHistogram(broker.metricsAddress);
    const spareMs = firstDeadline - Date.now();
    context.log(
      `redelivery: deadlines set with ${Math.round(spareMs)} ms to spare; waiting for ${messages} redeliveries`,
    );

    // The window is the redelivery phase: from just before the first deadline
    // to the last redelivery. Client-side lateness also includes waiting for a
    // free consumer when redeliveries bunch up.
    if (spareMs > 250) await sleep(spareMs - 250);
    const { window, value: outcome } = await measureWindow(broker, () => redelivery);
    const histogramAfter = await readLatenessHistogram(broker.metricsAddress);
    const brokerView = subtractHistograms(histogramAfter, histogramBefore);

    const latency = percentiles(outcome.lateness);
    const missing = messages - outcome.lateness.length;
    const result = resultOf("4 redelivery precision", outcome.lateness.length, window, latency, {
      messages,
      early: outcome.early,
      maxLatenessMs: latency.max,
      ...(missing === 0 ? {} : { missing }),
      ...(outcome.unexpected === 0 ? {} : { unexpected: outcome.unexpected }),
      brokerP99Ms: 1000 * histogramQuantile(0.99, brokerView),
      brokerExpiries: brokerView.at(-1)?.count ?? 0,
      brokerOver100Ms: countAbove(0.1, brokerView),
      setupSpareMs: spareMs,
      "msg/s": "set by the deadlines' spread",
    });
    const met = latency.p99 < 100 && latency.max < 1000 && outcome.early === 0 && missing === 0;
    return [{ ...result, target: { text: "p99 < 100 ms, max < 1 s, 0 early", met } }];
  },
};

/** What the redelivery phase saw. */
interface Redelivered {
  /** Milliseconds from each message's lease deadline to the return of the Receive that got it again; negative if early. */
  readonly lateness: number[];
  readonly early: number;
  /** Messages received twice in this phase, or never given a deadline: none should be. */
  readonly unexpected: number;
}

/**
 * Long-polls from `consumers` channels until every message with a deadline
 * in `deadlines` came back (that map is filled while this runs), or until
 * `giveUpAt` (epoch ms) or an abort.
 */
async function redeliver(
  address: string,
  deadlines: ReadonlyMap<string, number>,
  expected: number,
  giveUpAt: number,
  signal: AbortSignal,
): Promise<Redelivered> {
  const lateness: number[] = [];
  const seen = new Set<string>();
  let early = 0;
  let unexpected = 0;
  const consume = async (rpc: QueueServiceRpc): Promise<void> => {
    while (seen.size < expected && Date.now() < giveUpAt && !signal.aborted) {
      const { messages } = await rpc.receive(
        { queue, maxMessages: 100, waitTime: durationFromMs(1000), visibilityTimeout: durationFromMs(longLeaseMs) },
        { signal },
      );
      const returnedAt = Date.now();
      for (const message of messages) {
        const deadline = deadlines.get(message.messageId);
        if (deadline === undefined || seen.has(message.messageId)) {
          unexpected++;
          continue;
        }
        seen.add(message.messageId);
        const late = returnedAt - deadline;
        if (late < 0) early++;
        lateness.push(late);
      }
    }
  };
  await withChannels(address, consumers, consume);
  return { lateness, early, unexpected };
}

/**
 * Sets every leased message's deadline with ChangeVisibilityBatch, slice by
 * slice in deadline order, and records the deadline the broker reports.
 */
async function setDeadlines(
  address: string,
  leased: readonly Leased[],
  slices: number,
  deadlineOf: (slice: number) => number,
  deadlines: Map<string, number>,
): Promise<void> {
  let next = 0;
  const set = async (rpc: QueueServiceRpc): Promise<void> => {
    for (let slice = next++; slice < slices; slice = next++) {
      const entries = leased.slice(slice * 100, slice * 100 + 100);
      const timeoutMs = Math.round(deadlineOf(slice) - Date.now());
      // A deadline this close would pass before the slices after it are set: the lead was too short.
      if (timeoutMs < 200)
        throw new Error(`redelivery: setting the deadlines took too long (slice ${slice} of ${slices})`);
      const { results } = await rpc.changeVisibilityBatch({
        queue,
        receiptHandles: entries.map((entry) => entry.receiptHandle),
        visibilityTimeout: durationFromMs(timeoutMs),
      });
      results.forEach((result, index) => {
        if (result.code !== 0 || result.leaseDeadline === undefined) {
          throw new Error(`redelivery: ChangeVisibilityBatch failed for a message: ${result.reason} ${result.message}`);
        }
        deadlines.set(entries[index]!.id, timestampMs(result.leaseDeadline));
      });
    }
  };
  await withChannels(address, setters, set);
}

// ---- The broker's lateness histogram ----------------------------------------

/** Reads holdshelf_redelivery_lateness_seconds's buckets from a broker's /metrics. */
async function readLatenessHistogram(metricsAddress: string): Promise<Buckets> {
  return histogramBuckets(await scrapeBroker(metricsAddress), "holdshelf_redelivery_lateness_seconds");
}

function subtractHistograms(after: Buckets, before: Buckets): Buckets {
  return after.map(({ le, count }) => ({ le, count: count - (before.find((bucket) => bucket.le === le)?.count ?? 0) }));
}

/**
 * A quantile estimated as Prometheus' histogram_quantile does: linear within
 * the bucket it falls in, and the highest finite bound if it falls in +Inf.
 */
function histogramQuantile(quantile: number, buckets: Buckets): number {
  const total = buckets.at(-1)?.count ?? 0;
  if (total === 0) return NaN;
  const rank = quantile * total;
  let lowerBound = 0;
  let below = 0;
  for (const { le, count } of buckets) {
    if (count >= rank) {
      if (le === Infinity) return lowerBound;
      return lowerBound + ((le - lowerBound) * (rank - below)) / (count - below);
    }
    lowerBound = le;
    below = count;
  }
  return lowerBound;
}

/** Observations above `seconds`, which must be one of the bucket bounds. */
function countAbove(seconds: number, buckets: Buckets): number {
  const total = buckets.at(-1)?.count ?? 0;
  return total - (buckets.find((bucket) => bucket.le === seconds)?.count ?? NaN);
}
