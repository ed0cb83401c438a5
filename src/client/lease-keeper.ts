import { maxRenewals } from "../protocol/limits.js";
import { LeaseEnding, leaseRefusalReasons } from "../protocol/lease-state-reason.js";
import { monotonicClock, type Clock, type Timer } from "../time/clock.js";
import { backoffDelayMs } from "./backoff.js";
import type { LeaseChannel, LeaseRequest, LeaseResponse } from "./lease-channel.js";
import { LeaseLostError } from "./lease-lost-error.js";
import { PendingAcks, settleAck, type AckEntry } from "./pending-acks.js";
import { RpcError } from "./rpc-error.js";
import type { LeaseReason, LeaseRenewal, LeaseState } from "./types.js";
import { settle, type Waiter } from "./waiters.js";

/** How a LeaseKeeper reaches the server and paces its renewals. */
export interface LeaseKeeperOptions {
  readonly queue: string;
  /** Opens a fresh stream (Heartbeat or Subscribe); called again after each break. */
  readonly openStream: () => LeaseChannel;
  /** Sent with each renewal; undefined lets the server apply the queue's visibility timeout. */
  readonly visibilityTimeoutMs: number | undefined;
  /** How long a lease lasts after a receive or a renewal: the timeout above, or the queue's. */
  readonly leaseMs: number;
  /** A lease is renewed after this fraction of leaseMs, less up to a fifth of it as jitter. */
  readonly renewFraction: number;
  /** Told why a stream broke; the keeper reopens it by itself. */
  readonly onError: (error: unknown) => void;
  /**
   * Times renewals, expiries, stalls and reopens, and reads the times given
   * to hold(). Default: the monotonic clock, so that a step of the wall clock
   * moves no lease deadline.
   */
  readonly clock?: Clock | undefined;
}

/** One leased message as its holder handles it. */
export interface HeldLease {
  /** Saves progress with the next renewal; resolves once the server has stored it. */
  checkpoint(bytes: Uint8Array): Promise<void>;
  /** Stops renewing at once: the holder is deleting the message. */
  drop(): void;
  /**
   * Stops renewing at once and deletes the message on the stream (Subscribe
   * only); resolves once the broker confirms, rejects with an RpcError if it
   * refuses (the message was received again since).
   */
  ack(): Promise<void>;
  /** Stops renewing at once and makes the message visible after delayMs; resolves once answered. */
  release(delayMs: number): Promise<void>;
  /**
   * Stops renewing at once and ends the lease as a failed delivery: the
   * message is visible again after retryDelayMs, or after the queue's retry
   * backoff when undefined (the dead-letter queue if spent); resolves once answered.
   */
  fail(retryDelayMs: number | undefined): Promise<void>;
}

// Renewals come early by up to this fraction of the interval, so that many
// consumers do not beat in step.
const renewJitter = 0.2;
// An unanswered request means a stuck connection after this long (or a
// lease's length, if longer): the stream is then broken and reopened.
const minStallMs = 5_000;

interface PendingCheckpoint {
  readonly bytes: Uint8Array;
  readonly waiters: Waiter[];
}

/** How a release ends its lease: as a plain release after delayMs, or as a failed delivery (delayMs undefined: the queue's backoff). */
interface ReleaseEnding {
  readonly delayMs: number | undefined;
  readonly failed: boolean;
}

interface PendingRelease {
  readonly ending: ReleaseEnding;
  readonly waiters: Waiter[];
}

interface Lease {
  readonly handle: string;
  readonly onLost: (error: LeaseLostError) => void;
  /**
   * held: renewed on schedule; refused: a renewal was refused, so it is no
   * longer renewed, but its handle works until its deadline (for a release
   * or a delete); releasing: a release waits to be answered; gone: never
   * named again.
   */
  state: "held" | "refused" | "releasing" | "gone";
  /** Why it is gone, for checkpoints that come too late. */
  endError: Error | undefined;
  /** A renewal belongs in the next request. */
  due: boolean;
  /** Named by the request in flight, whose answer decides its fate. */
  inFlight: boolean;
  /** When the lease runs out unless renewed, by the keeper's clock. */
  expiresAt: number;
  renewTimer: Timer | undefined;
  expiryTimer: Timer | undefined;
  checkpoint: PendingCheckpoint | undefined;
  release: PendingRelease | undefined;
}

