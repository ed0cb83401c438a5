import { monotonicClock, type Clock } from "../time/clock.js";
import { backoffDelayMs } from "./backoff.js";
import { pause, within } from "./clock-waits.js";
import { ConsumerJobs } from "./consumer-jobs.js";
import type { ConsumerClient, ConsumerOptions, ConsumerPathSettings, MessageHandler } from "./consumer-options.js";
import type { LeaseKeeper } from "./lease-keeper.js";
import { ReceiveLoop } from "./receive-loop.js";
import type { RpcError } from "./rpc-error.js";
import { isConsumerRefusal } from "./consumer-refusal.js";
import { SubscribeLoop } from "./subscribe-loop.js";
import type { ReceivedMessage } from "./types.js";

export type { ConsumerClient, ConsumerOptions, HandlerContext, MessageHandler } from "./consumer-options.js";

// After the grace period, stop() gives the releases and the stream's clean
// end this long before it cuts the stream.
const closeTimeoutMs = 5_000;

/**
 * Runs a handler on each message of a queue with a concurrency limit,
 * holding no more messages than it has slots. By default the broker pushes
 * them on one Subscribe stream, which also carries their renewals and acks
 * (SubscribeLoop); a broker without Subscribe is served by long-poll
 * Receives, with the leases held on a Heartbeat stream (ReceiveLoop).
 */
export class Consumer {
  private readonly concurrency: number;
  private readonly subscribe: boolean;
  private readonly maxOutstandingBytes: number;
  private readonly visibilityTimeoutMs: number | undefined;
  private readonly renewFraction: number;
  private readonly waitTimeMs: number;
  private readonly stopGraceMs: number;
  private readonly onError: (error: unknown, message?: ReceivedMessage) => void;
  private readonly clock: Clock;
  private readonly stopController = new AbortController();
  private readonly jobs: ConsumerJobs;
  private readonly loop: Promise<void>;
  private keeper: LeaseKeeper | undefined;
  private subscription: SubscribeLoop | undefined;
  private stopping: Promise<void> | undefined;
  /** The refusal that stopped the consumer (isConsumerRefusal); done rejects with it. */
  private refusal: RpcError | undefined;
  private endDone!: { resolve: () => void; reject: (error: unknown) => void };

  /**
   * Settles when the consumer has stopped: resolves once stop() has
   * finished, and rejects with the RpcError when the broker refused the
   * consumer its queue or its token (QUEUE_NOT_FOUND, PERMISSION_DENIED,
   * TOKEN_MISSING, TOKEN_INVALID), at its start or while it runs (the queue
   * deleted, the token revoked); the consumer then stops by itself, as
   * stop() does, without retrying. stopOnSignals() settles with it.
   */
  readonly done: Promise<void>;

  constructor(
    private readonly client: ConsumerClient,
    /** The queue this consumer takes messages from. */
    readonly queue: string,
    handler: MessageHandler,
    options: ConsumerOptions = {},
  ) {
    this.concurrency = check("concurrency", options.concurrency ?? 1, (n) => Number.isInteger(n) && n >= 1);
    this.subscribe = options.subscribe ?? true;
    this.maxOutstandingBytes = check(
      "maxOutstandingBytes",
      options.maxOutstandingBytes ?? 0,
      (n) => Number.isSafeInteger(n) && n >= 0,
    );
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
    this.jobs = new ConsumerJobs(
      handler,
      (error, message) => this.report(error, message),
      this.stopController.signal,
      this.concurrency,
    );
    this.done = new Promise((resolve, reject) => (this.endDone = { resolve, reject }));
    // Handled here so that a program that never awaits done does not die of
    // an unhandled rejection: onError heard of the refusal too.
    this.done.catch(() => undefined);
    this.loop = this.run();
  }

  /** How many messages are being worked on or settled now. */
  get active(): number {
    return this.jobs.size;
  }

  /**
   * Stops taking messages (on Subscribe, a credit of 0), waits up to
   * stopGraceMs for running handlers, releases the messages of those still
   * running (aborting their signals), and half-closes the stream. Calling it
   * again returns the same promise.
   */
  stop(): Promise<void> {
    return (this.stopping ??= this.shutdown());
  }

  private async run(): Promise<void> {
    const signal = this.stopController.signal;
    const leaseMs = await this.leaseLength(signal);
    if (leaseMs === undefined || signal.aborted) return;
    const settings: ConsumerPathSettings = {
      client: this.client,
      queue: this.queue,
      concurrency: this.concurrency,
      visibilityTimeoutMs: this.visibilityTimeoutMs,
      leaseMs,
      renewFraction: this.renewFraction,
      clock: this.clock,
      report: (error, message) => this.report(error, message),
      failed: (error) => this.failed(error),
      stopping: signal,
    };
    const subscribe = this.client.subscribe?.bind(this.client);
    if (this.subscribe && subscribe !== undefined) {
      const subscription = new SubscribeLoop(settings, this.jobs, this.maxOutstandingBytes, subscribe);
      this.keeper = subscription.keeper;
      this.subscription = subscription;
      if ((await subscription.run()) === "stopped") return;
    }
    const receiving = new ReceiveLoop(settings, this.jobs, this.waitTimeMs);
    this.keeper = receiving.keeper;
    await receiving.run();
  }

  /** The lease length renewals are paced by: the option, or the queue's visibility timeout. */
  private async leaseLength(signal: AbortSignal): Promise<number | undefined> {
    if (this.visibilityTimeoutMs !== undefined) return this.visibilityTimeoutMs;
    for (let failures = 0; !signal.aborted; ) {
      try {
        return (await this.client.getQueue(this.queue)).config.visibilityTimeoutMs;
      } catch (error) {
        if (this.failed(error)) return undefined;
        await pause(this.clock, backoffDelayMs(failures++), signal);
      }
    }
    return undefined;
  }

  private async shutdown(): Promise<void> {
    this.stopController.abort();
    this.jobs.wake();
    await this.loop;
    const keeper = this.keeper;
    if (keeper !== undefined) {
      // After a refusal nothing more reaches the broker (a new stream would be
      // refused again): settlements fail at once instead of holding the
      // handlers' slots through the grace period.
      if (this.refusal !== undefined) await keeper.close(0);
      await within(this.clock, this.jobs.allDone(), this.stopGraceMs);
      this.jobs.abandonAll();
      await keeper.close(closeTimeoutMs);
      await this.subscription?.givenBack();
    }
    if (this.refusal === undefined) this.endDone.resolve();
    else this.endDone.reject(this.refusal);
  }

  /** A failure of the consumer's own calls: a refusal stops it (true); anything else is reported, to be retried (false). */
  private failed(error: unknown): boolean {
    if (!isConsumerRefusal(error)) {
      this.report(error);
      return false;
    }
    this.refuse(error);
    return true;
  }

  /** Stops the consumer for a refusal of its own calls: onError hears of it, and, unless a stop had begun, done rejects with it. */
  private refuse(error: RpcError): void {
    if (this.stopController.signal.aborted) {
      // The stop under way settles done; its own streams may still meet the refusal.
      if (this.refusal === undefined) this.report(error);
      return;
    }
    this.refusal = error;
    this.report(error);
    void this.stop();
  }

  private report(error: unknown, message?: ReceivedMessage): void {
    try {
      this.onError(error, message);
    } catch {
      // A throwing onError must not stop the receive loop or the stream reader.
    }
  }
}

function check(name: string, value: number, valid: (n: number) => boolean): number {
  if (!valid(value)) throw new RangeError(`ConsumerOptions.${name} is out of range: ${value}`);
  return value;
}
