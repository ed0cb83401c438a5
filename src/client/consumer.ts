import { status } from "@grpc/grpc-js";
import { LeaseEnding } from "../protocol/lease-state-reason.js";
import { maxCheckpointBytes, maxReceiveMessages } from "../protocol/limits.js";
import { monotonicClock, type Clock, type Timer } from "../time/clock.js";
import { backoffDelayMs } from "./backoff.js";
import { LeaseKeeper, type HeldLease } from "./lease-keeper.js";
import { LeaseLostError } from "./lease-lost-error.js";
import type { QueueClient } from "./queue-client.js";
import { retryDelayOf } from "./retry-later.js";
import { RpcError } from "./rpc-error.js";
import type { ReceivedMessage } from "./types.js";

/** What a handler gets besides its message. */
export interface HandlerContext {
  /**
   * Aborts, with a LeaseLostError, when the lease is lost (the message may
   * now go to another consumer) or when stop() gives the message back after
   * its grace period. The handler should then stop: its work will be redone.
   */
  readonly signal: AbortSignal;
  /** The latest checkpoint: the one this delivery brought, or the last this handler saved. */
  readonly lastCheckpoint: Uint8Array | undefined;
  /**
   * Stores progress (at most 64 KiB) durably with the message, in a renewal
   * sent at once; resolves once stored, so that a later delivery carries it.
   * Rejects with LeaseLostError if the lease is lost first.
   */
  checkpoint(bytes: Uint8Array): Promise<void>;
}

/**
 * Works on one message. Resolving deletes it. Throwing ends its lease as a
 * failed delivery: it comes back after the queue's retry backoff (at once
 * without a retry policy; to the dead-letter queue once its redrive
 * policy's receives are spent), or after the error's retryDelayMs when it
 * has one (see RetryLater). On a FIFO queue, the later messages of its group
 * that the same receive leased are then given back unhandled, to come again
 * behind it, so that the group's order holds.
 */
export type MessageHandler = (message: ReceivedMessage, context: HandlerContext) => Promise<void> | void;

/** How a Consumer works; every option has a default. */
export interface ConsumerOptions {
  /**
   * The most messages worked on, and so leased, at once. Default 1. On a
   * FIFO queue it serves different message groups: one group's messages are
   * handled one at a time, in send order, even when one receive leases
   * several of them (they wait their turn, leased, in a slot).
   */
  readonly concurrency?: number | undefined;
  /** Lease length of receives and renewals. Default: the queue's, read when the consumer starts. */
  readonly visibilityTimeoutMs?: number | undefined;
  /** A lease is renewed after this fraction of its length, a little earlier with jitter. Default 1/3. */
  readonly renewFraction?: number | undefined;
  /** Long-poll wait of each receive, 0 to 20000. Default 20000. */
  readonly waitTimeMs?: number | undefined;
  /** How long stop() waits for running handlers before it releases their messages. Default 10000. */
  readonly stopGraceMs?: number | undefined;
  /** Told of every failure: a handler's (with its message), a receive's, a delete's, a stream's. Default console.error. */
  readonly onError?: ((error: unknown, message?: ReceivedMessage) => void) | undefined;
  /**
   * Times the renewals, the retry backoff and stop()'s grace period; a test
   * passes a fake one. Default: the monotonic clock (performance.now()).
   */
  readonly clock?: Clock | undefined;
}

/** The slice of QueueClient a Consumer uses. */
export type ConsumerClient = Pick<
  QueueClient,
  "getQueue" | "receive" | "delete" | "changeVisibilityBatch" | "heartbeat"
>;

// After the grace period, stop() gives the releases and the stream's clean
// end this long before it cuts the stream.
const closeTimeoutMs = 5_000;
// One attempt of a handled message's delete; a silent connection then counts as no broker answering.
const deleteTimeoutMs = 30_000;

