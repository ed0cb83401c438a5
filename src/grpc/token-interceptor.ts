import { ServerInterceptingCall, type ServerInterceptor } from "@grpc/grpc-js";
import type { AuthGate } from "../auth/auth-gate.js";
import { HoldshelfError } from "../errors/holdshelf-error.js";
import { toErrorStatus } from "./error-status.js";

// Probes carry no token: health answers everyone, and says nothing about queues.
const openServicePrefix = "/grpc.health.v1.Health/";

/**
 * Refuses a call without a valid bearer token as soon as its metadata
 * arrives, before its request is read or decoded: a caller without a token
 * cannot make the broker parse megabytes. Every service but health; the
 * QueueService handlers then check the token's permissions.
 */
export function createTokenCheck(gate: AuthGate): ServerInterceptor {
  return (method, call) => {
    if (method.path.startsWith(openServicePrefix)) return new ServerInterceptingCall(call);
    return new ServerInterceptingCall(call, {
      start(next) {
        next({
          onReceiveMetadata(metadata, nextMetadata) {
            try {
              gate.authenticate(metadata);
            } catch (error) {
              if (!(error instanceof HoldshelfError)) throw error;
              call.sendStatus({ ...toErrorStatus(error, () => undefined), code: error.code, details: error.message });
              return;
            }
            nextMetadata(metadata);
          },
        });
      },
    });
  };
}
