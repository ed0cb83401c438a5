import { status } from "@grpc/grpc-js";
import { afterEach, describe, expect, it } from "vitest";
import { defaultLimits } from "../../src/server/server-limits.js";
import { expectRpcError } from "../support/expect-rpc-error.js";
import { startLimitsHarness, type LimitsHarness } from "./limits-harness.js";

const kib = 1024;

/** `count` entries of `bytes` each. */
function entries(count: number, bytes: number) {
  return Array.from({ length: count }, (_, index) => ({ body: Buffer.alloc(bytes, index) }));
}

describe("maximum request size", () => {
  let h: LimitsHarness;
  afterEach(() => h.stop());

  it("refuses a request over the limit with RESOURCE_EXHAUSTED and serves the connection and others normally", async () => {
    h = await startLimitsHarness({ maxRequestBytes: 256 * kib });
    const [big, other] = [h.connect(), h.connect()];
    await big.createQueue({ name: "q", config: { maxMessageBytes: 1024 * kib } });

    // grpc-js refuses it before the broker sees it: no ErrorInfo, so no reason.
    const error = await expectRpcError(
      big.sendBatch({ queue: "q", entries: entries(3, 100 * kib) }),
      status.RESOURCE_EXHAUSTED,
      "",
    );
    expect(error.message).toMatch(/larger than max/);
    await expectRpcError(big.send({ queue: "q", body: Buffer.alloc(300 * kib) }), status.RESOURCE_EXHAUSTED, "");

    // The same connection and another one go on; a request under the limit is served.
    await big.sendBatch({ queue: "q", entries: entries(2, 100 * kib) });
    await other.send({ queue: "q", body: Buffer.from("small") });
    const queue = await other.getQueue({ name: "q" });
    expect(queue.queue?.stats?.visible).toBe(3n);
  });

  it("by default takes the largest SendBatch, answers MESSAGE_TOO_LARGE below 8 MiB and RESOURCE_EXHAUSTED above", async () => {
    h = await startLimitsHarness({});
    expect(defaultLimits.maxRequestBytes).toBe(8 * 1024 * kib);
    const client = h.connect();
    await client.createQueue({ name: "q", config: { maxMessageBytes: 1024 * kib } });
    // 4 MiB of bodies in all: the most a SendBatch may carry.
    await client.sendBatch({ queue: "q", entries: entries(4, 1024 * kib - 64) });
    await expectRpcError(
      client.sendBatch({ queue: "q", entries: entries(5, 1000 * kib) }),
      status.INVALID_ARGUMENT,
      "MESSAGE_TOO_LARGE",
    );
    await expectRpcError(
      client.sendBatch({ queue: "q", entries: entries(9, 1000 * kib) }),
      status.RESOURCE_EXHAUSTED,
      "",
    );
    await client.send({ queue: "q", body: Buffer.from("after") });
    expect((await client.getQueue({ name: "q" })).queue?.stats?.visible).toBe(5n);
  });
});
