import { create } from "@bufbuild/protobuf";
import type { ServerDuplexStream } from "@grpc/grpc-js";
import {
  HeartbeatResponseSchema,
  type HeartbeatRequest,
  type HeartbeatResponse,
} from "../../gen/holdshelf/v1/queue_service_pb.js";
import type { LeaseStreamOperations } from "../broker/broker-slices.js";
import type { LeaseStream } from "../broker/lease-tracking.js";
import type { ClusterPeer, QueueRouter } from "../cluster/queue-router.js";
import { HoldshelfError, invalidArgument } from "../errors/holdshelf-error.js";
import { leaseStateToWire, renewFromWire } from "../service/lease-renewals-wire.js";
import type { Logger } from "../logging/logger.js";
import { LeaseEnding } from "../protocol/lease-state-reason.js";
import { toErrorStatus } from "./error-status.js";
import { afterResetGrace, endedCleanly } from "./half-close-grace.js";
import { OwnerHeartbeatStreams } from "./forwarding/owner-heartbeat-streams.js";
import type { PeerClients } from "./forwarding/peer-clients.js";
import { isForwarded } from "./forwarding/peer-metadata.js";
import { notServedHere } from "./forwarding/queue-moving.js";
import { MalformedRequest } from "./service-definition.js";

/** A Heartbeat call as grpc-js hands it to the server. */
export type HeartbeatCall = ServerDuplexStream<HeartbeatRequest | MalformedRequest, HeartbeatResponse>;

/** How a session reaches the queues other brokers serve (cluster mode). */
export interface HeartbeatRouting {
  readonly router: QueueRouter;
  readonly peers: PeerClients;
}

// Requests read ahead of the one being answered before reading pauses: a
// client that writes faster than its renewals commit is slowed by HTTP/2
// flow control instead of filling our memory.
const maxQueuedRequests = 8;

/** A request read from the client, and how it is to be answered in its turn. */
type Pending =
  | { readonly kind: "local"; readonly request: HeartbeatRequest }
  /** On another broker's queue: sent to its owner as it was read. */
  | { readonly kind: "forwarded"; readonly answer: Promise<HeartbeatResponse> }
  /** Ends the stream once the requests before it are answered. */
  | { readonly kind: "failed"; readonly error: unknown };

/**
 * One Heartbeat stream: answers each request, in order, with one response;
 * pushes LEASE_EXPIRED for tracked leases that ran out; and when the stream
 * ends, hands its leases back to the broker (released at once if the client
 * asked for release_on_disconnect and went away without a clean half-close).
 * It reads no further while the client is not reading its responses.
 * Requests on queues other brokers serve go to those owners, on streams the
 * session holds for the client's (OwnerHeartbeatStreams); those end as the
 * client's does, and their expiry notices reach the client like its own.
 */
export class HeartbeatSession {
  private readonly stream: LeaseStream;
  private readonly requests: Pending[] = [];
  private readonly expiredBacklog: string[] = [];
  /** Owners' expiry notices the client has not read yet. */
  private readonly ownerNotices: HeartbeatResponse[] = [];
  /** Opened at the first request on a queue another broker serves. */
  private owners: OwnerHeartbeatStreams | undefined;
  /** Passed here by another broker: requests on queues this one does not serve are not passed on again. */
  private readonly forwarded: boolean;
  private releaseOnDisconnect: boolean | undefined;
  /** The first request that failed as it was read: the stream ends there, so none behind it is passed on. */
  private readFailure: Pending | undefined;
  private answering = false;
  private blocked = false;
  private halfClosed = false;
  /** Waiting to tell a clean half-close from a cancel. */
  private ending = false;
  private ended = false;

  constructor(
    private readonly call: HeartbeatCall,
    private readonly streams: LeaseStreamOperations,
    private readonly logger: Logger,
    private readonly logUnexpected: (error: unknown) => void,
    private readonly routing: HeartbeatRouting,
    // Throws PERMISSION_DENIED (or UNAUTHENTICATED) for a queue the caller may not renew leases on.
    private readonly authorizeQueue: (queue: string) => void = () => undefined,
  ) {
    this.forwarded = isForwarded(call.metadata);
    this.stream = streams.open({
      leasesExpired: (handles) => this.pushExpired(handles),
      // A client that half-closed and got every answer is done: its stream ends cleanly, not with an error it no longer reads.
      brokerClosing: () =>
        this.ending
          ? this.endHalfClosed()
          : this.fail(new HoldshelfError("SHUTTING_DOWN", "the broker is shutting down")),
      storageUnavailable: (error) => this.fail(error),
    });
    call.on("data", (request: HeartbeatRequest | MalformedRequest) => {
      if (this.ended) return;
      // A request behind one being answered: that one's write must not linger.
      if (this.answering) streams.hurry();
      this.requests.push(this.read(request));
      if (this.requests.length >= maxQueuedRequests) call.pause();
      void this.answer();
    });
    call.on("end", () => {
      this.halfClosed = true;
      void this.answer();
    });
    call.on("drain", () => {
      this.blocked = false;
      this.flushNotices();
      void this.answer();
    });
    // The client cancelled, its deadline passed, or its connection broke.
    call.on("cancelled", () => this.finish(this.releaseOnDisconnect === true, true));
    call.on("error", () => this.finish(false));
  }

