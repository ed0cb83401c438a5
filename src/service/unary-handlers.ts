import type { DescService, MessageInitShape, MessageShape } from "@bufbuild/protobuf";
import type { GenServiceMethods } from "@bufbuild/protobuf/codegenv2";
import type { CallContext } from "./call-context.js";
import type { PreEncoded } from "./pre-encoded.js";

/**
 * Promise-returning handlers of a service's unary methods, whatever wire
 * calls them (gRPC, the SQS endpoint, the console); the signal aborts when
 * the caller cancels. A handler may answer with its response already
 * encoded (the gRPC server's serializer sends those bytes as they are).
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
