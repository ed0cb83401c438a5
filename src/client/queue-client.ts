import { durationFromMs, timestampDate } from "@bufbuild/protobuf/wkt";
import {
  entryResultFromWire,
  messageFromWire,
  moveTaskFromWire,
  peekedMessageFromWire,
  queueConfigToWire,
  queueFromWire,
  sendEntryToWire,
  updateMaskToWire,
} from "./client-convert.js";
import { Consumer, type ConsumerOptions, type MessageHandler } from "./consumer.js";
import { sendResult } from "./fifo-convert.js";
import { HeartbeatStream } from "./heartbeat-stream.js";
import { PublishBatcher, type BatchingOptions } from "./publish-batcher.js";
import { createQueueServiceRpc, type QueueServiceRpc, type QueueServiceRpcOptions } from "./rpc-client.js";
import { SubscribeStream } from "./subscribe-stream.js";
import type {
  CallLimits,
  EntryResult,
  ListQueuesOptions,
  MessageBody,
  MoveTask,
  MoveTaskOptions,
  PeekOptions,
  PeekPage,
  Queue,
  QueueConfigInput,
  QueuePage,
  ReceivedMessage,
  ReceiveOptions,
  RedriveOptions,
  SendBatchEntry,
  SendOptions,
  SendResult,
  UpdateQueueOptions,
} from "./types.js";

/** Options of a QueueClient: how to reach the server, and how send() batches. */
export type QueueClientOptions = QueueServiceRpcOptions & {
  /**
   * How send() and sendWithResult() gather concurrent sends into SendBatch
   * calls, per queue. Default: up to 100 sends or 1 MiB, after 1 ms;
   * delayMs 0 sends each alone. sendBatch() is never batched further.
   */
  readonly batching?: BatchingOptions | undefined;
};

/**
 * A client of a holdshelf broker: one promise-returning method per RPC, with
 * durations in milliseconds, times as Dates, and failures as RpcError
 * carrying the gRPC code and the stable reason.
 */
export class QueueClient {
  private readonly rpc: QueueServiceRpc & { close(): void };
  private readonly batcher: PublishBatcher;

  constructor(address: string, options: QueueClientOptions = {}) {
    this.rpc = createQueueServiceRpc(address, options);
    this.batcher = new PublishBatcher(
      {
        send: (queue, entry) => this.sendAlone(queue, entry),
        sendBatch: (queue, entries) => this.sendBatchWithResults(queue, entries),
      },
      options.batching,
    );
  }

  /** Creates a queue; creating an existing one with the same configuration returns it. */
  async createQueue(name: string, config?: QueueConfigInput): Promise<Queue> {
    return queueFromWire((await this.rpc.createQueue({ name, config: queueConfigToWire(config) })).queue);
  }

  /** Returns a queue with its configuration and counts. */
  async getQueue(name: string): Promise<Queue> {
    return queueFromWire((await this.rpc.getQueue({ name })).queue);
  }

  /** Lists queues in name order, a page at a time. */
  async listQueues(options: ListQueuesOptions = {}): Promise<QueuePage> {
    const page = await this.rpc.listQueues({
      prefix: options.prefix ?? "",
      pageSize: options.pageSize ?? 0,
      pageToken: options.pageToken ?? "",
    });
    return { queues: page.queues.map(queueFromWire), nextPageToken: page.nextPageToken };
  }

  /**
   * Changes a queue's configuration: with `fields`, only those, and with
   * `tagKeys` only those tags (the rest keep their current values); without
   * either, the config replaces the whole configuration and unset fields
   * take their defaults.
   */
  async updateQueue(name: string, config?: QueueConfigInput, options: UpdateQueueOptions = {}): Promise<Queue> {
    const updateMask = updateMaskToWire(options);
    const request = { name, config: queueConfigToWire(config), ...(updateMask === undefined ? {} : { updateMask }) };
    return queueFromWire((await this.rpc.updateQueue(request)).queue);
  }

  /** Deletes a queue and all its messages. */
  async deleteQueue(name: string): Promise<void> {
    await this.rpc.deleteQueue({ name });
  }

  /** Removes every message of a queue; returns how many were removed. */
  async purgeQueue(name: string): Promise<number> {
    return Number((await this.rpc.purgeQueue({ name })).purgedCount);
  }

