import type { sendUnaryData, ServerUnaryCall, UntypedServiceImplementation } from "@grpc/grpc-js";
import { invalidArgument } from "../errors/holdshelf-error.js";
import { AnswerTrailer, type CallContext } from "../service/call-context.js";
import { PreEncoded } from "../service/pre-encoded.js";
import { toErrorStatus } from "./error-status.js";
import { MalformedRequest } from "./service-definition.js";

/** A unary handler in grpc-js's callback form. */
export type GrpcUnaryHandler = (call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>) => void;

/**
 * Adapts promise handlers to grpc-js: a malformed request becomes
 * INVALID_ARGUMENT, a rejection becomes a status with details, a cancelled
 * call aborts its handler's signal, and the trailer a handler set goes with
 * its answer.
 */
export function bridgeUnaryHandlers(
  handlers: Record<string, (request: never, signal: AbortSignal, context: CallContext) => Promise<unknown>>,
  logUnexpected: (error: unknown) => void,
): UntypedServiceImplementation {
  const implementation: UntypedServiceImplementation = {};
  for (const [name, handler] of Object.entries(handlers)) {
    const bridged: GrpcUnaryHandler = (call, callback) => {
      const trailer = new AnswerTrailer();
      const fail = (error: unknown): void => {
        const status = toErrorStatus(error, logUnexpected);
        if (trailer.metadata !== undefined) {
          for (const [key, value] of Object.entries(trailer.metadata.getMap())) status.metadata.set(key, value);
        }
        callback(status);
      };
      if (call.request instanceof MalformedRequest) {
        return fail(invalidArgument("request", call.request.description));
      }
      const abort = new AbortController();
      const cancelled = (): void => abort.abort();
      call.once("cancelled", cancelled);
      // grpc-js also reports "cancelled" when a finished call's stream closes;
      // aborting then would cost a DOMException per call (9% of the broker's
      // CPU under many small calls) and change nothing.
      const settle = (): void => void call.off("cancelled", cancelled);
      handler(call.request as never, abort.signal, {
        metadata: call.metadata,
        deadline: call.getDeadline(),
        trailer,
      }).then(
        (response) => {
          settle();
          // A lazily written answer (a local Receive's) is written here, so that a
          // failure to write it is logged and answered as a handler's own failure is.
          try {
            if (response instanceof PreEncoded) void response.bytes;
          } catch (error) {
            return fail(error);
          }
          callback(null, response, trailer.metadata);
        },
        (error: unknown) => {
          settle();
          fail(error);
        },
      );
    };
    implementation[name] = bridged;
  }
  return implementation;
}
