import { create } from "@bufbuild/protobuf";
import {
  AckResultSchema,
  SubscribeResponseSchema,
  type FlowControl as WireFlowControl,
  type SubscribeRequest,
  type SubscribeResponse,
} from "../../gen/holdshelf/v1/queue_service_pb.js";
import type { SubscribeOperations } from "../broker/broker-slices.js";
import { checkFlowControl, defaultFlowControl, type FlowControl, type Subscription } from "../broker/subscription.js";
import type { EntryOutcome } from "../broker/types.js";
import { HoldshelfError, invalidArgument } from "../errors/holdshelf-error.js";
import type { Logger } from "../logging/logger.js";
import { LeaseEnding } from "../protocol/lease-state-reason.js";
import { leaseStateToWire, renewFromWire } from "./lease-renewals-wire.js";
import type { PreEncoded } from "./pre-encoded.js";
import { encodeSubscribeDeliveries } from "./receive-response-encoding.js";
import { deleteOutcomeToWire, durationToMs } from "./wire-convert.js";

/** The wire side of a Subscribe stream, as its session drives it (grpc/subscribe-call.ts adapts grpc-js's call). */
export interface SubscribeChannel {
  /**
   * Sends a response; false when the client is not reading, until `SubscribeSession.drained`. `sent` is
   * called once the response has left for the connection (HTTP/2 flow control may hold it back).
   */
  write(response: SubscribeResponse | PreEncoded<SubscribeResponse>, sent?: () => void): boolean;
  /** Stops reading requests: HTTP/2 flow control then slows the client. */
  pause(): void;
  resume(): void;
  /**
   * Resolves true once a half-close proves clean, false if it was a cancel in disguise (grpc-js half-closes
   * before it resets a cancelled stream); the session ends the stream accordingly.
   */
  halfCloseWasClean(): Promise<boolean>;
  /** Ends the stream with OK. */
  end(): void;
  /** Ends the stream with an error status. */
  fail(error: unknown): void;
  /** Who is on the other end, for the log. */
  readonly peer: string;
}

/** What a Subscribe session is given besides its channel. */
export interface SubscribeSessionOptions {
  readonly streams: SubscribeOperations;
  readonly logger: Logger;
  /** Throws PERMISSION_DENIED (or a token reason) when the caller may not receive from the queue; run at each request. */
  readonly authorizeQueue?: ((queue: string) => void) | undefined;
}

// Requests whose answers are not written yet before reading pauses: a client
// that writes faster than its acks commit is slowed by HTTP/2 flow control
// instead of filling the broker's memory.
const maxUnanswered = 16;
// Deliveries written and not yet sent on the connection before the stream
// stops taking messages: a client that stops reading then makes the broker
// take no more than two responses' worth, whatever its credit.
const maxUnsentPushes = 2;

/**
 * One Subscribe stream, wire-neutral: opens its Subscription at the first
 * request, pushes deliveries while it has credit (one wait at a time, so a
 * subscriber that took messages waits behind the others for the next),
 * settles acks and renewals as they are read (memory changes at once, so
 * credit comes back before the write lands) and answers each request in
 * order once durable, and ends as the client or the broker says. Nothing is
 * pushed while the client is not reading, and then nothing more is read.
 */
export class SubscribeSession {
  private subscription: Subscription | undefined;
  private releaseOnDisconnect = false;
  /** The answers of requests read, in request order: each waits for those before it. */
  private answers: Promise<void> = Promise.resolve();
  private unanswered = 0;
  /** The wait for deliveries in flight; aborted when the stream stops taking messages. */
  private pulling: AbortController | undefined;
  private pullScheduled = false;
  private unsentPushes = 0;
  private blocked = false;
  private halfClosed = false;
  /** A request was refused: the stream ends with its error once the requests before it are answered. */
  private refused = false;
  private ended = false;

  constructor(
    private readonly channel: SubscribeChannel,
    private readonly options: SubscribeSessionOptions,
  ) {}