  /** Stores one message; returns its id (for a FIFO queue's duplicate, the first send's). See sendWithResult for its sequence number. */
  async send(queue: string, body: MessageBody, options: SendOptions = {}): Promise<string> {
    return (await this.sendWithResult(queue, body, options)).messageId;
  }

  /**
   * Stores one message; returns its id and, on a FIFO queue, its sequence
   * number (a duplicate's: the first send's). Concurrent sends to a queue go
   * together in one SendBatch (see QueueClientOptions.batching), each with
   * its own result or error, in send order.
   */
  sendWithResult(queue: string, body: MessageBody, options: SendOptions = {}): Promise<SendResult> {
    return this.batcher.publish(queue, { ...options, body });
  }

  private async sendAlone(queue: string, entry: SendBatchEntry): Promise<SendResult> {
    const response = await this.rpc.send({ queue, ...sendEntryToWire(entry) });
    return sendResult(response.messageId, response.sequenceNumber);
  }

  /** Stores 1 to 100 messages atomically; returns their ids in entry order. See sendBatchWithResults for sequence numbers. */
  async sendBatch(queue: string, entries: readonly SendBatchEntry[]): Promise<string[]> {
    return (await this.sendBatchWithResults(queue, entries)).map((result) => result.messageId);
  }

  /**
   * Stores 1 to 100 messages atomically; returns their ids and, on a FIFO
   * queue, sequence numbers, in entry order. A FIFO entry that repeats an
   * earlier deduplication id is not stored and gets the first one's.
   */
  async sendBatchWithResults(queue: string, entries: readonly SendBatchEntry[]): Promise<SendResult[]> {
    const response = await this.rpc.sendBatch({ queue, entries: entries.map(sendEntryToWire) });
    return response.messageIds.map((messageId, index) => sendResult(messageId, response.sequenceNumbers[index]));
  }

  /** Leases up to maxMessages visible messages, waiting up to waitTimeMs for one; empty if none came. */
  async receive(queue: string, options: ReceiveOptions = {}): Promise<ReceivedMessage[]> {
    const response = await this.rpc.receive(
      {
        queue,
        maxMessages: options.maxMessages ?? 0,
        ...(options.visibilityTimeoutMs === undefined
          ? {}
          : { visibilityTimeout: durationFromMs(options.visibilityTimeoutMs) }),
        ...(options.waitTimeMs === undefined ? {} : { waitTime: durationFromMs(options.waitTimeMs) }),
      },
      { signal: options.signal },
    );
    return response.messages.map(messageFromWire);
  }

  /**
   * Reads a page of a queue's messages, oldest first, without leasing or
   * counting them (needs admin on the queue). Pass the page's nextPageToken
   * as pageToken for the next page.
   */
  async peekMessages(queue: string, options: PeekOptions = {}): Promise<PeekPage> {
    const page = await this.rpc.peekMessages({
      queue,
      pageSize: options.pageSize ?? 0,
      pageToken: options.pageToken ?? "",
    });
    return { messages: page.messages.map(peekedMessageFromWire), nextPageToken: page.nextPageToken };
  }

  /**
   * Deletes one message by its id, whatever its state, without a receipt
   * handle (needs admin on the queue): an operator's discard. A consumer
   * holding it in flight finds it gone.
   */
  async discardMessage(queue: string, messageId: string): Promise<void> {
    await this.rpc.discardMessage({ queue, messageId });
  }

  /**
   * Moves one message by its id, whatever its state, to destinationQueue or,
   * with "", back to the queue that dead-lettered it, as a redrive moves it
   * (needs admin on the queue, and on a named destination). Returns the
   * queue it went to.
   */
  async moveMessage(queue: string, messageId: string, destinationQueue = ""): Promise<string> {
    return (await this.rpc.moveMessage({ queue, messageId, destinationQueue })).destinationQueue;
  }

  /** Deletes the message a receipt handle names: the acknowledgement. */
  async delete(queue: string, receiptHandle: string, options: CallLimits = {}): Promise<void> {
    await this.rpc.delete(
      { queue, receiptHandle },
      {
        signal: options.signal,
        ...(options.timeoutMs === undefined ? {} : { deadline: Date.now() + options.timeoutMs }),
      },
    );
  }

