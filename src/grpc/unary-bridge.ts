import type { DescService, MessageInitShape, MessageShape } from "@bufbuild/protobuf";
import type { GenServiceMethods } from "@bufbuild/protobuf/codegenv2";
import type { Deadline, Metadata, sendUnaryData, ServerUnaryCall, UntypedServiceImplementation } from "@grpc/grpc-js";
import type { Principal } from "../auth/permissions.js";
import { invalidArgument } from "../errors/holdshelf-error.js";
import { toErrorStatus } from "./error-status.js";
import type { PreEncoded } from "./pre-encoded.js";
import { MalformedRequest } from "./service-definition.js";

/**
 * Trailing metadata a handler adds to its call's answer, OK or error (the
 * owner hint). A holder rather than a field of the context: wrappers pass
 * copies of the context on, and the bridge must see what the innermost
 * handler set.
 */
export class AnswerTrailer {
  /** Sent as it is with an OK answer (grpc-js sends a copy, so one object may serve many calls); copied into an error's trailers. */
  metadata: Metadata | undefined = undefined;
}

/** What a handler knows of its call besides the request. */
export interface CallContext {
  readonly metadata: Metadata;
  /** When the caller stops waiting (a Date or epoch ms; Infinity for never): a call passed on to another broker keeps it. */
  readonly deadline: Deadline;
  readonly trailer: AnswerTrailer;
  /** Which queues the caller may learn of (set by authentication); every queue when unset. */
  readonly canSee?: (queue: string) => boolean;
  /**
   * Who the call comes from, when its wire authenticated it already (the SQS
   * endpoint checks signatures); a gRPC call carries its token in metadata instead.
   */
  readonly caller?: Principal;
}

/**
 * Promise-returning handlers of a service's unary methods; the signal aborts
 * when the caller cancels. A handler may answer with its response already
 * encoded (the server's serializer sends those bytes as they are).
 */
export type UnaryHandlers<S> = S extends DescService & { method: infer Methods extends GenServiceMethods }
  ? {
      [K in keyof Methods as Methods[K]["methodKind"] extends "unary" ? K : never]: (
        request: MessageShape<Methods[K]["input"]>,
        signal: AbortSignal,
        context: CallContext,
      ) => Promise<
        | MessageShape<Methods[K]["output"]>
        | MessageInitShape<Methods[K]["output"]>
        | PreEncoded<MessageShape<Methods[K]["output"]>>
      >;
    }
  : never;

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
      handler(call.request as never, abort.signal, { metadata: call.metadata, deadline: call.getDeadline(), trailer }).then(
        (response) => {
          settle();
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