interface Job {
  readonly message: ReceivedMessage;
  /** Aborted when the lease is lost or stop() gives the message back: the handler's signal. */
  readonly controller: AbortController;
  /** Aborted only when stop() gives the message back: cancels a delete still being tried. */
  readonly givenBack: AbortController;
  readonly lease: HeldLease;
  /**
   * FIFO queues: resolves to whether the message received before this one
   * in the same receive and group was deleted; undefined for the first of
   * its group, and on a standard queue.
   */
  readonly previousInGroup: Promise<boolean> | undefined;
  /** stop() gave the message back: whatever the handler does now is ignored. */
  abandoned: boolean;
  /** Resolves when the handler has finished and its message is settled: true if it was deleted. */
  done: Promise<boolean>;
}

/**
 * A receive loop that runs a handler on each message with a concurrency
 * limit, leasing no more messages than it has free slots. A LeaseKeeper holds
 * every lease on one Heartbeat stream until its message settles.
 */
export class Consumer {
  private readonly concurrency: number;
  private readonly visibilityTimeoutMs: number | undefined;
  private readonly renewFraction: number;
  private readonly waitTimeMs: number;
  private readonly stopGraceMs: number;
  private readonly onError: (error: unknown, message?: ReceivedMessage) => void;
  private readonly clock: Clock;
  private readonly stopController = new AbortController();
  private readonly jobs = new Set<Job>();
  private readonly loop: Promise<void>;
  private keeper: LeaseKeeper | undefined;
  private slotFreed: (() => void) | undefined;
  private stopping: Promise<void> | undefined;

  constructor(
    private readonly client: ConsumerClient,
    /** The queue this consumer receives from. */
    readonly queue: string,
    private readonly handler: MessageHandler,
    options: ConsumerOptions = {},
  ) {
    this.concurrency = check("concurrency", options.concurrency ?? 1, (n) => Number.isInteger(n) && n >= 1);
    this.visibilityTimeoutMs =
      options.visibilityTimeoutMs === undefined
        ? undefined
        : check("visibilityTimeoutMs", options.visibilityTimeoutMs, (n) => Number.isInteger(n) && n > 0);
    this.renewFraction = check("renewFraction", options.renewFraction ?? 1 / 3, (n) => n > 0 && n < 1);
    this.waitTimeMs = check("waitTimeMs", options.waitTimeMs ?? 20_000, (n) => Number.isInteger(n) && n >= 0);
    this.stopGraceMs = check("stopGraceMs", options.stopGraceMs ?? 10_000, (n) => n >= 0);
    this.onError =
      options.onError ?? ((error, message) => console.error("holdshelf consumer:", error, message?.messageId ?? ""));
    this.clock = options.clock ?? monotonicClock;
    this.loop = this.run();
  }

  /** How many messages are being worked on or settled now. */
  get active(): number {
    return this.jobs.size;
  }

  /**
   * Stops receiving, waits up to stopGraceMs for running handlers, releases
   * the messages of those still running (aborting their signals), and
   * half-closes the Heartbeat stream. Calling it again returns the same promise.
   */
  stop(): Promise<void> {
    return (this.stopping ??= this.shutdown());
  }