  /** A request read from the client. */
  request(request: SubscribeRequest): void {
    if (this.ended || this.halfClosed || this.refused) return;
    try {
      if (this.subscription === undefined) this.open(request);
      else this.change(request);
    } catch (error) {
      return this.refuse(error);
    }
    if (request.ackReceiptHandles.length > 0 || request.leases.length > 0) this.settle(request);
    this.pull();
  }

  /** Bytes that were not a SubscribeRequest: the stream ends with INVALID_ARGUMENT. */
  malformed(description: string): void {
    if (this.ended || this.halfClosed || this.refused) return;
    this.refuse(invalidArgument("request", description));
  }

  /** The client half-closed: nothing more is delivered; once every request is answered, the stream ends OK. */
  halfClose(): void {
    if (this.ended || this.halfClosed) return;
    this.halfClosed = true;
    // Messages taken for this stream and not yet sent go back, uncounted.
    this.pulling?.abort();
    this.answers
      .then(() => (this.ended ? true : this.channel.halfCloseWasClean()))
      .then((clean) => {
        if (this.ended) return;
        if (!clean) return this.finish(this.releaseOnDisconnect, true);
        this.finish(false);
        this.channel.end();
      })
      .catch((error: unknown) => this.fail(error));
  }

  /** The client reads again after a write said it was not. */
  drained(): void {
    this.blocked = false;
    if (this.unanswered < maxUnanswered) this.channel.resume();
    this.pull();
  }

  /** The client cancelled, its deadline passed, or its connection broke. */
  broken(): void {
    this.finish(this.releaseOnDisconnect, true);
  }

  private open(request: SubscribeRequest): void {
    if (request.queue === "") throw invalidArgument("queue", "is required in a stream's first request");
    // Before the queue is looked up: a refusal says nothing of whether it exists.
    this.options.authorizeQueue?.(request.queue);
    const flow = request.flowControl === undefined ? defaultFlowControl : flowFromWire(request.flowControl);
    const visibilityTimeoutMs = durationToMs(request.visibilityTimeout, "visibility_timeout");
    this.subscription = this.options.streams.subscribe(
      request.queue,
      {
        leasesExpired: (handles) => this.pushExpired(handles),
        leaseDropped: () => this.schedulePull(),
        brokerClosing: () => this.fail(new HoldshelfError("SHUTTING_DOWN", "the broker is shutting down")),
        storageUnavailable: (error) => this.fail(error),
        queueGone: (error) => this.fail(error),
      },
      { visibilityTimeoutMs, flow },
    );
    this.releaseOnDisconnect = request.releaseOnDisconnect;
  }

  private change(request: SubscribeRequest): void {
    const subscription = this.subscription!;
    const queue = subscription.queueName;
    if (request.queue !== "" && request.queue !== queue) {
      throw invalidArgument("queue", `must be empty or "${queue}", the stream's queue`);
    }
    // The token is looked up again: one revoked since the stream opened ends it.
    this.options.authorizeQueue?.(queue);
    if (request.flowControl === undefined) return;
    subscription.flow = flowFromWire(request.flowControl);
    // A wait started under the old credit would take what the new one may
    // not allow (a pause to 0 while stopping, say): it starts again.
    this.pulling?.abort();
  }

  /** Settles a request's acks and renewals at once, and answers it in its turn. */
  private settle(request: SubscribeRequest): void {
    const subscription = this.subscription!;
    const { streams } = this.options;
    // A request behind one still being written: that write must not linger for company.
    if (this.unanswered > 0) streams.hurry();
    const moreQueued = this.unanswered > 0;
    const settled = (async () => {
      let acks: EntryOutcome[] = [];
      // Called at once, so memory changes in the order requests are read; only the answers wait.
      const leases = await renewFromWire(request.leases, async (renewals) => {
        const settlement = await streams.settle(
          subscription,
          subscription.queueName,
          request.ackReceiptHandles,
          renewals,
          moreQueued,
        );
        acks = settlement.acks;
        return settlement.leases;
      });
      return create(SubscribeResponseSchema, { acks: acks.map(ackToWire), leases });
    })();
    settled.catch(() => undefined);
    if (++this.unanswered >= maxUnanswered) this.channel.pause();
    this.answers = this.answers
      .then(() => settled)
      .then((response) => {
        if (--this.unanswered < maxUnanswered && !this.blocked) this.channel.resume();
        this.write(response);
      })
      .catch((error: unknown) => this.fail(error));
  }

