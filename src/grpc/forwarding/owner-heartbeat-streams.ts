import type { ClientDuplexStream, Deadline, Metadata, ServiceError, StatusObject } from "@grpc/grpc-js";
import type { HeartbeatRequest, HeartbeatResponse } from "../../../gen/holdshelf/v1/queue_service_pb.js";
import type { ClusterPeer } from "../../cluster/queue-router.js";
import { HoldshelfError } from "../../errors/holdshelf-error.js";
import { Code } from "../../protocol/error-reasons.js";
import { answersRequest } from "../../protocol/heartbeat-matching.js";
import { queueServiceDefinition } from "../../protocol/queue-service-definition.js";
import { ownerFailure } from "./owner-failure.js";
import type { PeerClients } from "./peer-clients.js";
import { forwardedMetadata } from "./peer-metadata.js";

/** What a client's Heartbeat session hears from its streams to the queues' owners. */
export interface OwnerStreamsListener {
  /** A response that answers no request: an owner's expiry notice, for the client as it is. */
  notice(response: HeartbeatResponse): void;
  /** A stream to an owner failed: QUEUE_MOVING, or the owner's own status (ForwardedStatus). */
  failed(error: Error): void;
}

/** How a session's streams to owners are opened: as the client's call, passed on. */
export interface OwnerStreamsOptions {
  readonly peers: PeerClients;
  /** The client stream's metadata (its authorization): each owner checks it again. */
  readonly callerMetadata: Metadata;
  readonly selfNodeId: string;
  /** The client stream's: the owners' streams end when it does. */
  readonly deadline: Deadline;
}

/** A request sent to an owner and not answered yet. */
interface InFlight {
  readonly handles: readonly string[];
  resolve(response: HeartbeatResponse): void;
  reject(error: Error): void;
}

/** One stream to one owner. */
interface OwnerStream {
  readonly owner: ClusterPeer;
  readonly call: ClientDuplexStream<HeartbeatRequest, HeartbeatResponse>;
  /** Oldest first: the owner answers in this order. */
  readonly inFlight: InFlight[];
}

const heartbeat = queueServiceDefinition["heartbeat"]!;

/**
 * The Heartbeat streams one client stream's session holds to other brokers,
 * one per owner, opened at the first request on a queue that owner serves.
 * The owner answers its stream's requests in order, so a response answers
 * the oldest one unanswered exactly when it names that request's handles,
 * in order (answersRequest, as a LeaseKeeper tells answers from notices);
 * any other is an expiry notice. In the rare case answersRequest describes
 * (a notice naming exactly the request's handles, ahead of the answer), the
 * late answer may be taken for the next request's if that one names the
 * same handles too: the client then gets the states of a renewal of the
 * same leases a moment older.
 */
export class OwnerHeartbeatStreams {
  private readonly streams = new Map<string, OwnerStream>();
  private closed = false;

  constructor(
    private readonly options: OwnerStreamsOptions,
    private readonly listener: OwnerStreamsListener,
  ) {}

  /**
   * Sends a request to the owner's stream and resolves with its answer;
   * requests may be sent before earlier ones are answered. The client's
   * release_on_disconnect rides on it: the owner reads it from its stream's
   * first request.
   */
  renew(owner: ClusterPeer, request: HeartbeatRequest, releaseOnDisconnect: boolean): Promise<HeartbeatResponse> {
    if (this.closed) return Promise.reject(new Error("the stream has ended"));
    let stream = this.streams.get(owner.address);
    if (stream === undefined) {
      stream = this.open(owner);
      this.streams.set(owner.address, stream);
    }
    request.releaseOnDisconnect = releaseOnDisconnect;
    const sent = stream;
    return new Promise((resolve, reject) => {
      sent.inFlight.push({ handles: request.leases.map((lease) => lease.receiptHandle), resolve, reject });
      sent.call.write(request);
    });
  }

  /** Half-closes every stream: the client ended cleanly, or its stream failed. The owners leave the leases as they are. */
  end(): void {
    this.close((call) => call.end());
  }

  /** Cancels every stream: the client went away, and owners release the leases if it asked for release_on_disconnect. */
  cancel(): void {
    this.close((call) => call.cancel());
  }

  private close(how: (call: OwnerStream["call"]) => void): void {
    if (this.closed) return;
    this.closed = true;
    for (const stream of this.streams.values()) {
      // Answers nobody waits for any more: the session that sent them has ended.
      for (const inFlight of stream.inFlight.splice(0)) inFlight.reject(new Error("the stream has ended"));
      how(stream.call);
    }
    this.streams.clear();
  }

  private open(owner: ClusterPeer): OwnerStream {
    const call = this.options.peers
      .client(owner.address)
      .makeBidiStreamRequest(
        heartbeat.path,
        heartbeat.requestSerialize as (request: HeartbeatRequest) => Buffer,
        heartbeat.responseDeserialize as (bytes: Buffer) => HeartbeatResponse,
        forwardedMetadata(this.options.callerMetadata, this.options.selfNodeId),
        { deadline: this.options.deadline },
      );
    const stream: OwnerStream = { owner, call, inFlight: [] };
    call.on("data", (response: HeartbeatResponse) => {
      if (this.closed) return;
      const oldest = stream.inFlight[0];
      if (oldest !== undefined && answersRequest(oldest.handles, response.leases)) {
        stream.inFlight.shift();
        oldest.resolve(response);
      } else {
        this.listener.notice(response);
      }
    });
    call.on("error", (error: ServiceError) => this.lost(stream, ownerFailure(error, owner)));
    call.on("status", (status: StatusObject) => {
      // An owner ends a stream with OK only after it was half-closed, which
      // closes this set first; before that, its leases would go unrenewed.
      if (status.code === Code.OK) {
        this.lost(
          stream,
          new HoldshelfError(
            "QUEUE_MOVING",
            `broker ${owner.nodeId}, which serves some of the stream's queues, ended its stream; retry`,
          ),
        );
      }
    });
    return stream;
  }

  private lost(stream: OwnerStream, error: Error): void {
    if (this.closed) return;
    this.streams.delete(stream.owner.address);
    for (const inFlight of stream.inFlight.splice(0)) inFlight.reject(error);
    this.listener.failed(error);
  }
}
