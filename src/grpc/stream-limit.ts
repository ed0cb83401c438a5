import { ServerInterceptingCall, type ServerInterceptor } from "@grpc/grpc-js";
import { HoldshelfError } from "../errors/holdshelf-error.js";
import { toErrorStatus } from "./error-status.js";

/**
 * Caps the calls (HTTP/2 streams) running at once on one connection. A call
 * past the cap ends at once with RESOURCE_EXHAUSTED, reason TOO_MANY_STREAMS,
 * before its handler runs; the others on the connection go on.
 *
 * A connection is named by its peer address ("ip:port"): grpc-js 1.14 shows
 * interceptors no session object, and a TCP connection's address pair is
 * unique while it is open. A port reused by a later connection starts at 0
 * again, because every call of the old one ended (counted down) when it closed.
 * Connections without a port (a Unix socket) share one count.
 */
export function createStreamLimit(maxPerConnection: number): ServerInterceptor {
  const active = new Map<string, number>();
  return (_method, call) => {
    const peer = call.getPeer();
    let admitted = false;
    let ended = false;
    // grpc-js reports the end of every call through onCancel (also after a
    // status is sent), once; sendStatus covers a handler that ends first.
    const end = (): void => {
      if (!admitted || ended) return;
      ended = true;
      const count = active.get(peer)! - 1;
      if (count === 0) active.delete(peer);
      else active.set(peer, count);
    };
    return new ServerInterceptingCall(call, {
      start(next) {
        next({
          onReceiveMetadata(metadata, nextMetadata) {
            const count = active.get(peer) ?? 0;
            if (count >= maxPerConnection) {
              const error = new HoldshelfError(
                "TOO_MANY_STREAMS",
                `this connection has ${count} calls open, the broker's limit per connection ` +
                  `(--max-streams-per-connection ${maxPerConnection}); end some, or spread them over more connections`,
              );
              // A HoldshelfError is never unexpected: nothing to log.
              call.sendStatus({ ...toErrorStatus(error, () => undefined), code: error.code, details: error.message });
              return;
            }
            admitted = true;
            active.set(peer, count + 1);
            nextMetadata(metadata);
          },
          onCancel: end,
        });
      },
      sendStatus(status, next) {
        end();
        next(status);
      },
    });
  };
}