  /** Deletes several messages; one result per handle, in order. */
  async deleteBatch(queue: string, receiptHandles: readonly string[]): Promise<EntryResult[]> {
    const response = await this.rpc.deleteBatch({ queue, receiptHandles: [...receiptHandles] });
    return response.results.map(entryResultFromWire);
  }

  /** Sets a lease's deadline to now + visibilityTimeoutMs (0 releases the message); returns the new deadline. */
  async changeVisibility(queue: string, receiptHandle: string, visibilityTimeoutMs: number): Promise<Date> {
    const response = await this.rpc.changeVisibility({
      queue,
      receiptHandle,
      visibilityTimeout: durationFromMs(visibilityTimeoutMs),
    });
    return response.leaseDeadline === undefined ? new Date(0) : timestampDate(response.leaseDeadline);
  }

  /** Changes several leases; one result per handle, in order. */
  async changeVisibilityBatch(
    queue: string,
    receiptHandles: readonly string[],
    visibilityTimeoutMs: number,
  ): Promise<EntryResult[]> {
    const response = await this.rpc.changeVisibilityBatch({
      queue,
      receiptHandles: [...receiptHandles],
      visibilityTimeout: durationFromMs(visibilityTimeoutMs),
    });
    return response.results.map(entryResultFromWire);
  }

  /**
   * Moves visible messages out of a dead-letter queue, oldest first, back to
   * each one's source queue or to options.destinationQueue; they arrive
   * visible with receive count 0. Returns how many moved, once all have.
   */
  async redriveMessages(deadLetterQueue: string, options: RedriveOptions = {}): Promise<number> {
    const response = await this.rpc.redriveMessages(
      {
        deadLetterQueue,
        destinationQueue: options.destinationQueue ?? "",
        maxMessages: BigInt(options.maxMessages ?? 0),
        maxPerSecond: options.maxPerSecond ?? 0,
      },
      { signal: options.signal },
    );
    return Number(response.movedCount);
  }

  /**
   * Starts a message move task: a redrive in the background, durable, of the
   * messages visible in sourceQueue now. Returns its handle (opaque) for
   * cancelMessageMoveTask; listMessageMoveTasks shows its progress.
   */
  async startMessageMoveTask(sourceQueue: string, options: MoveTaskOptions = {}): Promise<string> {
    const response = await this.rpc.startMessageMoveTask({
      sourceQueue,
      destinationQueue: options.destinationQueue ?? "",
      maxPerSecond: options.maxPerSecond ?? 0,
    });
    return response.taskHandle;
  }

  /** A source queue's most recent message move tasks, newest first: maxResults 1 to 10 (default 1). */
  async listMessageMoveTasks(sourceQueue: string, maxResults = 1): Promise<MoveTask[]> {
    const response = await this.rpc.listMessageMoveTasks({ sourceQueue, maxResults });
    return response.tasks.map(moveTaskFromWire);
  }

  /** Stops a running message move task after its current move; returns how many messages it moved. */
  async cancelMessageMoveTask(taskHandle: string): Promise<number> {
    return Number((await this.rpc.cancelMessageMoveTask({ taskHandle })).movedCount);
  }

  /** Opens a Heartbeat stream to renew leases, save checkpoints and hear of leases lost. */
  heartbeat(): HeartbeatStream {
    return new HeartbeatStream(this.rpc.heartbeat());
  }

  /**
   * Opens a Subscribe stream: its first request names the queue and flow
   * control, then the broker pushes deliveries and answers acks and renewals.
   * A Consumer does all this for you.
   */
  subscribe(): SubscribeStream {
    return new SubscribeStream(this.rpc.subscribe());
  }

  /** Starts a Consumer: a loop that runs handler on each message, holding its lease until it settles. */
  consume(queue: string, handler: MessageHandler, options: ConsumerOptions = {}): Consumer {
    return new Consumer(this, queue, handler, options);
  }

  /** Sends what send() still gathers, then closes the channel; calls still running fail. Stop consumers first. */
  close(): Promise<void> {
    if (!this.batcher.busy) {
      this.rpc.close();
      return Promise.resolve();
    }
    return this.batcher.flush().finally(() => this.rpc.close());
  }
}
