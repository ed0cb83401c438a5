import { InterceptingCall, type Interceptor } from "@grpc/grpc-js";

/**
 * A client interceptor that sends `authorization: Bearer <token>` on every
 * call, streams included. grpc-js refuses call credentials on a plaintext
 * channel (loopback without TLS), so the header goes in as call metadata.
 */
export function bearerTokenInterceptor(token: string): Interceptor {
  // Printable ASCII without spaces: what a header value can carry unchanged. Never quoted back: it is a secret.
  if (!/^[\x21-\x7e]+$/.test(token)) throw new TypeError("the token must be printable ASCII without spaces");
  const value = `Bearer ${token}`;
  return (options, nextCall) =>
    new InterceptingCall(nextCall(options), {
      start(metadata, listener, next) {
        metadata.set("authorization", value);
        next(metadata, listener);
      },
    });
}
