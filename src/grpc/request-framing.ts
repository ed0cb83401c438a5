import { ServerInterceptingCall, status as Status, type ServerInterceptor } from "@grpc/grpc-js";
import { invalidArgument } from "../errors/holdshelf-error.js";
import { toErrorStatus } from "./error-status.js";

/**
 * Answers a unary call whose request stream did not hold exactly one message
 * (none, a second one, or a length prefix promising more bytes than came
 * before the end of the stream) with INVALID_ARGUMENT naming "request".
 * grpc-js answers these with UNIMPLEMENTED ("Received no request message for
 * server streaming method ..."), which tells a client the method does not
 * exist. Only grpc-js's framing checks send UNIMPLEMENTED through the
 * interceptors of an implemented method (an unknown method never reaches
 * them), so the code alone identifies them: see test/hostile/malformed-requests.test.ts.
 */
export const requestFramingInterceptor: ServerInterceptor = (method, call) => {
  return new ServerInterceptingCall(call, {
    sendStatus(status, next) {
      if (method.requestStream || status.code !== Status.UNIMPLEMENTED) return next(status);
      const replaced = toErrorStatus(
        invalidArgument(
          "request",
          "must be exactly one complete message: the call ended with none, or with more than one",
        ),
        () => undefined,
      );
      next({ code: replaced.code!, details: replaced.details!, metadata: replaced.metadata! });
    },
  });
};
