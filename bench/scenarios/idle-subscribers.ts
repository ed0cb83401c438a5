/**
 * Scenario 18, idle subscribers: 10,000 Subscribe streams on empty queues,
 * held open for a window; what they cost the broker in CPU (a share of one
 * core) and memory (its resident set at the window's end, and how much the
 * streams added to it).
 *
 * The streams are spread over connections of at most 500 streams each (the
 * broker allows 1,000 per connection by default) and over queues of at most
 * 500 subscribers each (1,000 by default), at least 10 of each. Each stream
 * asks for a credit of 32 messages, as scenario 16's Consumer does. They
 * are opened raw (idle-subscribe-streams.ts): this process only holds them.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { appLoadShape } from "../app-load.js";
import { requireValue, scrapeBroker } from "../broker-scrape.js";
import { openIdleSubscribeStreams } from "../idle-subscribe-streams.js";
import { createQueue } from "../pipeline.js";
import { sampleProcess } from "../proc-stats.js";
import { measureWindow, resultOf, type Scenario } from "../scenario.js";

const perConnection = 500;
const perQueue = 500;
const minimumSpread = 10;
// After the streams open: the broker's allocations settle and its setup's GC runs.
const settleSeconds = 5;
const windowSeconds = 30;
const target = { cpuPercent: 5, rssMb: 200 } as const;

export const idleSubscribers: Scenario = {
  name: "idle-subscribers",
  sizeMeaning: "idle Subscribe streams held open",
  defaultSize: 10_000,
  async run(context) {
    const streams = context.size ?? this.defaultSize;
    const connections = Math.max(minimumSpread, Math.ceil(streams / perConnection));
    const queues = Array.from(
      { length: Math.max(minimumSpread, Math.ceil(streams / perQueue)) },
      (_, index) => `idle-${index}`,
    );
    const broker = await context.startBroker();
    for (const queue of queues) await createQueue(broker.address, queue);
    const beforeStreams = sampleProcess(broker.pid);
    const heapBefore = await heapUsedMb(broker.metricsAddress);
    context.log(
      `idle-subscribers: opening ${streams} streams over ${connections} connections and ${queues.length} queues`,
    );
    const open = await openIdleSubscribeStreams({
      address: broker.address,
      streams,
      connections,
      queues,
      maxOutstandingMessages: appLoadShape.concurrency,
    });
    try {
      await sleep(settleSeconds * 1000);
      context.log(`idle-subscribers: holding them for ${windowSeconds} s`);
      const { window } = await measureWindow(broker, () => sleep(windowSeconds * 1000));
      const end = sampleProcess(broker.pid);
      // The broker's own count: every stream is still subscribed at the window's end.
      const samples = await scrapeBroker(broker.metricsAddress);
      const subscribed = requireValue(samples, "holdshelf_subscribers");
      if (open.errors.length > 0) throw new Error(`${open.errors.length} streams ended: ${open.errors[0]}`);
      const rssMb = end.rssBytes / 2 ** 20;
      const result = resultOf("18 idle subscribers", 0, window, undefined, {
        streams,
        subscribed,
        connections,
        queues: queues.length,
        brokerCpuPercent: Number(window.brokerCpuPercent.toFixed(2)),
        brokerRssMb: Number(rssMb.toFixed(1)),
        rssBeforeStreamsMb: Number((beforeStreams.rssBytes / 2 ** 20).toFixed(1)),
        heapUsedBeforeStreamsMb: heapBefore,
        heapUsedMb: toMb(requireValue(samples, "nodejs_heap_size_used_bytes")),
        rssPerStreamKb: Number(((end.rssBytes - beforeStreams.rssBytes) / 1024 / streams).toFixed(2)),
      });
      const met = result.brokerCpuPercent! <= target.cpuPercent && rssMb <= target.rssMb;
      return [
        {
          ...result,
          messagesPerSecond: NaN,
          target: { text: `<= ${target.cpuPercent}% of a core, RSS <= ${target.rssMb} MB`, met },
        },
      ];
    } finally {
      await open.close();
    }
  },
};

/** The broker's V8 heap in use, in MB: the rest of its RSS is native (nghttp2's sessions and streams, buffers, LevelDB). */
async function heapUsedMb(metricsAddress: string): Promise<number> {
  return toMb(requireValue(await scrapeBroker(metricsAddress), "nodejs_heap_size_used_bytes"));
}

function toMb(bytes: number): number {
  return Number((bytes / 2 ** 20).toFixed(1));
}
