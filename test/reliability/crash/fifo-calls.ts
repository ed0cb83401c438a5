import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { callOptions, type Epoch } from "./crash-epoch.js";
import { fifoDeduplicationId, fifoUid, makeFifoBody, parseFifoBody, type FifoBodyContent } from "./fifo-bodies.js";
import type { FifoDeliveryRecord, FifoLedger } from "./fifo-ledger.js";
import type { FifoQueue } from "./fifo-queues.js";
import type { Lease, ReceiveRequest } from "./lease-calls.js";

/** What the broker answered for one message of a FIFO send. */
export interface FifoSendAnswer {
  readonly messageId: string;
  readonly sequenceNumber: string;
}

/**
 * Sends 1 to 10 messages to a FIFO queue (a Send for one, a SendBatch, all
 * or nothing, otherwise), each naming its group and, where the queue takes
 * ids, its deduplication id; resolves with each message's id and sequence
 * number in entry order (undefined where the answer leaves one out);
 * throws when the call fails.
 */
export async function sendFifo(
  epoch: Epoch,
  queue: FifoQueue,
  contents: readonly FifoBodyContent[],
): Promise<(FifoSendAnswer | undefined)[]> {
  const fields = (content: FifoBodyContent) => ({
    body: makeFifoBody(content),
    messageGroupId: content.group,
    ...(queue.deduplication === "id" ? { deduplicationId: fifoDeduplicationId(content) } : {}),
  });
  if (contents.length === 1) {
    const { messageId, sequenceNumber } = await epoch.rpc.send(
      { queue: queue.name, ...fields(contents[0]!) },
      callOptions(),
    );
    return [{ messageId, sequenceNumber }];
  }
  const { messageIds, sequenceNumbers } = await epoch.rpc.sendBatch(
    { queue: queue.name, entries: contents.map(fields) },
    callOptions(),
  );
  return contents.map((_, i) => {
    const messageId = messageIds[i];
    const sequenceNumber = sequenceNumbers[i];
    return messageId === undefined || sequenceNumber === undefined ? undefined : { messageId, sequenceNumber };
  });
}

/** A lease on a FIFO message. */
export interface FifoLease extends Lease {
  readonly delivery: FifoDeliveryRecord;
}

/**
 * Receives from a FIFO queue and records each delivery with its group,
 * counter, FIFO fields and place in the answer; returns [] when the call
 * fails. The leases work with lease-calls.ts's deleteLeases and changeLeases.
 */
export async function receiveFifo(
  epoch: Epoch,
  ledger: FifoLedger,
  queue: FifoQueue,
  request: ReceiveRequest,
  drain = false,
): Promise<FifoLease[]> {
  const start = Date.now();
  try {
    const { messages } = await epoch.rpc.receive(
      {
        queue: queue.name,
        maxMessages: request.maxMessages,
        visibilityTimeout: durationFromMs(request.visibilityMs),
        waitTime: durationFromMs(request.waitMs),
      },
      callOptions(),
    );
    const end = Date.now();
    const receive = ledger.nextReceive();
    return messages.map((message, position) => {
      const content = parseFifoBody(message.body);
      const delivery: FifoDeliveryRecord = {
        messageId: message.messageId,
        uid: fifoUid(content),
        queue: queue.name,
        handle: message.receiptHandle,
        start,
        end,
        visibilityMs: request.visibilityMs,
        receiveCount: message.receiveCount,
        drain,
        wire: "grpc",
        group: content.group,
        counter: content.counter,
        messageGroupId: message.messageGroupId,
        sequenceNumber: message.sequenceNumber,
        deduplicationId: message.deduplicationId,
        receive,
        position,
      };
      ledger.deliveries.push(delivery);
      return { delivery, poison: false };
    });
  } catch (error) {
    ledger.failure(error, `Receive from ${queue.name}`, epoch.killing);
    return [];
  }
}
