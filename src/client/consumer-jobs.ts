import { LeaseEnding } from "../protocol/lease-state-reason.js";
import { maxCheckpointBytes } from "../protocol/limits.js";
import type { HandlerContext, MessageHandler } from "./consumer-options.js";
import type { HeldLease } from "./lease-keeper.js";
import { LeaseLostError } from "./lease-lost-error.js";
import { retryDelayOf } from "./retry-later.js";
import type { ReceivedMessage } from "./types.js";

/** One message a consumer works on, from its delivery until it is settled. */
export interface Job {
  readonly message: ReceivedMessage;
  /** Aborted when the lease is lost or stop() gives the message back: the handler's signal. */
  readonly controller: AbortController;
  /** Aborted only when stop() gives the message back: cancels a delete still being tried. */
  readonly givenBack: AbortController;
  readonly lease: HeldLease;
  /**
   * FIFO queues: resolves to whether the message of its group delivered
   * before this one was deleted; undefined for the first of its group held,
   * and on a standard queue.
   */
  readonly previousInGroup: Promise<boolean> | undefined;
  /** stop() gave the message back: whatever the handler does now is ignored. */
  abandoned: boolean;
  /** Resolves when the handler has finished and its message is settled: true if it was deleted. */
  done: Promise<boolean>;
}

/** Deletes a handled message; throws if it could not. */
export type DeleteHandled = (job: Job) => Promise<void>;

/**
 * The messages a consumer works on: runs the handler on each, in its FIFO
 * group's turn, then deletes the message or ends its lease as failed, and
 * frees its slot. Whichever path delivered the message, this is the same.
 */
export class ConsumerJobs {
  private readonly jobs = new Set<Job>();
  private slotFreed: (() => void) | undefined;
  /** Handlers running now. */
  private running = 0;
  private turnWaiters: (() => void)[] = [];

  constructor(
    private readonly handler: MessageHandler,
    private readonly report: (error: unknown, message?: ReceivedMessage) => void,
    /** Aborted once stop() began: a message waiting its turn is then given back, not handled. */
    private readonly stopping: AbortSignal,
    /** The most handlers that run at once. */
    private readonly concurrency: number,
  ) {}

  /** How many messages are being worked on or settled now. */
  get size(): number {
    return this.jobs.size;
  }

  /** Starts a message's job on its lease (whose onLost must abort `controller`); returns its `done`. */
  start(
    message: ReceivedMessage,
    controller: AbortController,
    lease: HeldLease,
    previousInGroup: Promise<boolean> | undefined,
    deleteHandled: DeleteHandled,
  ): Promise<boolean> {
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
    job.done = this.work(job, context, deleteHandled).finally(() => {
      this.jobs.delete(job);
      this.wake();
    });
    return job.done;
  }

  /** Resolves once fewer than `limit` jobs run, or stop() began. */
  freeSlot(limit: number): Promise<void> {
    if (this.jobs.size < limit || this.stopping.aborted) return Promise.resolve();
    return new Promise((resolve) => (this.slotFreed = resolve));
  }

  /** Wakes the waits for a free slot or a handler's turn, which look again (a job ended, or stop() began). */
  wake(): void {
    const resolve = this.slotFreed;
    this.slotFreed = undefined;
    resolve?.();
    this.wakeTurns();
  }

  private wakeTurns(): void {
    const waiters = this.turnWaiters;
    this.turnWaiters = [];
    for (const waiter of waiters) waiter();
  }

  /** Resolves once every job running now is settled. */
  allDone(): Promise<unknown> {
    return Promise.all([...this.jobs].map((job) => job.done));
  }

  /** stop()'s end of the grace period: aborts every handler still running and gives its message back. */
  abandonAll(): void {
    for (const job of this.jobs) {
      job.abandoned = true;
      job.controller.abort(new LeaseLostError(job.message.receiptHandle, LeaseEnding.RELEASED));
      job.givenBack.abort();
      // Settled by the keeper's close, which waits for every pending release;
      // a refused or unsent release is reported.
      job.lease.release(0).catch((error: unknown) => this.report(error, job.message));
    }
  }

  /** Runs the handler, then deletes the message or releases it; resolves to whether it was deleted. */
  private async work(job: Job, context: HandlerContext, deleteHandled: DeleteHandled): Promise<boolean> {
    const { message, lease } = job;
    if (job.previousInGroup !== undefined) {
      const previousDeleted = await job.previousInGroup;
      // Given back by stop(), or lost while it waited its turn.
      if (job.abandoned || job.controller.signal.aborted) return false;
      if (!previousDeleted || this.stopping.aborted) {
        // The message before it in its group is still in the queue (its
        // handler failed, its lease was lost, stop() gave it back): handled
        // now, this one would overtake it. Given back, it comes again behind
        // it; and once stop() began, no handler starts (consumer-fifo.test.ts).
        await lease.release(0).catch((error: unknown) => this.report(error, message));
        return false;
      }
    }
    if (this.running >= this.concurrency) {
      // A lost lease frees its credit on Subscribe while its handler may
      // still run: the broker's next message waits here, leased, for a
      // handler to end, so that no more than `concurrency` run at once.
      while (this.running >= this.concurrency && !this.stopping.aborted) {
        await new Promise<void>((resolve) => this.turnWaiters.push(resolve));
      }
      if (job.abandoned || job.controller.signal.aborted) return false;
      if (this.stopping.aborted) {
        await lease.release(0).catch((error: unknown) => this.report(error, message));
        return false;
      }
    }
    let failure: { error: unknown } | undefined;
    this.running++;
    try {
      await this.handler(message, context);
    } catch (error) {
      failure = { error };
    } finally {
      this.running--;
      this.wakeTurns();
    }
    if (job.abandoned) return false;
    try {
      if (failure === undefined) {
        await deleteHandled(job);
        return true;
      }
      this.report(failure.error, message);
      await lease.fail(retryDelayOf(failure.error));
    } catch (error) {
      this.report(error, message);
    }
    return false;
  }
}
