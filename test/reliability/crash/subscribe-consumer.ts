import { create } from "@bufbuild/protobuf";
import { durationFromMs, timestampMs, type Duration } from "@bufbuild/protobuf/wkt";
import { setTimeout as sleep } from "node:timers/promises";
import type { ReceivedMessage } from "../../../gen/holdshelf/v1/message_pb.js";
import {
  SubscribeRequestSchema,
  type LeaseState,
  type SubscribeResponse,
} from "../../../gen/holdshelf/v1/queue_service_pb.js";
import type { Epoch } from "./crash-epoch.js";
import { MAX_DELAY_MS } from "./crash-queues.js";
import type { Lease } from "./lease-calls.js";
import type { Ledger, LeaseOpRecord, Outcome } from "./ledger.js";
import { parseBody } from "./message-bodies.js";
import { waitUntilReleased } from "./released-leases.js";
import type { SeededRandom } from "./seeded-random.js";
import type { SubscribeDialer, SubscribeLink } from "./subscribe-link.js";
import { ConsumerKilled } from "./subscribe-relay.js";

/** What a Subscribe consumer does with a lease when it comes back to it: shares summing to 1. */
export interface SubscribeHabits {
  readonly ack: number;
  /** Renewed on the stream (at most three times), then come back to again. */
  readonly extend: number;
  /** Renewed with visibility 0. */
  readonly release: number;
  /** A failed renewal, half of them with a retry delay of up to MAX_DELAY_MS. */
  readonly fail: number;
  /** Never touched again: the lease runs out, and the stream reports LEASE_EXPIRED. */
  readonly abandon: number;
  /** Whether poison messages are never acked (failed, released or abandoned instead). */
  readonly sparePoison: boolean;
}

/** How a Subscribe consumer is set up. */
export interface SubscribeConsumerOptions {
  readonly queue: string;
  readonly habits: SubscribeHabits;
  /** The range of its leases' lengths, in ms, for deliveries and renewals alike. */
  readonly leaseMs: readonly [number, number];
  /** Where its calls live: this process, or a child process it SIGKILLs now and then (SubscribeRelay). */
  readonly dialer: SubscribeDialer;
  /** The chance, each broker life, that the consumer's process is SIGKILLed at a random moment (a dialer with kill). */
  readonly killChance: number;
  /**
   * Whether a broker's kill may break a stream that a live broker still
   * serves (a cluster's stream passed to its queue's owner), so that
   * release_on_disconnect releases its leases at the kill.
   */
  readonly killBreaksStreams: boolean;
}

/** What Subscribe consumers did: the figures of a crash report. */
export interface SubscribeCounts {
  streams: number;
  deliveries: number;
  acksConfirmed: number;
  acksRefused: number;
  renewalsHeld: number;
  releases: number;
  failures: number;
  notices: number;
  /** Leases renewed in a new stream's first request, after the one before ended. */
  reconnectRenewals: number;
  flowChanges: number;
  consumerKills: number;
}

/** The leases a consumer process held when it was SIGKILLed. */
export interface ConsumerKill {
  readonly at: number;
  readonly releaseOnDisconnect: boolean;
  readonly leases: readonly Lease[];
  /** With release_on_disconnect, how long after the kill none of them was leased any more (undefined if a broker kill came first). */
  readonly releasedAfterMs: number | undefined;
}

/** A lease the consumer holds, and when it comes back to it. */
interface Held {
  readonly lease: Lease;
  readonly due: number;
  readonly renewals: number;
}

/** A renewal on the stream: visibilityMs 0 releases; a failure's undefined visibility means the queue's rules (at once here). */
interface Renewal {
  readonly held: Held;
  readonly visibilityMs: number | undefined;
  readonly failed: boolean;
}

/** What a request carries besides acks and renewals: the opening fields, or a change of credit. */
interface RequestHead {
  readonly queue?: string;
  readonly visibilityTimeout?: Duration;
  readonly releaseOnDisconnect?: boolean;
  readonly flowControl?: { readonly maxOutstandingMessages: number };
}