  private async run(): Promise<void> {
    const signal = this.stopController.signal;
    const leaseMs = await this.leaseLength(signal);
    if (leaseMs === undefined || signal.aborted) return;
    const keeper = new LeaseKeeper({
      queue: this.queue,
      openStream: () => this.client.heartbeat(),
      visibilityTimeoutMs: this.visibilityTimeoutMs,
      leaseMs,
      renewFraction: this.renewFraction,
      onError: (error) => this.report(error),
      clock: this.clock,
    });
    this.keeper = keeper;
    let failures = 0;
    while (!signal.aborted) {
      await this.freeSlot();
      if (signal.aborted) break;
      let messages: ReceivedMessage[];
      try {
        messages = await this.client.receive(this.queue, {
          maxMessages: Math.min(maxReceiveMessages, this.concurrency - this.jobs.size),
          visibilityTimeoutMs: this.visibilityTimeoutMs,
          waitTimeMs: this.waitTimeMs,
          signal,
        });
        failures = 0;
      } catch (error) {
        if (signal.aborted) break;
        this.report(error);
        await this.pause(backoffDelayMs(failures++), signal);
        continue;
      }
      const receivedAt = this.clock.now();
      if (signal.aborted) {
        // The answer beat the cancellation: these were never worked on.
        await this.giveBack(messages);
        break;
      }
      // A FIFO group's messages come in order, and each waits for the one before it (see work).
      const lastOfGroup = new Map<string, Promise<boolean>>();
      for (const message of messages) {
        const group = message.messageGroupId;
        const done = this.start(message, keeper, receivedAt, group === undefined ? undefined : lastOfGroup.get(group));
        if (group !== undefined) lastOfGroup.set(group, done);
      }
    }
  }

  /** The lease length renewals are paced by: the option, or the queue's visibility timeout. */
  private async leaseLength(signal: AbortSignal): Promise<number | undefined> {
    if (this.visibilityTimeoutMs !== undefined) return this.visibilityTimeoutMs;
    for (let failures = 0; !signal.aborted; ) {
      try {
        return (await this.client.getQueue(this.queue)).config.visibilityTimeoutMs;
      } catch (error) {
        this.report(error);
        await this.pause(backoffDelayMs(failures++), signal);
      }
    }
    return undefined;
  }

  private freeSlot(): Promise<void> {
    if (this.jobs.size < this.concurrency || this.stopController.signal.aborted) return Promise.resolve();
    return new Promise((resolve) => (this.slotFreed = resolve));
  }

  private wake(): void {
    const resolve = this.slotFreed;
    this.slotFreed = undefined;
    resolve?.();
  }

  /** Starts a message's job; returns its `done`. */
  private start(
    message: ReceivedMessage,
    keeper: LeaseKeeper,
    receivedAt: number,
    previousInGroup: Promise<boolean> | undefined,
  ): Promise<boolean> {
    const controller = new AbortController();
    const lease = keeper.hold(message.receiptHandle, receivedAt, (error) => controller.abort(error));
    let lastCheckpoint = message.checkpoint;
    const context: HandlerContext = {
      signal: controller.signal,
      get lastCheckpoint() {
        return lastCheckpoint;
      },
      async checkpoint(bytes) {
        // Refused here: the broker's refusal would read as a refused renewal and abort the handler.
        if (bytes.length > maxCheckpointBytes)
          throw new RangeError(`a checkpoint is at most ${maxCheckpointBytes} bytes, not ${bytes.length}`);
        await lease.checkpoint(bytes);
        lastCheckpoint = bytes;
      },
    };
    const job: Job = {
      message,
      controller,
      givenBack: new AbortController(),
      lease,
      previousInGroup,
      abandoned: false,
      done: Promise.resolve(false),
    };
    this.jobs.add(job);
    job.done = this.work(job, context).finally(() => {
      this.jobs.delete(job);
      this.wake();
    });
    return job.done;
  }

  /** Runs the handler, then deletes the message or releases it; resolves to whether it was deleted. */
  private async work(job: Job, context: HandlerContext): Promise<boolean> {
    const { message, lease } = job;
    if (job.previousInGroup !== undefined) {
      const previousDeleted = await job.previousInGroup;
      // Given back by stop(), or lost while it waited its turn.
      if (job.abandoned || job.controller.signal.aborted) return false;
      if (!previousDeleted || this.stopController.signal.aborted) {
        // The message before it in its group is still in the queue (its
        // handler failed, its lease was lost, stop() gave it back): handled
        // now, this one would overtake it. Given back, it comes again behind
        // it; and once stop() began, no handler starts (consumer-fifo.test.ts).
        await lease.release(0).catch((error: unknown) => this.report(error, message));
        return false;
      }
    }
    let failure: { error: unknown } | undefined;
    try {
      await this.handler(message, context);
    } catch (error) {
      failure = { error };
    }
    if (job.abandoned) return false;
    try {
      if (failure === undefined) {
        await this.deleteHandled(job);
        return true;
      }
      this.report(failure.error, message);
      await lease.fail(retryDelayOf(failure.error));
    } catch (error) {
      this.report(error, message);
    }
    return false;
  }

