import { status } from "@grpc/grpc-js";
import type { ConsumerJobs } from "./consumer-jobs.js";
import type { ConsumerPathSettings } from "./consumer-options.js";
import { LeaseKeeper } from "./lease-keeper.js";
import { RpcError } from "./rpc-error.js";
import { subscribeLeaseChannel, type SubscribeChannel, type SubscribeLeaseChannel } from "./subscribe-lease-channel.js";
import type { FlowControl, ReceivedMessage } from "./types.js";

/** How a SubscribeLoop ended: stop() began, or the broker does not serve Subscribe (its keeper is then closed). */
export type SubscribeOutcome = "stopped" | "unimplemented";

/**
 * A Consumer's Subscribe path: one stream, reopened with backoff when it
 * breaks, on which the broker pushes as many messages as the consumer has
 * slots (max_outstanding_messages = concurrency) and which carries the
 * renewals, checkpoints, failures, releases and acks of every message it
 * holds. stop() pauses deliveries with a credit of 0.
 */
export class SubscribeLoop {
  /** Holds the leases of the messages delivered, on the stream itself. */
  readonly keeper: LeaseKeeper;
  private channel: SubscribeLeaseChannel | undefined;
  private flowControl: FlowControl;
  /** The job of each FIFO group's last message held: the next of the group waits for it. */
  private readonly lastOfGroup = new Map<string, Promise<boolean>>();
  /** Releases of messages pushed after stop() began. */
  private readonly givingBack = new Set<Promise<void>>();
  private readonly outcome: Promise<SubscribeOutcome>;
  private endWith!: (outcome: SubscribeOutcome) => void;

  constructor(
    private readonly settings: ConsumerPathSettings,
    private readonly jobs: ConsumerJobs,
    maxOutstandingBytes: number,
    openSubscribe: () => SubscribeChannel,
  ) {
    const { queue, visibilityTimeoutMs } = settings;
    this.outcome = new Promise((resolve) => (this.endWith = resolve));
    this.flowControl = { maxOutstandingMessages: settings.concurrency, maxOutstandingBytes };
    this.keeper = new LeaseKeeper({
      queue,
      openStream: () => {
        this.channel = subscribeLeaseChannel(openSubscribe(), {
          queue,
          visibilityTimeoutMs,
          flowControl: () => this.flowControl,
          onDeliveries: (messages) => this.deliver(messages),
        });
        return this.channel;
      },
      visibilityTimeoutMs,
      leaseMs: settings.leaseMs,
      renewFraction: settings.renewFraction,
      onError: (error) => this.onStreamError(error),
      clock: settings.clock,
    });
    if (settings.stopping.aborted) this.pauseDeliveries();
    else settings.stopping.addEventListener("abort", () => this.pauseDeliveries(), { once: true });
  }

  /** Resolves once stop() begins, or once the broker turned out not to serve Subscribe. */
  run(): Promise<SubscribeOutcome> {
    return this.outcome;
  }

  /** Resolves once the messages pushed after stop() began are given back. */
  async givenBack(): Promise<void> {
    await Promise.all(this.givingBack);
  }

  private deliver(messages: readonly ReceivedMessage[]): void {
    if (this.settings.stopping.aborted) {
      this.giveBack(messages);
      return;
    }
    const receivedAt = this.settings.clock.now();
    for (const message of messages) {
      const controller = new AbortController();
      const lease = this.keeper.hold(message.receiptHandle, receivedAt, (error) => controller.abort(error), true);
      const group = message.messageGroupId;
      const previous = group === undefined ? undefined : this.lastOfGroup.get(group);
      const done = this.jobs.start(message, controller, lease, previous, (job) => job.lease.ack());
      if (group === undefined) continue;
      this.lastOfGroup.set(group, done);
      void done.then(() => {
        if (this.lastOfGroup.get(group) === done) this.lastOfGroup.delete(group);
      });
    }
  }

  /**
   * Releases messages pushed before the broker read stop()'s pause, never
   * worked on. Unary, since the stream may be half-closed by the time they
   * come (stop() ends it once its handlers are settled), and a half-closed
   * stream leaves its leases to run out.
   */
  private giveBack(messages: readonly ReceivedMessage[]): void {
    const { client, queue, report } = this.settings;
    const release = client
      .changeVisibilityBatch(
        queue,
        messages.map((message) => message.receiptHandle),
        0,
      )
      .then(
        (results) => {
          for (const result of results) if (result.error !== undefined) report(result.error);
        },
        (error: unknown) => report(error),
      )
      .finally(() => this.givingBack.delete(release));
    this.givingBack.add(release);
  }

  private onStreamError(error: unknown): void {
    // Only with nothing held: leases of this stream cannot move to a Heartbeat
    // stream mid-work, so a broker that loses Subscribe while messages are
    // worked on is retried as any failure until they are settled.
    if (error instanceof RpcError && error.code === status.UNIMPLEMENTED && this.jobs.size === 0) {
      void this.keeper.close(0).then(() => this.endWith("unimplemented"));
      return;
    }
    this.settings.failed(error);
  }

  private pauseDeliveries(): void {
    this.flowControl = { ...this.flowControl, maxOutstandingMessages: 0 };
    this.channel?.setFlowControl(this.flowControl);
    this.endWith("stopped");
  }
}