/** A request with acks or renewals, waiting for its one response. */
interface Pending {
  readonly start: number;
  readonly acks: readonly Held[];
  readonly renewals: readonly Renewal[];
}

/** One stream, from its first request to its end. */
interface Session {
  readonly link: SubscribeLink;
  readonly openedAt: number;
  readonly visibilityMs: number;
  readonly releaseOnDisconnect: boolean;
  readonly pending: Pending[];
  /** Set when the consumer half-closed: nothing more is written. */
  halfClosed: boolean;
  /** How the call ended, once it has. */
  ended: { outcome: unknown } | undefined;
}

/**
 * A consumer of one queue over a raw Subscribe stream (small credit, 1 to 8)
 * that acks, renews, releases, fails and abandons what is pushed to it, and
 * records every delivery, ack, renewal and LEASE_EXPIRED notice in the
 * ledger as the unary consumers' calls are. Its leases outlive a broker
 * life: the next stream renews them in its first request. With a relay
 * dialer its stream lives in a child process it SIGKILLs at random moments;
 * then, like a crashed consumer, it forgets what it held.
 */
export class SubscribeConsumer {
  private held = new Map<string, Held>();
  readonly counts: SubscribeCounts = {
    streams: 0,
    deliveries: 0,
    acksConfirmed: 0,
    acksRefused: 0,
    renewalsHeld: 0,
    releases: 0,
    failures: 0,
    notices: 0,
    reconnectRenewals: 0,
    flowChanges: 0,
    consumerKills: 0,
  };
  readonly kills: ConsumerKill[] = [];

  constructor(
    private readonly ledger: Ledger,
    private readonly random: SeededRandom,
    private readonly options: SubscribeConsumerOptions,
  ) {}

  /** Consumes the queue until the epoch's kill begins, on one stream (a new one after each kill of its process). */
  async run(epoch: Epoch): Promise<void> {
    const killable = this.options.dialer.kill !== undefined;
    while (!epoch.killing) {
      const killAt =
        killable && this.random.chance(this.options.killChance) ? Date.now() + this.random.int(50, 400) : 0;
      const clean = await this.session(epoch, killAt);
      if (!clean) await sleep(50);
    }
  }

  /** Ends the consumer's process, if it has one. */
  close(): Promise<void> {
    return this.options.dialer.close();
  }

  /** Runs one stream until the epoch's kill, or the consumer's own at `killAt` (0: none); false if it ended unexpectedly. */
  private async session(epoch: Epoch, killAt: number): Promise<boolean> {
    const renewals = [...this.held.values()].map((held) => ({
      held,
      visibilityMs: this.leaseMs(),
      failed: false,
    }));
    this.held.clear();
    const visibilityMs = this.leaseMs();
    const releaseOnDisconnect = this.random.chance(0.5);
    let credit = this.random.int(1, 8);
    const openedAt = Date.now();
    const session: Session = {
      link: this.options.dialer.open(epoch.address, (response) => this.onResponse(session, response)),
      openedAt,
      visibilityMs,
      releaseOnDisconnect,
      pending: [],
      halfClosed: false,
      ended: undefined,
    };
    void session.link.closed.then((outcome) => {
      session.ended = { outcome };
    });
    this.counts.streams++;
    this.counts.reconnectRenewals += renewals.length;
    this.send(
      session,
      {
        queue: this.options.queue,
        visibilityTimeout: durationFromMs(visibilityMs),
        releaseOnDisconnect,
        flowControl: { maxOutstandingMessages: credit },
      },
      [],
      renewals,
    );
    // The last moment the broker was certainly not being killed: a break may release leases from then on.
    let aliveAt = openedAt;
    while (!epoch.killing && session.ended === undefined && (killAt === 0 || Date.now() < killAt)) {
      aliveAt = Date.now();
      await sleep(this.random.int(20, 120));
      if (epoch.killing || session.ended !== undefined) break;
      this.tend(session);
      if (this.random.chance(credit === 0 ? 0.5 : 0.05)) {
        // Now and then a pause (credit 0), lifted soon after.
        credit = credit > 0 && this.random.chance(0.2) ? 0 : this.random.int(1, 8);
        this.counts.flowChanges++;
        this.send(session, { flowControl: { maxOutstandingMessages: credit } }, [], []);
      }
    }
    if (!epoch.killing && session.ended === undefined) return this.killProcess(epoch, session);
    if (session.ended === undefined) {
      session.halfClosed = true;
      session.link.end();
      // A paused broker answers nothing: break the call after the harness's usual deadline.
      const timer = setTimeout(() => session.link.cancel(), 30_000);
      await session.link.closed;
      clearTimeout(timer);
    }
    return this.settleEnd(epoch, session, aliveAt);
  }

