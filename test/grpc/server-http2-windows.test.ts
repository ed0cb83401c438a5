import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { Server } from "@grpc/grpc-js";
import { createQueueServiceRpc } from "../../src/client/rpc-client.js";
import { raiseReceiveWindows } from "../../src/grpc/http2-windows.js";
import { receiveWindowBytes } from "../../src/net/http2-receive-window.js";
import { startGrpcHarness, type GrpcHarness } from "../support/grpc-harness.js";

// HTTP/2's own default window: what both sides would grant without holdshelf's settings.
const defaultWindowBytes = 65_535;

describe("HTTP/2 receive windows", () => {
  let harness: GrpcHarness | undefined;
  afterEach(async () => {
    await harness?.stop();
    harness = undefined;
  });

  it("the broker grants each stream and its connection 4 MiB, as a plain HTTP/2 client sees", async () => {
    harness = await startGrpcHarness();
    const session = http2.connect(`http://${harness.server.address}`);
    try {
      const settings = await new Promise<http2.Settings>((resolve, reject) => {
        session.once("remoteSettings", resolve);
        session.once("error", reject);
      });
      expect(receiveWindowBytes).toBeGreaterThan(defaultWindowBytes);
      expect(settings.initialWindowSize).toBe(receiveWindowBytes);
      // The connection's window comes as a WINDOW_UPDATE after the settings.
      await until(() => session.state.remoteWindowSize === receiveWindowBytes);
      expect(session.state.remoteWindowSize).toBe(receiveWindowBytes);
    } finally {
      session.destroy();
    }
  });

  it("the broker still answers over the raised windows: a 3 MiB SendBatch and its Receive", async () => {
    harness = await startGrpcHarness({ durability: "os" });
    await harness.rpc.createQueue({ name: "big" });
    const bodies = Array.from({ length: 30 }, (_, index) => Buffer.alloc(100 * 1024, index));
    await harness.rpc.sendBatch({ queue: "big", entries: bodies.map((body) => ({ body })) });
    const { messages } = await harness.rpc.receive({ queue: "big", maxMessages: 30 });
    expect(messages.map((message) => Buffer.from(message.body).readUInt8(0)).sort((a, b) => a - b)).toEqual(
      bodies.map((_, index) => index),
    );
  });

  it("refuses loudly, naming the file to fix, a grpc-js whose listeners it cannot reach", () => {
    // As a grpc-js that renamed its private map would look.
    expect(() => raiseReceiveWindows({} as Server)).toThrow(
      /no longer keeps its HTTP\/2 listeners in `http2Servers`: see src\/grpc\/http2-windows.ts/,
    );
  });

  it("holdshelf's client asks for a 4 MiB stream window, as a plain HTTP/2 server sees", async () => {
    const server = http2.createServer();
    // It speaks no gRPC: every call is cut short, so the client's fails at once.
    server.on("stream", (stream) => stream.close(http2.constants.NGHTTP2_CANCEL));
    const clientSettings = new Promise<http2.Settings>((resolve) =>
      server.once("session", (session) => session.once("remoteSettings", resolve)),
    );
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const rpc = createQueueServiceRpc(`127.0.0.1:${(server.address() as AddressInfo).port}`);
    try {
      // The call fails; connecting is what matters.
      const call = rpc.getQueue({ name: "any" }).catch(() => undefined);
      expect((await clientSettings).initialWindowSize).toBe(receiveWindowBytes);
      await call;
    } finally {
      rpc.close();
      server.close();
    }
  });
});

/** Polls a condition on real time (a socket's frames), for at most 2 s. */
async function until(condition: () => boolean): Promise<void> {
  for (const start = Date.now(); !condition() && Date.now() - start < 2_000; )
    await new Promise((resolve) => setTimeout(resolve, 5));
}
