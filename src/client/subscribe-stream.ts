import { create } from "@bufbuild/protobuf";
import type { ClientDuplexStream, ServiceError } from "@grpc/grpc-js";
import {
  SubscribeRequestSchema,
  type SubscribeRequest as WireSubscribeRequest,
  type SubscribeResponse as WireSubscribeResponse,
} from "../../gen/holdshelf/v1/queue_service_pb.js";
import { RpcError } from "./rpc-error.js";
import { subscribeRequestToWire, subscribeResponseFromWire } from "./subscribe-convert.js";
import type { SubscribeRequest, SubscribeResponse } from "./types.js";

/**
 * A Subscribe stream with plain requests and responses: one call. The first
 * request opens the subscription; the broker then pushes deliveries up to
 * the stream's credit, answers each request that carries acks or renewals
 * with one response, in order, and pushes notices of expired leases.
 */
export class SubscribeStream implements AsyncIterable<SubscribeResponse> {
  private finished = false;

  constructor(private readonly call: ClientDuplexStream<WireSubscribeRequest, WireSubscribeResponse>) {
    // Failures reach whoever iterates; an 'error' nobody listens to would crash the process.
    call.on("error", () => {});
  }

  /** Sends one request. */
  send(request: SubscribeRequest): void {
    this.call.write(create(SubscribeRequestSchema, subscribeRequestToWire(request)));
  }

  /** Half-closes: no more deliveries; the broker answers what was sent, then ends the stream. */
  end(): void {
    this.call.end();
  }

  /** Breaks the stream: with releaseOnDisconnect, the broker ends every lease the stream holds at once. */
  cancel(): void {
    this.call.cancel();
  }

  /** Responses until the broker ends the stream; a stream that fails throws RpcError. */
  async *[Symbol.asyncIterator](): AsyncGenerator<SubscribeResponse, void, undefined> {
    try {
      for await (const response of this.call as AsyncIterable<WireSubscribeResponse>) {
        yield subscribeResponseFromWire(response);
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