  /** SIGKILLs the consumer's process mid-stream: what it held is forgotten, and released at once with release_on_disconnect. */
  private async killProcess(epoch: Epoch, session: Session): Promise<boolean> {
    const at = Date.now();
    await this.options.dialer.kill!();
    await session.link.closed;
    this.settlePending(session, { outcome: "unknown", reason: "consumer killed" });
    const leases = [...this.held.values()].map((held) => held.lease);
    if (session.releaseOnDisconnect) this.recordBreakRelease(leases, at);
    this.held.clear();
    this.counts.consumerKills++;
    const releasedAfterMs =
      session.releaseOnDisconnect && leases.length > 0
        ? await waitUntilReleased(epoch, this.ledger, this.options.queue, leases, at)
        : undefined;
    this.kills.push({ at, releaseOnDisconnect: session.releaseOnDisconnect, leases, releasedAfterMs });
    return true;
  }

  /** Records how a stream ended (after the epoch's kill, or unexpectedly); false if unexpectedly. */
  private settleEnd(epoch: Epoch, session: Session, aliveAt: number): boolean {
    const outcome = session.ended!.outcome;
    const what = `Subscribe to ${this.options.queue}`;
    if (outcome === undefined) {
      // A clean end answers every request first.
      if (!session.halfClosed) this.ledger.unexpected.push(`${what} ended OK though the consumer did not half-close`);
      if (session.pending.length > 0)
        this.ledger.unexpected.push(`${what} ended OK with ${session.pending.length} requests unanswered`);
      this.settlePending(session, { outcome: "unknown", reason: "unanswered" });
      return session.halfClosed;
    }
    const failed =
      outcome instanceof ConsumerKilled
        ? { outcome: "unknown" as const, reason: "consumer killed" }
        : this.ledger.failure(outcome, what, epoch.killing);
    this.settlePending(session, failed);
    if (session.releaseOnDisconnect && (this.options.killBreaksStreams || !epoch.killing))
      this.recordBreakRelease(
        [...this.held.values()].map((held) => held.lease),
        aliveAt,
      );
    return epoch.killing;
  }

  /** Records that a break may have released these leases from `from` on (release_on_disconnect). */
  private recordBreakRelease(leases: readonly Lease[], from: number): void {
    const end = Date.now();
    for (const lease of leases)
      this.ledger.leaseOp(lease.delivery.handle, {
        kind: "renew",
        visibilityMs: 0,
        start: from,
        end,
        outcome: "unknown",
        reason: "release_on_disconnect",
        wire: "grpc",
      });
  }

  /** Acks, renews, releases, fails or abandons the held leases that are due, in one request. */
  private tend(session: Session): void {
    const now = Date.now();
    const acks: Held[] = [];
    const renewals: Renewal[] = [];
    for (const held of this.held.values()) {
      if (held.due > now) continue;
      this.held.delete(held.lease.delivery.handle);
      const fate = this.fate(held);
      if (fate === "ack") acks.push(held);
      else if (fate === "extend") renewals.push({ held, visibilityMs: this.leaseMs(), failed: false });
      else if (fate === "release") renewals.push({ held, visibilityMs: 0, failed: false });
      else if (fate === "fail") renewals.push({ held, visibilityMs: this.retryDelay(), failed: true });
    }
    this.send(session, {}, acks, renewals);
  }

