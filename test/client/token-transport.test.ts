// A bearer token is a secret: the client refuses to send it in plaintext
// beyond loopback unless told to, and sends it over TLS or to loopback.
import { credentials } from "@grpc/grpc-js";
import { describe, expect, it } from "vitest";
import { createQueueServiceRpc } from "../../src/client/rpc-client.js";

const token = `hs_${"x".repeat(43)}`;

describe("where a client sends its bearer token", () => {
  it.each(["10.1.2.3:50051", "broker.internal:50051", "[2001:db8::1]:50051"])(
    "refuses plaintext to %s, without quoting the token",
    (address) => {
      const attempt = () => createQueueServiceRpc(address, { token });
      expect(attempt).toThrow(/refusing to send a bearer token in plaintext/);
      expect(attempt).not.toThrow(new RegExp(token));
    },
  );

  it.each([
    ["plaintext to loopback", "127.0.0.1:50051", {}],
    ["plaintext to localhost", "localhost:50051", {}],
    ["TLS beyond loopback", "broker.internal:50051", { credentials: credentials.createSsl() }],
    ["plaintext beyond loopback when allowed", "10.1.2.3:50051", { allowPlaintextToken: true }],
  ])("sends it over %s", (_what, address, options) => {
    // Channels connect lazily: making the client dials nothing.
    const rpc = createQueueServiceRpc(address, { token, ...options });
    rpc.close();
  });

  it("sends no token, so needs no TLS, when it has none", () => {
    createQueueServiceRpc("10.1.2.3:50051").close();
  });
});
