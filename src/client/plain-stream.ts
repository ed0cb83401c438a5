import type { ClientDuplexStream, ServiceError } from "@grpc/grpc-js";
import { RpcError } from "./rpc-error.js";

/**
 * One bidirectional call with plain requests and responses: each request is
 * turned into its wire message as it is sent, each response into the plain
 * form as it is read, and a failure into RpcError. HeartbeatStream and
 * SubscribeStream are this, with their own messages.
 */
export class PlainStream<Request, Response, WireRequest, WireResponse> implements AsyncIterable<Response> {
  private finished = false;

  constructor(
    private readonly call: ClientDuplexStream<WireRequest, WireResponse>,
    private readonly toWire: (request: Request) => WireRequest,
    private readonly fromWire: (response: WireResponse) => Response,
  ) {
    // Failures reach whoever iterates; an 'error' that nobody listens to
    // (a stream not read yet, a write after the server ended) would crash the process.
    call.on("error", () => {});
  }

  /** Sends one request. */
  send(request: Request): void {
    this.call.write(this.toWire(request));
  }

  /** Half-closes: the server answers what was sent, then ends the stream; leases stay as they are. */
  end(): void {
    this.call.end();
  }

  /** Breaks the stream: with releaseOnDisconnect, the server ends every lease the stream holds at once. */
  cancel(): void {
    this.call.cancel();
  }

  /** Responses until the server ends the stream; a stream that fails throws RpcError. */
  async *[Symbol.asyncIterator](): AsyncGenerator<Response, void, undefined> {
    try {
      for await (const response of this.call as AsyncIterable<WireResponse>) yield this.fromWire(response);
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