  /** What becomes of a lease the consumer comes back to, drawn by its habits. */
  private fate(held: Held): "ack" | "extend" | "release" | "fail" | "abandon" {
    const { ack, extend, release, fail, sparePoison } = this.options.habits;
    const draw = this.random.next();
    if (held.lease.poison && sparePoison) return draw < 0.5 ? "fail" : draw < 0.75 ? "release" : "abandon";
    if (draw < ack) return "ack";
    if (draw < ack + extend) return held.renewals < 3 ? "extend" : "ack";
    if (draw < ack + extend + release) return "release";
    if (draw < ack + extend + release + fail) return "fail";
    return "abandon";
  }

  /** A lease's length, for a stream's deliveries or a renewal. */
  private leaseMs(): number {
    return this.random.int(this.options.leaseMs[0], this.options.leaseMs[1]);
  }

  /** A failure's retry delay: the queue's rules (undefined) or up to MAX_DELAY_MS. */
  private retryDelay(): number | undefined {
    return this.random.chance(0.5) ? undefined : this.random.int(100, MAX_DELAY_MS);
  }

  /** Writes a request (if it carries anything); one with acks or renewals waits for its response. */
  private send(session: Session, head: RequestHead, acks: readonly Held[], renewals: readonly Renewal[]): void {
    const empty = acks.length === 0 && renewals.length === 0;
    if (empty && head.flowControl === undefined && head.queue === undefined) return;
    if (session.halfClosed || session.ended !== undefined) {
      // Too late to ask: the leases stay as they are, and the consumer holds them still.
      for (const held of [...acks, ...renewals.map((r) => r.held)]) this.held.set(held.lease.delivery.handle, held);
      return;
    }
    const request = create(SubscribeRequestSchema, {
      ...head,
      ackReceiptHandles: acks.map((held) => held.lease.delivery.handle),
      leases: renewals.map((r) => ({
        receiptHandle: r.held.lease.delivery.handle,
        failed: r.failed,
        ...(r.visibilityMs === undefined ? {} : { visibilityTimeout: durationFromMs(r.visibilityMs) }),
      })),
    });
    if (!empty) session.pending.push({ start: Date.now(), acks, renewals });
    session.link.write(request);
  }

  private onResponse(session: Session, response: SubscribeResponse): void {
    const now = Date.now();
    for (const message of response.messages) this.deliver(session, message, now);
    const answers: LeaseState[] = [];
    for (const state of response.leases) {
      if (state.reason !== "LEASE_EXPIRED") {
        answers.push(state);
        continue;
      }
      this.ledger.notices.push({ handle: state.receiptHandle, at: now });
      this.held.delete(state.receiptHandle);
      this.counts.notices++;
    }
    if (response.acks.length === 0 && answers.length === 0) return;
    const pending = session.pending.shift();
    if (
      pending === undefined ||
      pending.acks.length !== response.acks.length ||
      pending.renewals.length !== answers.length ||
      answers.some((state, i) => state.receiptHandle !== pending.renewals[i]!.held.lease.delivery.handle) ||
      response.acks.some((result, i) => result.receiptHandle !== pending.acks[i]!.lease.delivery.handle)
    ) {
      this.ledger.unexpected.push(
        `Subscribe to ${this.options.queue}: an answer of ${response.acks.length} acks and ${answers.length} renewals ` +
          `does not match the request (${pending?.acks.length} acks, ${pending?.renewals.length} renewals)`,
      );
      if (pending !== undefined) this.settleOne(pending, { outcome: "unknown", reason: "mismatched answer" });
      return;
    }
    pending.acks.forEach((held, i) => {
      const reason = response.acks[i]!.reason;
      if (reason === "") this.counts.acksConfirmed++;
      else {
        this.counts.acksRefused++;
        this.ledger.entryRejected(reason, `Subscribe ack on ${this.options.queue}`);
      }
      this.record(held, "delete", 0, pending.start, now, reason === "" ? "ok" : "rejected", reason);
    });
    pending.renewals.forEach((renewal, i) => {
      this.renewed(renewal, answers[i]!, pending.start, now);
    });
    this.tend(session);
  }

