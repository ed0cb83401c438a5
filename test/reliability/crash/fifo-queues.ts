import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { DeduplicationScope } from "../../../gen/holdshelf/v1/queue_pb.js";
import { callOptions, type Epoch } from "./crash-epoch.js";

/** How a FIFO queue of the run tells a repeated send: by the deduplication id sent, or by the body's SHA-256. */
export type DeduplicationKind = "id" | "content";

/** A FIFO queue of the run. */
export interface FifoQueue {
  readonly name: string;
  readonly deduplication: DeduplicationKind;
}

/** Deduplicates by the id each send names, across the whole queue. */
export const ORDERS: FifoQueue = { name: "orders.fifo", deduplication: "id" };
/** Deduplicates by content, per message group (SQS's high-throughput mode): sends name no id. */
export const PAYMENTS: FifoQueue = { name: "payments.fifo", deduplication: "content" };
/** Every FIFO queue, in the order the drain empties them. */
export const FIFO_QUEUES = [ORDERS, PAYMENTS] as const;
/** Every lease the FIFO workload takes or extends lasts 1 to 3 s: a failed message blocks its group that long. */
export const FIFO_MIN_VISIBILITY_MS = 1000;
export const FIFO_MAX_VISIBILITY_MS = 3000;

/** Creates the FIFO queues (idempotent, so it is safe on every start). */
export async function createFifoQueues(epoch: Epoch): Promise<void> {
  const visibilityTimeout = durationFromMs(2000);
  await epoch.rpc.createQueue({ name: ORDERS.name, config: { visibilityTimeout, fifo: true } }, callOptions());
  await epoch.rpc.createQueue(
    {
      name: PAYMENTS.name,
      config: {
        visibilityTimeout,
        fifo: true,
        contentBasedDeduplication: true,
        deduplicationScope: DeduplicationScope.MESSAGE_GROUP,
      },
    },
    callOptions(),
  );
}
