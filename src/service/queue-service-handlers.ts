import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import {
  CancelMessageMoveTaskResponseSchema,
  ChangeVisibilityBatchResponseSchema,
  ChangeVisibilityResponseSchema,
  CreateQueueResponseSchema,
  DeleteBatchResponseSchema,
  DeleteQueueResponseSchema,
  DeleteResponseSchema,
  DiscardMessageResponseSchema,
  GetQueueResponseSchema,
  ListMessageMoveTasksResponseSchema,
  ListQueuesResponseSchema,
  MoveMessageResponseSchema,
  PurgeQueueResponseSchema,
  RedriveMessagesResponseSchema,
  SendBatchResponseSchema,
  SendResponseSchema,
  StartMessageMoveTaskResponseSchema,
  UpdateQueueResponseSchema,
  type QueueService,
} from "../../gen/holdshelf/v1/queue_service_pb.js";
import type { QueueOperations } from "../broker/broker-slices.js";
import type { Logger } from "../logging/logger.js";
import { auditMessageAction } from "./message-audit.js";
import { peekPageToWire } from "./peek-wire.js";
import { queueUpdateFromWire } from "./queue-update-wire.js";
import { ReceivedDeliveries } from "./received-deliveries.js";
import {
  durationToMs,
  moveTaskToWire,
  outcomeToWire,
  queueConfigFromWire,
  queueToWire,
  typedAttributesFromWire,
} from "./wire-convert.js";
import type { UnaryHandlers } from "./unary-handlers.js";

/**
 * The QueueService RPCs: each translates its request for the broker and the
 * broker's answer for the wire, and nothing more; the per-message admin
 * actions are also written to `logger` (the audit).
 */
