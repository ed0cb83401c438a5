import { toBinary } from "@bufbuild/protobuf";
import type { ClientDuplexStream, Metadata, ServerDuplexStream } from "@grpc/grpc-js";
import { SubscribeRequestSchema, type SubscribeRequest } from "../../../gen/holdshelf/v1/queue_service_pb.js";
import type { ClusterPeer } from "../../cluster/queue-router.js";
import type { LeaseStreamOperations } from "../../broker/broker-slices.js";
import type { LeaseStream } from "../../broker/lease-tracking.js";
import { HoldshelfError, invalidArgument } from "../../errors/holdshelf-error.js";
import { Code } from "../../protocol/error-reasons.js";
import { queueServiceDefinition } from "../../protocol/queue-service-definition.js";
import { PreEncoded } from "../../service/pre-encoded.js";
import type { SubscribeStreamTarget } from "../subscribe-stream-target.js";
import { ownerFailure } from "./owner-failure.js";
import type { PeerClients } from "./peer-clients.js";
import { forwardedMetadata } from "./peer-metadata.js";

/** How a client's Subscribe stream is passed to the broker that serves its queue. */
export interface OwnerSubscribeOptions {
  readonly peers: PeerClients;
  /** This broker's streams: the passed stream is one of them, to hear that this broker shuts down. */
  readonly streams: Pick<LeaseStreamOperations, "open" | "close">;
  readonly selfNodeId: string;
  /** Ends the client's stream with an error status (the owner's, or QUEUE_MOVING). */
  readonly fail: (error: unknown) => void;
}

const subscribePath = queueServiceDefinition["subscribe"]!.path;
const asBytes = (bytes: Buffer): Buffer => bytes;

/**
 * A client's Subscribe stream passed whole to its queue's owner: one stream
 * names one queue, so every request goes to the owner as it is read, and
 * every response comes back as the owner's bytes. Each side's back-pressure
 * reaches the other: a client that stops reading stops this broker reading
 * the owner, whose session then stops pushing. The stream ends as the
 * owner's does (a hand-over ends it QUEUE_MOVING), and the owner sees the
 * client's end: a cancel is a cancel there too, so release_on_disconnect
 * holds.
 */
export class OwnerSubscribeStream implements SubscribeStreamTarget {
  private readonly owner: ClientDuplexStream<Buffer, Buffer>;
  private ownerEndedOk = false;
  /** This broker is shutting down: the owner's stream is half-closed, and the client's ends when it ends. */
  private closing = false;
  private readonly fail: (error: unknown) => void;
  private readonly local: LeaseStream;

  constructor(
    private readonly call: ServerDuplexStream<unknown, unknown>,
    peer: ClusterPeer,
    callerMetadata: Metadata,
    private readonly options: OwnerSubscribeOptions,
  ) {
    const { streams } = options;
    // It holds no leases here; it only hears the shutdown, and then half-closes the owner's stream, so that
    // the owner leaves the leases as they are, and ends the client's with SHUTTING_DOWN once the owner's ended
    // (the server's drain waits for it): the client reopens with its handles on another broker.
    this.local = streams.open({
      leasesExpired: () => undefined,
      brokerClosing: () => {
        this.closing = true;
        this.owner.end();
      },
    });
    this.fail = (error) => {
      void streams.close(this.local, false);
      options.fail(error);
    };
    const metadata = forwardedMetadata(callerMetadata, options.selfNodeId);
    this.owner = options.peers
      .client(peer.address)
      .makeBidiStreamRequest(subscribePath, asBytes, asBytes, metadata, { deadline: call.getDeadline() });
    this.owner.on("data", (bytes: Buffer) => {
      if (!call.write(new PreEncoded(bytes))) this.owner.pause();
    });
    // Its status, OK or not, follows: see "status".
    this.owner.on("error", () => undefined);
    this.owner.on("status", (status) => {
      if (status.code === Code.OK) this.ownerEndedOk = true;
      else this.fail(ownerFailure(status, peer));
    });
    // After the last response the owner sent has been written to the client.
    this.owner.on("end", () => {
      if (!this.ownerEndedOk) return;
      if (this.closing) return this.fail(new HoldshelfError("SHUTTING_DOWN", "the broker is shutting down"));
      void streams.close(this.local, false);
      call.end();
    });
    this.owner.on("drain", () => call.resume());
  }

  request(request: SubscribeRequest): void {
    // Unanswered, as requests to a broker that stopped: the client sends them again on its next stream.
    if (this.closing) return;
    if (!this.owner.write(Buffer.from(toBinary(SubscribeRequestSchema, request)))) this.call.pause();
  }

  malformed(description: string): void {
    this.owner.cancel();
    this.fail(invalidArgument("request", description));
  }

  halfClose(): void {
    if (!this.closing) this.owner.end();
  }

  drained(): void {
    this.owner.resume();
  }

  broken(): void {
    void this.options.streams.close(this.local, false);
    this.owner.cancel();
  }
}