  /** Waits for deliveries while the stream has credit and the client reads; one wait at a time. */
  private pull(): void {
    const subscription = this.subscription;
    if (subscription === undefined || this.pulling !== undefined || this.blocked || this.halfClosed) return;
    if (this.refused || this.ended) return;
    if (this.unsentPushes >= maxUnsentPushes) return;
    if (subscription.credit() === undefined) return;
    const pulling = new AbortController();
    this.pulling = pulling;
    this.options.streams.deliver(subscription, pulling.signal).then(
      (deliveries) => {
        this.pulling = undefined;
        if (this.ended) return;
        if (pulling.signal.aborted) {
          // Stopped by a change of flow control (pull() declines after a half-close).
          this.schedulePull();
          return;
        }
        if (deliveries.length > 0) {
          this.unsentPushes++;
          this.write(encodeSubscribeDeliveries(deliveries), () => {
            this.unsentPushes--;
            this.pull();
          });
          this.pull();
        } else {
          // Empty without an abort: the take's messages were purged meanwhile, or the broker is closing
          // (whose notice ends the stream in this turn). Try again after I/O, never in a tight loop.
          setImmediate(() => this.pull());
        }
      },
      (error: unknown) => {
        this.pulling = undefined;
        this.fail(error);
      },
    );
  }

  /** A lease this stream held ended: its credit grew, so a paused wait may start (after the rule that ended it). */
  private schedulePull(): void {
    if (this.pullScheduled || this.pulling !== undefined || this.ended) return;
    this.pullScheduled = true;
    queueMicrotask(() => {
      this.pullScheduled = false;
      this.pull();
    });
  }

  private pushExpired(handles: string[]): void {
    this.write(
      create(SubscribeResponseSchema, {
        leases: handles.map((receiptHandle) =>
          leaseStateToWire({ receiptHandle, held: false, reason: LeaseEnding.LEASE_EXPIRED }),
        ),
      }),
    );
    this.schedulePull();
  }

  private write(response: SubscribeResponse | PreEncoded<SubscribeResponse>, sent?: () => void): void {
    if (this.ended) return;
    // false: the client is not reading. Push nothing more, and read nothing more, until it drains.
    if (!this.channel.write(response, sent)) {
      this.blocked = true;
      this.channel.pause();
    }
  }

  /** Ends the stream with `error` once the requests before the refused one are answered; nothing more is pushed. */
  private refuse(error: unknown): void {
    this.refused = true;
    this.pulling?.abort();
    this.answers = this.answers.then(() => this.fail(error));
  }

  /** Ends the stream with an error status; its leases are left as they are. */
  private fail(error: unknown): void {
    if (this.ended) return;
    this.finish(false);
    this.channel.fail(error);
  }

  /** Hands the stream's leases back; `broken` when the client went away without a clean half-close. */
  private finish(release: boolean, broken = false): void {
    if (this.ended) return;
    this.ended = true;
    this.pulling?.abort();
    const subscription = this.subscription;
    if (subscription === undefined) return;
    this.options.streams
      .close(subscription, release)
      .then((leases) => {
        // One line per stream, never per lease.
        if (broken && leases > 0) {
          this.options.logger.info("subscribe stream broken", {
            peer: this.channel.peer,
            queue: subscription.queueName,
            leases,
            released: release,
          });
        }
      })
      .catch((error: unknown) => this.options.logger.error("unexpected error in a call", { error }));
  }
}

function flowFromWire(flow: WireFlowControl): FlowControl {
  const parsed = { maxMessages: flow.maxOutstandingMessages, maxBytes: Number(flow.maxOutstandingBytes) };
  checkFlowControl(parsed, "flow_control");
  return parsed;
}

function ackToWire(outcome: EntryOutcome) {
  return create(AckResultSchema, {
    receiptHandle: outcome.receiptHandle,
    reason: outcome.error?.reason ?? "",
    ...(outcome.deleteOutcome === undefined ? {} : { deleteOutcome: deleteOutcomeToWire(outcome.deleteOutcome) }),
  });
}
