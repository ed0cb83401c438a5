import { createQueue, runPipeline } from "../pipeline.js";
import { measureWindow, percentiles, resultOf, type Scenario, type ScenarioResult } from "../scenario.js";

const bodyBytes = 100 * 1024;
/** Ten 100 KiB bodies make a 1 MiB SendBatch and at most a 1 MiB Receive answer. */
const shape = { producers: 4, consumers: 4, batch: 10, bodyBytes } as const;
const warmupMessages = 500;
/** HTTP/2's own default window, which most gRPC clients start from. */
const http2DefaultWindowBytes = 65_535;

/** The client's HTTP/2 receive window of one row. */
interface ClientWindow {
  readonly label: string;
  /** grpc-js's channel option, or undefined for holdshelf's client default (src/net/http2-receive-window.ts). */
  readonly windowBytes: number | undefined;
}

const rows: readonly ClientWindow[] = [
  { label: "client window 64 KiB (HTTP/2's default)", windowBytes: http2DefaultWindowBytes },
  { label: "client window 4 MiB (holdshelf's client)", windowBytes: undefined },
];

/**
 * Scenario 10: scenario 1's pipeline with 100 KiB bodies (SendBatch 10,
 * Receive 10 + DeleteBatch), each row on a fresh broker (which grants 4 MiB
 * windows), with the client's window at HTTP/2's 64 KiB and at holdshelf's
 * 4 MiB: what flow control costs large messages, and what the window pays.
 */
export const largeBodies: Scenario = {
  name: "large",
  sizeMeaning: "100 KiB messages moved end to end, per row",
  defaultSize: 5_000,
  async run(context) {
    const messages = context.size ?? this.defaultSize;
    const results: ScenarioResult[] = [];
    for (const row of rows) {
      const broker = await context.startBroker();
      const channelOptions = row.windowBytes === undefined ? {} : { "grpc-node.flow_control_window": row.windowBytes };
      await createQueue(broker.address, "bench");
      await runPipeline(broker.address, { queue: "bench", messages: warmupMessages, ...shape, channelOptions });
      context.log(`large: ${messages} messages of 100 KiB, ${row.label}`);
      const { window, value: latencies } = await measureWindow(broker, () =>
        runPipeline(broker.address, { queue: "bench", messages, ...shape, channelOptions }),
      );
      const result = resultOf(`10 100 KiB bodies, ${row.label}`, messages, window, percentiles(latencies));
      results.push({
        ...result,
        extra: { ...result.extra, mebibytesPerSecond: Math.round((result.messagesPerSecond * bodyBytes) / 2 ** 20) },
      });
      await broker.stop();
    }
    const [base] = results;
    return results.map((result) => ({
      ...result,
      extra: { ...result.extra, ratioTo64KiB: Number((result.messagesPerSecond / base!.messagesPerSecond).toFixed(2)) },
    }));
  },
};