  private async answer(): Promise<void> {
    if (this.answering || this.ended) return;
    this.answering = true;
    try {
      while (!this.ended && !this.blocked && this.requests.length > 0) {
        const pending = this.requests.shift()!;
        if (this.requests.length < maxQueuedRequests) this.call.resume();
        if (pending.kind === "failed") throw pending.error;
        this.write(await (pending.kind === "local" ? this.renew(pending.request) : pending.answer));
      }
      if (this.halfClosed && this.requests.length === 0 && !this.ended && !this.ending) {
        this.ending = true;
        // The half-close may yet turn out a cancel (half-close-grace.ts).
        afterResetGrace(() => this.endHalfClosed());
      }
    } catch (error) {
      this.fail(error);
    } finally {
      this.answering = false;
    }
  }

  /** Ends a stream the client half-closed, once every request is answered. */
  private endHalfClosed(): void {
    if (this.ended) return;
    if (!endedCleanly(this.call)) return this.finish(this.releaseOnDisconnect === true, true);
    // A clean half-close: the client is done; its leases run their course.
    this.finish(false);
    this.call.end();
  }

  /**
   * Checks a request as it is read, and sends one on another broker's queue
   * to that owner at once: the owner then sees the requests queued behind it,
   * as this broker sees its own, and does not let its write linger for
   * company. A failure waits its turn: the requests before it are answered.
   */
  private read(request: HeartbeatRequest | MalformedRequest): Pending {
    if (this.readFailure !== undefined) return this.readFailure;
    try {
      if (request instanceof MalformedRequest) throw invalidArgument("request", request.description);
      // Before the queue is looked up: a refusal says nothing of whether it exists, nor where.
      this.authorizeQueue(request.queue);
      this.releaseOnDisconnect ??= request.releaseOnDisconnect;
      const route = this.routing.router.route(request.queue);
      if (route.kind === "local") return { kind: "local", request };
      if (route.kind === "unavailable") throw route.error;
      const answer = this.renewAt(route.owner, request);
      // Awaited in its turn, unless the stream ends first.
      answer.catch(() => undefined);
      return { kind: "forwarded", answer };
    } catch (error) {
      this.readFailure = { kind: "failed", error };
      return this.readFailure;
    }
  }

  /** Renews leases of a queue this broker serves. */
  private async renew(request: HeartbeatRequest): Promise<HeartbeatResponse> {
    const moreQueued = this.requests.length > 0;
    const leases = await renewFromWire(request.leases, (renewals) =>
      this.streams.renew(this.stream, request.queue, renewals, moreQueued),
    );
    return create(HeartbeatResponseSchema, { leases });
  }

  /** Renews the leases of a queue another broker serves, on this session's stream to that owner. */
  private renewAt(owner: ClusterPeer, request: HeartbeatRequest): Promise<HeartbeatResponse> {
    if (this.forwarded) throw notServedHere(request.queue);
    this.owners ??= new OwnerHeartbeatStreams(
      {
        peers: this.routing.peers,
        callerMetadata: this.call.metadata,
        selfNodeId: this.routing.router.self.nodeId,
        deadline: this.call.getDeadline(),
      },
      {
        notice: (response) => {
          this.ownerNotices.push(response);
          this.flushNotices();
        },
        failed: (error) => this.fail(error),
      },
    );
    return this.owners.renew(owner, request, this.releaseOnDisconnect === true);
  }

  private pushExpired(handles: string[]): void {
    this.expiredBacklog.push(...handles);
    this.flushNotices();
  }

  private flushNotices(): void {
    if (this.ended || this.blocked) return;
    if (this.expiredBacklog.length > 0) {
      const handles = this.expiredBacklog.splice(0);
      this.write(
        create(HeartbeatResponseSchema, {
          leases: handles.map((receiptHandle) =>
            leaseStateToWire({ receiptHandle, held: false, reason: LeaseEnding.LEASE_EXPIRED }),
          ),
        }),
      );
    }
    while (!this.blocked && this.ownerNotices.length > 0) this.write(this.ownerNotices.shift()!);
  }

  private write(response: HeartbeatResponse): void {
    if (this.ended) return;
    // false: the client is not reading. Stop answering until it drains.
    if (!this.call.write(response)) this.blocked = true;
  }

  /** Ends the stream with an error status; its leases are left as they are. */
  private fail(error: unknown): void {
    if (this.ended) return;
    this.finish(false);
    this.call.emit("error", toErrorStatus(error, this.logUnexpected));
  }

  /** Hands the stream's leases back; `broken` when the client went away without a clean half-close. */
  private finish(release: boolean, broken = false): void {
    if (this.ended) return;
    this.ended = true;
    // The owners' streams end as the client's did, so each owner does with its leases what this broker does with its own.
    if (broken) this.owners?.cancel();
    else this.owners?.end();
    this.streams
      .close(this.stream, release)
      .then((leases) => {
        // One line per stream, never per lease: a worker fleet restarting is a handful of lines.
        if (broken && leases > 0) {
          this.logger.info("heartbeat stream broken", { peer: this.call.getPeer(), leases, released: release });
        }
      })
      .catch(this.logUnexpected);
  }
}