  /**
   * Deletes a handled message. A delete that fails for want of a broker (one
   * restarting, a queue moving between brokers, a lost connection) is tried
   * again with backoff while the lease is still held and renewed, since
   * giving up would have the finished work done again; it stops when the
   * lease is lost or stop() gives the message back.
   */
  private async deleteHandled(job: Job): Promise<void> {
    const { message, lease, controller, givenBack } = job;
    try {
      for (let failures = 0; ; failures++) {
        try {
          // Tried even after the lease was lost: if nobody received the
          // message since, the finished work is not done again. Bounded, so
          // that a connection that went silent cannot hold the slot forever.
          await this.client.delete(this.queue, message.receiptHandle, {
            signal: givenBack.signal,
            timeoutMs: deleteTimeoutMs,
          });
          return;
        } catch (error) {
          if (!isTransient(error) || controller.signal.aborted) throw error;
          this.report(error, message);
          await this.pause(backoffDelayMs(failures), controller.signal);
        }
      }
    } finally {
      lease.drop();
    }
  }

  private async shutdown(): Promise<void> {
    this.stopController.abort();
    this.wake();
    await this.loop;
    const keeper = this.keeper;
    if (keeper === undefined) return;
    await this.within(Promise.all([...this.jobs].map((job) => job.done)), this.stopGraceMs);
    for (const job of this.jobs) {
      job.abandoned = true;
      job.controller.abort(new LeaseLostError(job.message.receiptHandle, LeaseEnding.RELEASED));
      job.givenBack.abort();
      // Settled by keeper.close, which waits for every pending release; a
      // refused or unsent release is reported.
      job.lease.release(0).catch((error: unknown) => this.report(error, job.message));
    }
    await keeper.close(closeTimeoutMs);
  }

  /** Releases messages received after stop() began; never renewed, so no renewal can race the release. */
  private async giveBack(messages: readonly ReceivedMessage[]): Promise<void> {
    if (messages.length === 0) return;
    try {
      const results = await this.client.changeVisibilityBatch(
        this.queue,
        messages.map((m) => m.receiptHandle),
        0,
      );
      for (const result of results) if (result.error !== undefined) this.report(result.error);
    } catch (error) {
      this.report(error);
    }
  }

  /** Waits ms, or less if the signal aborts first. */
  private pause(ms: number, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        timer.cancel();
        signal.removeEventListener("abort", done);
        resolve();
      };
      const timer: Timer = this.clock.setTimer(ms, done);
      signal.addEventListener("abort", done, { once: true });
    });
  }

  /** Waits for a promise, but no longer than ms. */
  private async within(promise: Promise<unknown>, ms: number): Promise<void> {
    let timer: Timer | undefined;
    await Promise.race([
      promise,
      new Promise((resolve) => (timer = this.clock.setTimer(ms, () => resolve(undefined)))),
    ]);
    timer?.cancel();
  }

  private report(error: unknown, message?: ReceivedMessage): void {
    try {
      this.onError(error, message);
    } catch {
      // A throwing onError must not stop the receive loop or the stream reader.
    }
  }
}

/** Whether a failed call may well succeed if tried again soon: no broker answered it, or the queue is moving. */
function isTransient(error: unknown): boolean {
  return error instanceof RpcError && (error.code === status.UNAVAILABLE || error.code === status.DEADLINE_EXCEEDED);
}

function check(name: string, value: number, valid: (n: number) => boolean): number {
  if (!valid(value)) throw new RangeError(`ConsumerOptions.${name} is out of range: ${value}`);
  return value;
}
