import { create } from "@bufbuild/protobuf";
import type { ClientDuplexStream, ServiceError } from "@grpc/grpc-js";
import {
  HeartbeatRequestSchema,
  type HeartbeatRequest as WireHeartbeatRequest,
  type HeartbeatResponse as WireHeartbeatResponse,
} from "../../gen/holdshelf/v1/queue_service_pb.js";
import { heartbeatRequestToWire, leaseStateFromWire } from "./client-convert.js";
import { RpcError } from "./rpc-error.js";
import type { HeartbeatRequest, LeaseState } from "./types.js";

/**
 * A Heartbeat stream with plain requests and responses. The server answers
 * each request with one response, in order, and may also push unsolicited
 * responses (leases that expired) at any time; iterating yields both, in
 * arrival order, each as its list of lease states.
 */
export class HeartbeatStream implements AsyncIterable<LeaseState[]> {
  private finished = false;

  constructor(private readonly call: ClientDuplexStream<WireHeartbeatRequest, WireHeartbeatResponse>) {
    // Failures reach whoever iterates; an 'error' that nobody listens to
    // (a stream not read yet, a write after the server ended) would crash the process.
    call.on("error", () => {});
  }

  /** Sends one request; the server answers it with exactly one response, after those of earlier requests. */
  send(request: HeartbeatRequest): void {
    this.call.write(create(HeartbeatRequestSchema, heartbeatRequestToWire(request)));
  }

  /** Half-closes: the server answers what was sent, then ends the stream; leases stay as they are. */
  end(): void {
    this.call.end();
  }

  /** Breaks the stream: with releaseOnDisconnect, the server releases every lease the stream tracks. */
  cancel(): void {
    this.call.cancel();
  }

  /** Responses until the server ends the stream; a stream that fails throws RpcError. */
  async *[Symbol.asyncIterator](): AsyncGenerator<LeaseState[], void, undefined> {
    try {
      for await (const response of this.call as AsyncIterable<WireHeartbeatResponse>) {
        yield response.leases.map(leaseStateFromWire);
      }
      this.finished = true;
    } catch (error) {
      this.finished = true;
      throw isServiceError(error) ? RpcError.fromServiceError(error) : error;
    } finally {
      // A reader that stops early must not leave the call open on the server.
      if (!this.finished) this.call.cancel();
    }
  }
}

function isServiceError(error: unknown): error is ServiceError {
  return error instanceof Error && "code" in error && "metadata" in error;
}
