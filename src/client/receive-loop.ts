import { status } from "@grpc/grpc-js";
import { maxReceiveMessages } from "../protocol/limits.js";
import { backoffDelayMs } from "./backoff.js";
import { pause } from "./clock-waits.js";
import type { ConsumerJobs, Job } from "./consumer-jobs.js";
import type { ConsumerPathSettings } from "./consumer-options.js";
import { heartbeatLeaseChannel } from "./heartbeat-lease-channel.js";
import { leaseLostBeforeDelete } from "./delete-outcome.js";
import { LeaseKeeper } from "./lease-keeper.js";
import { LeaseLostError } from "./lease-lost-error.js";
import { RpcError } from "./rpc-error.js";
import type { ReceivedMessage } from "./types.js";

// One attempt of a handled message's delete; a silent connection then counts as no broker answering.
const deleteTimeoutMs = 30_000;

/**
 * A Consumer's Receive path, for a broker without Subscribe: long-poll
 * Receives for as many messages as it has free slots, every lease held on
 * one Heartbeat stream, and each handled message deleted with a unary call.
 */
export class ReceiveLoop {
  /** Holds the leases of the messages received. */
  readonly keeper: LeaseKeeper;

  constructor(
    private readonly settings: ConsumerPathSettings,
    private readonly jobs: ConsumerJobs,
    private readonly waitTimeMs: number,
  ) {
    const { client, queue } = settings;
    this.keeper = new LeaseKeeper({
      queue,
      openStream: () => heartbeatLeaseChannel(client.heartbeat(), queue),
      visibilityTimeoutMs: settings.visibilityTimeoutMs,
      leaseMs: settings.leaseMs,
      renewFraction: settings.renewFraction,
      onError: (error) => void settings.failed(error),
      clock: settings.clock,
    });
  }

  /** Receives and starts jobs until stop() begins, or a refusal (isConsumerRefusal) stops the consumer. */
  async run(): Promise<void> {
    const { client, queue, concurrency, clock, stopping: signal } = this.settings;
    let failures = 0;
    while (!signal.aborted) {
      await this.jobs.freeSlot(concurrency);
      if (signal.aborted) break;
      let messages: ReceivedMessage[];
      try {
        messages = await client.receive(queue, {
          maxMessages: Math.min(maxReceiveMessages, concurrency - this.jobs.size),
          visibilityTimeoutMs: this.settings.visibilityTimeoutMs,
          waitTimeMs: this.waitTimeMs,
          signal,
        });
        failures = 0;
      } catch (error) {
        if (signal.aborted) break;
        if (this.settings.failed(error)) break;
        await pause(clock, backoffDelayMs(failures++), signal);
        continue;
      }
      const receivedAt = clock.now();
      if (signal.aborted) {
        // The answer beat the cancellation: these were never worked on.
        await this.giveBack(messages);
        break;
      }
      // A FIFO group's messages come in order, and each waits for the one before it (see ConsumerJobs).
      const lastOfGroup = new Map<string, Promise<boolean>>();
      for (const message of messages) {
        const group = message.messageGroupId;
        const controller = new AbortController();
        const lease = this.keeper.hold(message.receiptHandle, receivedAt, (error) => controller.abort(error));
        const previous = group === undefined ? undefined : lastOfGroup.get(group);
        const done = this.jobs.start(message, controller, lease, previous, (job) => this.deleteHandled(job));
        if (group !== undefined) lastOfGroup.set(group, done);
      }
    }
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
          const outcome = await this.settings.client.delete(this.settings.queue, message.receiptHandle, {
            signal: givenBack.signal,
            timeoutMs: deleteTimeoutMs,
          });
          const lost = leaseLostBeforeDelete(outcome);
          if (lost !== undefined) throw new LeaseLostError(message.receiptHandle, lost);
          return;
        } catch (error) {
          if (!isTransient(error) || controller.signal.aborted) throw error;
          this.settings.report(error, message);
          await pause(this.settings.clock, backoffDelayMs(failures), controller.signal);
        }
      }
    } finally {
      lease.drop();
    }
  }

  /** Releases messages received after stop() began; never renewed, so no renewal can race the release. */
  private async giveBack(messages: readonly ReceivedMessage[]): Promise<void> {
    if (messages.length === 0) return;
    try {
      const results = await this.settings.client.changeVisibilityBatch(
        this.settings.queue,
        messages.map((m) => m.receiptHandle),
        0,
      );
      for (const result of results) if (result.error !== undefined) this.settings.report(result.error);
    } catch (error) {
      this.settings.report(error);
    }
  }
}

/** Whether a failed call may well succeed if tried again soon: no broker answered it, or the queue is moving. */
function isTransient(error: unknown): boolean {
  return error instanceof RpcError && (error.code === status.UNAVAILABLE || error.code === status.DEADLINE_EXCEEDED);
}