export function queueServiceHandlers(broker: QueueOperations, logger: Logger): UnaryHandlers<typeof QueueService> {
  return {
    async createQueue(request) {
      const queue = await broker.createQueue(request.name, queueConfigFromWire(request.config));
      return create(CreateQueueResponseSchema, { queue: queueToWire(queue) });
    },
    async getQueue(request) {
      // A queue's dead-letter sources may be on other brokers (cluster mode): read them now.
      await broker.refreshDeadLetterSources();
      return create(GetQueueResponseSchema, { queue: queueToWire(broker.getQueue(request.name)) });
    },
    async listQueues(request, _signal, context) {
      await broker.refreshDeadLetterSources();
      const page = broker.listQueues(request.prefix, request.pageSize, request.pageToken, context.canSee);
      return create(ListQueuesResponseSchema, {
        queues: page.queues.map(queueToWire),
        nextPageToken: page.nextPageToken,
      });
    },
    async updateQueue(request) {
      const { config, fields } = queueUpdateFromWire(request);
      const queue = await broker.updateQueue(request.name, config, fields);
      return create(UpdateQueueResponseSchema, { queue: queueToWire(queue) });
    },
    async deleteQueue(request) {
      await broker.deleteQueue(request.name);
      return create(DeleteQueueResponseSchema);
    },
    async purgeQueue(request) {
      const purged = await broker.purgeQueue(request.name);
      return create(PurgeQueueResponseSchema, { purgedCount: BigInt(purged) });
    },
    async send(request) {
      const result = await broker.sendWithResult(request.queue, {
        body: request.body,
        attributes: request.attributes,
        typedAttributes: typedAttributesFromWire(request.typedAttributes),
        delayMs: durationToMs(request.delay, "delay"),
        messageGroupId: request.messageGroupId,
        deduplicationId: request.deduplicationId,
        traceHeader: request.traceHeader,
      });
      return create(SendResponseSchema, result);
    },
    async sendBatch(request) {
      const messages = request.entries.map((entry, index) => ({
        body: entry.body,
        attributes: entry.attributes,
        typedAttributes: typedAttributesFromWire(entry.typedAttributes),
        delayMs: durationToMs(entry.delay, `entries[${index}].delay`),
        messageGroupId: entry.messageGroupId,
        deduplicationId: entry.deduplicationId,
        traceHeader: entry.traceHeader,
      }));
      const results = await broker.sendBatchWithResults(request.queue, messages);
      // Empty on a standard queue, as the proto says, rather than a list of empty strings.
      const sequenceNumbers = results[0]?.sequenceNumber === "" ? [] : results.map((result) => result.sequenceNumber);
      return create(SendBatchResponseSchema, {
        messageIds: results.map((result) => result.messageId),
        sequenceNumbers,
      });
    },
    async receive(request, signal) {
      const deliveries = await broker.receive(request.queue, {
        maxMessages: request.maxMessages,
        visibilityTimeoutMs: durationToMs(request.visibilityTimeout, "visibility_timeout"),
        waitTimeMs: durationToMs(request.waitTime, "wait_time"),
        signal,
      });
      return new ReceivedDeliveries(deliveries);
    },
    async delete(request) {
      await broker.delete(request.queue, request.receiptHandle);
      return create(DeleteResponseSchema);
    },
    async deleteBatch(request) {
      const outcomes = await broker.deleteBatch(request.queue, request.receiptHandles);
      return create(DeleteBatchResponseSchema, { results: outcomes.map(outcomeToWire) });
    },
    async changeVisibility(request) {
      const deadline = await broker.changeVisibility(
        request.queue,
        request.receiptHandle,
        durationToMs(request.visibilityTimeout, "visibility_timeout"),
      );
      return create(ChangeVisibilityResponseSchema, { leaseDeadline: timestampFromMs(deadline) });
    },
    async redriveMessages(request, signal) {
      const moved = await broker.redriveMessages(
        request.deadLetterQueue,
        request.destinationQueue,
        Number(request.maxMessages),
        request.maxPerSecond,
        signal,
      );
      return create(RedriveMessagesResponseSchema, { movedCount: BigInt(moved) });
    },
    async startMessageMoveTask(request) {
      const taskHandle = await broker.startMessageMoveTask(
        request.sourceQueue,
        request.destinationQueue,
        request.maxPerSecond,
      );
      return create(StartMessageMoveTaskResponseSchema, { taskHandle });
    },
    async listMessageMoveTasks(request) {
      const tasks = broker.listMessageMoveTasks(request.sourceQueue, request.maxResults);
      return create(ListMessageMoveTasksResponseSchema, { tasks: tasks.map(moveTaskToWire) });
    },
    async cancelMessageMoveTask(request) {
      const moved = await broker.cancelMessageMoveTask(request.taskHandle);
      return create(CancelMessageMoveTaskResponseSchema, { movedCount: BigInt(moved) });
    },
    async peekMessages(request) {
      return peekPageToWire(await broker.peekMessages(request.queue, request.pageSize, request.pageToken));
    },
    async discardMessage(request, _signal, context) {
      await broker.discardMessage(request.queue, request.messageId);
      auditMessageAction(logger, context, {
        action: "DiscardMessage",
        queue: request.queue,
        messageId: request.messageId,
      });
      return create(DiscardMessageResponseSchema);
    },
    async moveMessage(request, _signal, context) {
      const destinationQueue = await broker.moveMessage(request.queue, request.messageId, request.destinationQueue);
      auditMessageAction(logger, context, {
        action: "MoveMessage",
        queue: request.queue,
        messageId: request.messageId,
        destinationQueue,
      });
      return create(MoveMessageResponseSchema, { destinationQueue });
    },
    async changeVisibilityBatch(request) {
      const outcomes = await broker.changeVisibilityBatch(
        request.queue,
        request.receiptHandles,
        durationToMs(request.visibilityTimeout, "visibility_timeout"),
      );
      return create(ChangeVisibilityBatchResponseSchema, { results: outcomes.map(outcomeToWire) });
    },
  };
}