interface Entry {
  readonly lease: Lease;
  readonly checkpoint: PendingCheckpoint | undefined;
  readonly release: PendingRelease | undefined;
}

interface InFlight {
  readonly request: LeaseRequest;
  readonly entries: Entry[];
  readonly acks: AckEntry[];
  readonly sentAt: number;
  readonly stall: Timer;
}

/**
 * Holds many leases on ONE stream (release_on_disconnect), Heartbeat or
 * Subscribe: renews each before it runs out, carries checkpoints, releases
 * and (on Subscribe) acks, tells a lease's holder when it is lost, and
 * reopens a broken stream with backoff, renewing there every lease still
 * held. At most one request is in flight, which is what lets answers be told
 * from unsolicited notices (see LeaseChannel.split); what is asked for
 * meanwhile goes in the next request together.
 */
export class LeaseKeeper {
  private readonly leases = new Map<string, Lease>();
  private readonly acks = new PendingAcks();
  private stream: LeaseChannel | undefined;
  private inFlight: InFlight | undefined;
  private reopenTimer: Timer | undefined;
  private attempt = 0;
  private closing = false;
  private closed = false;
  private idleWaiters: (() => void)[] = [];
  private endWaiter: (() => void) | undefined;
  private pumpScheduled = false;

  private readonly clock: Clock;

  constructor(private readonly options: LeaseKeeperOptions) {
    this.clock = options.clock ?? monotonicClock;
    this.open();
  }

  /**
   * Starts renewing a lease received at `since` (by the keeper's clock);
   * onLost fires if it is lost before it settles. `delivered`: the stream
   * delivered it and already holds it, so it is not named at once.
   */
  hold(receiptHandle: string, since: number, onLost: (error: LeaseLostError) => void, delivered = false): HeldLease {
    const lease: Lease = {
      handle: receiptHandle,
      onLost,
      state: "held",
      endError: undefined,
      due: false,
      inFlight: false,
      expiresAt: 0,
      renewTimer: undefined,
      expiryTimer: undefined,
      checkpoint: undefined,
      release: undefined,
    };
    this.leases.set(receiptHandle, lease);
    this.schedule(lease, since);
    if (!delivered) {
      // Named on the stream at once, not first at its renewal time: until the
      // server tracks a lease, a crash of this process leaves it hidden until
      // its timeout instead of releasing it in milliseconds.
      lease.due = true;
      this.pump();
    }
    return {
      checkpoint: (bytes) => this.saveCheckpoint(lease, bytes),
      drop: () => this.forget(lease, new Error("the message was settled before this checkpoint was sent")),
      ack: () => this.ack(lease),
      release: (delayMs) => this.release(lease, { delayMs, failed: false }),
      fail: (retryDelayMs) => this.release(lease, { delayMs: retryDelayMs, failed: true }),
    };
  }

  /**
   * Sends what is pending and waits for its answers, then half-closes the
   * stream and waits for the server to end it, all within timeoutMs; then
   * forgets every lease. Leases still held are left to run out.
   */
  async close(timeoutMs: number): Promise<void> {
    this.closing = true;
    let timer: Timer | undefined;
    const timeout = new Promise<void>((resolve) => (timer = this.clock.setTimer(timeoutMs, resolve)));
    try {
      await Promise.race([this.whenIdle(), timeout]);
      // Nothing more is sent: a stream that is down stays down.
      this.closed = true;
      this.reopenTimer?.cancel();
      const stream = this.stream;
      if (stream !== undefined) {
        const ended = new Promise<void>((resolve) => (this.endWaiter = resolve));
        stream.end();
        await Promise.race([ended, timeout]);
      }
    } finally {
      timer?.cancel();
      const stream = this.stream;
      this.stream = undefined;
      stream?.cancel();
      this.dropInFlight();
      for (const lease of [...this.leases.values()]) {
        this.forget(
          lease,
          new Error("the consumer stopped"),
          new Error("the consumer stopped before this release was sent"),
        );
      }
    }
  }

  private open(): void {
    this.reopenTimer = undefined;
    let stream: LeaseChannel;
    try {
      stream = this.options.openStream();
    } catch (error) {
      // A closed channel throws here; in a timer callback that would crash the process.
      this.options.onError(error);
      this.scheduleReopen();
      return;
    }
    this.stream = stream;
    // A broken stream made the server release every lease it tracked; a
    // renewal on the new stream takes each back, unless another consumer
    // received the message meanwhile (then the answer says LEASE_SUPERSEDED).
    for (const lease of this.leases.values()) if (lease.state === "held") lease.due = true;
    void this.read(stream);
    // Sent even when empty: the first request carries release_on_disconnect
    // (and opens a subscription), and on Heartbeat its answer proves the
    // stream works (QUEUE_NOT_FOUND otherwise).
    this.pump(true);
  }