  /** Records a renewal's answer: held again, released, failed, or refused. */
  private renewed(renewal: Renewal, state: LeaseState, start: number, now: number): void {
    const releasing = renewal.failed || renewal.visibilityMs === 0;
    const ok = releasing ? state.reason === "RELEASED" : state.held;
    if (!ok) this.ledger.entryRejected(state.reason, `Subscribe renewal on ${this.options.queue}`);
    const kind = renewal.failed ? "fail" : "renew";
    this.record(renewal.held, kind, renewal.visibilityMs ?? 0, start, now, ok ? "ok" : "rejected", state.reason);
    if (!ok) return;
    if (renewal.failed) this.counts.failures++;
    else if (releasing) this.counts.releases++;
    else {
      this.counts.renewalsHeld++;
      this.keep(renewal.held.lease, now + this.random.int(100, 1000), renewal.held.renewals + 1);
    }
  }

  /** Records a pushed delivery and holds its lease, coming back to it at once or later. */
  private deliver(session: Session, message: ReceivedMessage, now: number): void {
    const { uid, poison } = parseBody(message.body);
    if (message.leaseDeadline === undefined)
      this.ledger.unexpected.push(`Subscribe to ${this.options.queue}: a delivery without lease_deadline`);
    // The lease began when the broker says (its deadline less the stream's visibility, on this machine's clock), within the stream's life.
    const began =
      message.leaseDeadline === undefined
        ? session.openedAt
        : timestampMs(message.leaseDeadline) - session.visibilityMs;
    const delivery = {
      messageId: message.messageId,
      uid,
      queue: this.options.queue,
      handle: message.receiptHandle,
      start: Math.min(now, Math.max(session.openedAt, began)),
      end: now,
      visibilityMs: session.visibilityMs,
      receiveCount: message.receiveCount,
      drain: false,
      wire: "grpc" as const,
    };
    this.ledger.deliveries.push(delivery);
    this.counts.deliveries++;
    this.keep({ delivery, poison }, this.random.chance(0.5) ? now : now + this.random.int(50, 1200), 0);
  }

  private keep(lease: Lease, due: number, renewals: number): void {
    this.held.set(lease.delivery.handle, { lease, due, renewals });
  }

  /** Settles every unanswered request with `failed`; a renewal that may have held is kept, as the lease may be. */
  private settlePending(session: Session, failed: { outcome: Outcome; reason: string }): void {
    for (const pending of session.pending.splice(0)) this.settleOne(pending, failed);
  }

  private settleOne(pending: Pending, failed: { outcome: Outcome; reason: string }): void {
    const now = Date.now();
    for (const held of pending.acks) this.record(held, "delete", 0, pending.start, now, failed.outcome, failed.reason);
    for (const renewal of pending.renewals) {
      const kind = renewal.failed ? "fail" : "renew";
      this.record(renewal.held, kind, renewal.visibilityMs ?? 0, pending.start, now, failed.outcome, failed.reason);
      if (!renewal.failed && renewal.visibilityMs !== 0 && failed.outcome !== "rejected")
        this.keep(renewal.held.lease, now, renewal.held.renewals + 1);
    }
  }

  private record(
    held: Held,
    kind: LeaseOpRecord["kind"],
    visibilityMs: number,
    start: number,
    end: number,
    outcome: Outcome,
    reason: string,
  ): void {
    this.ledger.leaseOp(held.lease.delivery.handle, { kind, visibilityMs, start, end, outcome, reason, wire: "grpc" });
  }
}
