/**
 * Scenario 13: what the SQS endpoint costs over gRPC. The same load, 4
 * producers sending batches of 10 and 4 consumers receiving up to 10 and
 * deleting them in one batch, 1 KiB bodies, once over gRPC (SendBatch,
 * Receive, DeleteBatch with the raw rpc client, as scenario 1) and once
 * through the SQS endpoint with @aws-sdk/client-sqs (SendMessageBatch,
 * ReceiveMessage, DeleteMessageBatch; MD5 checks and `maxAttempts` at the
 * SDK's defaults). Batches are 10, not scenario 1's 100: SQS allows no more.
 *
 * Each API runs on a broker process of its own, both started the same way
 * (SQS endpoint on, no signatures or tokens), one after the other, each
 * stopped before the next starts: each row starts from an empty store, and
 * under --profile each broker's profile holds one API's window only
 * (sqs-1.cpuprofile gRPC, sqs-2.cpuprofile SQS), which a single broker
 * serving both windows would mix in one summary.
 */
import { createRequire } from "node:module";
import { createQueue, runPipeline } from "../pipeline.js";
import { measureBrokerCpuSplit } from "../broker-cpu-split.js";
import { percentiles, resultOf, type Scenario, type ScenarioContext, type ScenarioResult } from "../scenario.js";
import { runSqsPipeline, sqsQueueUrl } from "../sqs-pipeline.js";

/** Producers, consumers and batch of both rows. */
const shape = { producers: 4, consumers: 4, batch: 10 } as const;
const warmupMessages = 5_000;
const queue = "bench";
const sdkVersion = (createRequire(import.meta.url)("@aws-sdk/client-sqs/package.json") as { version: string }).version;

export const sqsEndpoint: Scenario = {
  name: "sqs",
  sizeMeaning: "messages moved end to end, per API",
  defaultSize: 60_000,
  async run(context) {
    const messages = context.size ?? this.defaultSize;
    const grpc = await measureApi(context, "gRPC", messages);
    const sqs = await measureApi(context, "SQS", messages);
    const ratio = (of: (row: ScenarioResult) => number | undefined): number =>
      Number(((of(sqs) ?? NaN) / (of(grpc) ?? NaN)).toFixed(2));
    return [
      grpc,
      {
        ...sqs,
        extra: {
          ...sqs.extra,
          rateVsGrpc: ratio((row) => row.messagesPerSecond),
          brokerMicrosVsGrpc: ratio((row) => row.brokerCpuMicrosPerMessage),
          clientMicrosVsGrpc: ratio((row) => row.clientCpuMicrosPerMessage),
        },
      },
    ];
  },
};

/** One row: a fresh broker, a warm-up, the measured pipeline over one API, the broker stopped. */
async function measureApi(context: ScenarioContext, api: "gRPC" | "SQS", messages: number): Promise<ScenarioResult> {
  const broker = await context.startBroker(undefined, { sqs: true });
  try {
    await createQueue(broker.address, queue);
    const shapeText = `${shape.producers} producers and ${shape.consumers} consumers, batches of ${shape.batch}`;
    if (api === "gRPC") {
      context.log(`sqs: gRPC: warm-up of ${warmupMessages} messages`);
      await runPipeline(broker.address, { queue, messages: warmupMessages, ...shape });
      context.log(`sqs: gRPC: ${messages} messages, ${shapeText}`);
      const {
        window,
        value: latencies,
        split,
      } = await measureBrokerCpuSplit(broker, messages, () =>
        runPipeline(broker.address, { queue, messages, ...shape }),
      );
      return resultOf(
        "13 gRPC: SendBatch 10, Receive 10 + DeleteBatch (rpc client)",
        messages,
        window,
        percentiles(latencies),
        split,
      );
    }
    const queueUrl = await sqsQueueUrl(broker.sqsUrl!, queue);
    context.log(`sqs: SQS endpoint: warm-up of ${warmupMessages} messages`);
    await runSqsPipeline(broker.sqsUrl!, { queueUrl, messages: warmupMessages, ...shape });
    context.log(`sqs: SQS endpoint: ${messages} messages, ${shapeText}`);
    const {
      window,
      value: outcome,
      split,
    } = await measureBrokerCpuSplit(broker, messages, () =>
      runSqsPipeline(broker.sqsUrl!, { queueUrl, messages, ...shape }),
    );
    return resultOf(
      "13 SQS endpoint: SendMessageBatch 10, ReceiveMessage 10 + DeleteMessageBatch (@aws-sdk/client-sqs)",
      messages,
      window,
      percentiles(outcome.latencies),
      {
        ...split,
        sdk: `@aws-sdk/client-sqs ${sdkVersion}, JSON protocol, MD5 checks on, maxAttempts 3 (defaults), SigV4-signed, unchecked`,
        ...(outcome.retriedCalls > 0 ? { retriedCalls: outcome.retriedCalls } : {}),
      },
    );
  } finally {
    await broker.stop();
  }
}