  private async read(stream: LeaseChannel): Promise<void> {
    let failure: unknown;
    try {
      for await (const response of stream) {
        if (stream !== this.stream) return;
        this.onResponse(stream, response);
      }
      if (!this.closing) failure = new Error(`the server ended the ${stream.rpc} stream`);
    } catch (error) {
      failure = error;
    }
    if (stream === this.stream) this.onStreamEnd(failure);
  }

  /** Pumps once what this turn of the event loop asks for: acks of handlers finishing together go in one request. */
  private schedulePump(): void {
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  /** Sends one request with every ack, renewal, checkpoint and release due, unless one is in flight. */
  private pump(evenIfEmpty = false): void {
    const stream = this.stream;
    if (stream === undefined || this.inFlight !== undefined) return;
    const acks = this.acks.take(maxRenewals);
    const entries: Entry[] = [];
    for (const lease of this.leases.values()) {
      // The protocol's limit per request; the rest wait for the next.
      if (entries.length === maxRenewals) break;
      if (!lease.due && lease.checkpoint === undefined && lease.release === undefined) continue;
      entries.push({ lease, checkpoint: lease.checkpoint, release: lease.release });
      lease.due = false;
      lease.checkpoint = undefined;
      lease.release = undefined;
      lease.inFlight = true;
    }
    const request: LeaseRequest = {
      leases: entries.map((entry) => this.renewal(entry)),
      acks: acks.map((ack) => ack.handle),
    };
    if (entries.length === 0 && acks.length === 0) {
      // An opening request that no answer will follow (Subscribe's) is sent but not awaited.
      if (evenIfEmpty && !stream.answersEmptyRequests) stream.send(request);
      if (!evenIfEmpty || !stream.answersEmptyRequests) {
        this.checkIdle();
        return;
      }
    }
    const stallMs = Math.max(minStallMs, this.options.leaseMs);
    const stall = this.clock.setTimer(stallMs, () =>
      this.breakStream(new Error(`no ${stream.rpc} answer within ${stallMs} ms`)),
    );
    this.inFlight = { request, entries, acks, sentAt: this.clock.now(), stall };
    stream.send(request);
  }

  private renewal({ lease, checkpoint, release }: Entry): LeaseRenewal {
    return {
      receiptHandle: lease.handle,
      visibilityTimeoutMs: release === undefined ? this.options.visibilityTimeoutMs : release.ending.delayMs,
      checkpoint: checkpoint?.bytes,
      ...(release?.ending.failed === true ? { failed: true } : {}),
    };
  }

  private onResponse(stream: LeaseChannel, response: LeaseResponse): void {
    const request = this.inFlight;
    // Any response proves the stream works: the next break starts the backoff over.
    this.attempt = 0;
    const { answer, notices } = stream.split(request?.request, response);
    if (request !== undefined && answer !== undefined) {
      request.stall.cancel();
      this.inFlight = undefined;
      request.acks.forEach((ack, index) => {
        settleAck(ack, answer.acks[index]!);
      });
      request.entries.forEach((entry, index) => {
        this.applyAnswer(entry, answer.leases[index]!, request.sentAt);
      });
    }
    for (const state of notices) {
      const lease = this.leases.get(state.receiptHandle);
      // A lease in flight is decided by its answer: the renewal may have
      // taken it back after the notice was sent.
      if (!state.held && lease !== undefined && !lease.inFlight) this.lose(lease, state.reason);
    }
    this.pump();
  }

  private applyAnswer({ lease, checkpoint, release }: Entry, state: LeaseState, sentAt: number): void {
    lease.inFlight = false;
    const stored = state.held || (release !== undefined && state.reason === LeaseEnding.RELEASED);
    if (checkpoint !== undefined) {
      if (stored) settle(checkpoint.waiters);
      else settle(checkpoint.waiters, new LeaseLostError(lease.handle, state.reason));
    }
    if (release !== undefined) {
      if (!state.held && leaseRefusalReasons.has(state.reason)) {
        // Refused (a retry delay over 12 h, say): nothing changed, and the
        // handle works until the lease's deadline. Its holder hears of it,
        // and an ending asked for since (stop's release) is still sent.
        const error = new LeaseLostError(lease.handle, state.reason);
        this.markRefused(lease, error);
        settle(release.waiters, error);
        return;
      }
      // Released, or already lost: either way the message is no longer ours.
      this.forget(lease, new Error("the message was released"));
      settle(release.waiters);
      return;
    }
    if (lease.state === "gone") return;
    if (state.held) {
      if (lease.state === "held") this.schedule(lease, sentAt);
    } else if (leaseRefusalReasons.has(state.reason)) {
      this.refuse(lease, state.reason);
    } else {
      this.lose(lease, state.reason);
    }
  }

  /** Sets a lease's renewal and expiry timers, counting from when its last receive or renewal was sent. */
  private schedule(lease: Lease, from: number): void {
    lease.renewTimer?.cancel();
    lease.expiryTimer?.cancel();
    const { leaseMs, renewFraction } = this.options;
    const now = this.clock.now();
    const renewAt = from + leaseMs * renewFraction * (1 - renewJitter * Math.random());
    lease.expiresAt = from + leaseMs;
    lease.renewTimer = this.clock.setTimer(renewAt - now, () => {
      lease.due = true;
      this.pump();
    });
    lease.expiryTimer = this.clock.setTimer(lease.expiresAt - now, () => this.expire(lease));
  }

  // Without an answer by its deadline (the stream is down, say) a lease must
  // be presumed lost; one in flight waits for its answer or the stall timeout.
  private expire(lease: Lease): void {
    if (!lease.inFlight) this.lose(lease, LeaseEnding.LEASE_EXPIRED);
  }

  private saveCheckpoint(lease: Lease, bytes: Uint8Array): Promise<void> {
    if (lease.state !== "held")
      return Promise.reject(lease.endError ?? new LeaseLostError(lease.handle, LeaseEnding.RELEASED));
    return new Promise((resolve, reject) => {
      // The newest checkpoint replaces one not sent yet; its answer settles both.
      lease.checkpoint = { bytes, waiters: [...(lease.checkpoint?.waiters ?? []), { resolve, reject }] };
      this.pump();
    });
  }

  private ack(lease: Lease): Promise<void> {
    // Acked even after the lease was lost: if nobody received the message
    // since, the finished work is not done again.
    this.forget(lease, new Error("the message was settled before this checkpoint was sent"));
    if (this.closed) return Promise.reject(new Error("the consumer stopped before this ack was sent"));
    const confirmed = this.acks.add(lease.handle);
    this.schedulePump();
    return confirmed;
  }

  private release(lease: Lease, ending: ReleaseEnding): Promise<void> {
    if (lease.state === "gone") return Promise.resolve();
    return new Promise((resolve, reject) => {
      const waiters = [...(lease.release?.waiters ?? []), { resolve, reject }];
      // The first ending asked for wins; later callers wait for its answer.
      lease.release = { ending: lease.release?.ending ?? ending, waiters };
      if (lease.state === "held") {
        // Renewals stop now; the expiry timer stays, so that a release the
        // server never hears of still ends when the lease would.
        lease.state = "releasing";
        lease.due = false;
        lease.renewTimer?.cancel();
      }
      this.pump();
    });
  }

  /**
   * A renewal was refused: the lease cannot be kept, so its holder hears it
   * is lost, but it keeps its deadline and its handle still works. It stays
   * until then, unrenewed, so that the holder's release or delete still
   * reaches it: a consumer frees its slot only once the message is settled,
   * and never holds more leases than it has slots.
   */
  private refuse(lease: Lease, reason: LeaseReason): void {
    if (lease.state !== "held") return;
    const error = new LeaseLostError(lease.handle, reason);
    this.markRefused(lease, error);
    lease.onLost(error);
  }

  /** Stops renewing a lease whose handle still works until its deadline; a checkpoint not yet sent fails, unsent. */
  private markRefused(lease: Lease, error: LeaseLostError): void {
    lease.state = "refused";
    lease.endError = error;
    lease.due = false;
    lease.renewTimer?.cancel();
    if (lease.checkpoint !== undefined) settle(lease.checkpoint.waiters, error);
    lease.checkpoint = undefined;
  }

  private lose(lease: Lease, reason: LeaseReason): void {
    if (lease.state === "gone") return;
    const error = new LeaseLostError(lease.handle, reason);
    const wasHeld = lease.state === "held";
    this.forget(lease, error);
    if (wasHeld) lease.onLost(error);
  }

  /**
   * Never names the lease again; settles whoever waits on what was not
   * sent: checkpoints fail with `error`, and a release succeeds (the
   * message is no longer ours) unless `unsentRelease` says why it failed.
   */
  private forget(lease: Lease, error: Error, unsentRelease?: Error): void {
    if (lease.state === "gone") return;
    lease.state = "gone";
    lease.endError = error;
    lease.renewTimer?.cancel();
    lease.expiryTimer?.cancel();
    this.leases.delete(lease.handle);
    if (lease.checkpoint !== undefined) settle(lease.checkpoint.waiters, error);
    if (lease.release !== undefined) settle(lease.release.waiters, unsentRelease);
    lease.checkpoint = undefined;
    lease.release = undefined;
    this.checkIdle();
  }

  private onStreamEnd(failure: unknown): void {
    this.stream = undefined;
    this.requeueInFlight();
    if (failure instanceof RpcError && failure.reason === "QUEUE_NOT_FOUND") {
      for (const lease of [...this.leases.values()]) this.lose(lease, "QUEUE_NOT_FOUND");
    }
    const now = this.clock.now();
    for (const lease of [...this.leases.values()])
      if (lease.expiresAt <= now) this.lose(lease, LeaseEnding.LEASE_EXPIRED);
    if (this.closing) this.endWaiter?.();
    if (failure === undefined) return;
    this.options.onError(failure);
    if (!this.closing || this.hasPending()) this.scheduleReopen();
  }

  private scheduleReopen(): void {
    if (this.closed) return;
    this.reopenTimer = this.clock.setTimer(backoffDelayMs(this.attempt++), () => this.open());
  }

  private breakStream(error: Error): void {
    const stream = this.stream;
    if (stream === undefined) return;
    this.onStreamEnd(error);
    stream.cancel();
  }

  /** Puts back what an unanswered request carried: it goes again on the next stream. */
  private requeueInFlight(): void {
    this.acks.putBack(this.inFlight?.acks ?? []);
    for (const { lease, checkpoint, release } of this.takeInFlight()) {
      if (lease.state === "gone") {
        if (checkpoint !== undefined) settle(checkpoint.waiters, lease.endError ?? new Error("the lease ended"));
        if (release !== undefined) settle(release.waiters);
        continue;
      }
      if (checkpoint !== undefined) {
        // A newer checkpoint queued meanwhile wins; its answer settles the older one's waiters too.
        lease.checkpoint = {
          bytes: lease.checkpoint?.bytes ?? checkpoint.bytes,
          waiters: [...checkpoint.waiters, ...(lease.checkpoint?.waiters ?? [])],
        };
      }
      if (release !== undefined) {
        lease.release = { ending: release.ending, waiters: [...release.waiters, ...(lease.release?.waiters ?? [])] };
      }
    }
  }

  private dropInFlight(): void {
    const unconfirmed = new Error("the consumer stopped before the broker confirmed this ack");
    for (const { waiters } of this.inFlight?.acks ?? []) settle(waiters, unconfirmed);
    this.acks.failAll(unconfirmed);
    for (const { checkpoint, release } of this.takeInFlight()) {
      if (checkpoint !== undefined) settle(checkpoint.waiters, new Error("the consumer stopped"));
      if (release !== undefined)
        settle(release.waiters, new Error("the consumer stopped before the broker answered this release"));
    }
  }

  /** Takes the unanswered request out of flight (its answer will not come) and returns its entries. */
  private takeInFlight(): Entry[] {
    const request = this.inFlight;
    if (request === undefined) return [];
    request.stall.cancel();
    this.inFlight = undefined;
    for (const { lease } of request.entries) lease.inFlight = false;
    return request.entries;
  }

  private hasPending(): boolean {
    if (this.inFlight !== undefined || this.acks.size > 0) return true;
    for (const lease of this.leases.values())
      if (lease.checkpoint !== undefined || lease.release !== undefined) return true;
    return false;
  }

  private whenIdle(): Promise<void> {
    if (!this.hasPending()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private checkIdle(): void {
    if (this.idleWaiters.length === 0 || this.hasPending()) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}
