import { once } from "node:events";
import { join } from "node:path";
import { status } from "@grpc/grpc-js";
import { afterEach, describe, expect, it } from "vitest";
import { createQueueServiceRpc } from "../../src/client/rpc-client.js";
import { UsageError } from "../../src/cli/usage-error.js";
import { limitFlagOptions, parseLimitFlags } from "../../src/cli/limit-flags.js";
import { startHoldshelfServer } from "../../src/server/holdshelf-server.js";
import { defaultLimits } from "../../src/server/server-limits.js";
import { runHoldshelf, startBrokerProcess, type BrokerProcess } from "../support/broker-process.js";
import { expectRpcError } from "../support/expect-rpc-error.js";
import { openSubscribeStream, probeSubscribeStream } from "../support/subscribe-stream.js";
import { makeTempDir } from "../support/temp-dir.js";

describe("limit flags", () => {
  it("take the defaults when unset, and parse flags and KiB/MiB sizes", () => {
    expect(parseLimitFlags({})).toEqual(defaultLimits);
    expect(
      parseLimitFlags({
        "max-request-bytes": "16MiB",
        "max-streams-per-connection": "50",
        "max-waiting-receives": "7",
        "max-subscribers-per-queue": "4",
        "max-queues": "3",
        "max-stored-messages": "1000000",
        "max-deduplication-ids": "250000",
      }),
    ).toEqual({
      maxRequestBytes: 16 * 2 ** 20,
      maxStreamsPerConnection: 50,
      maxWaitingReceives: 7,
      maxSubscribersPerQueue: 4,
      maxQueues: 3,
      maxStoredMessages: 1_000_000,
      maxDeduplicationIds: 250_000,
    });
    expect(parseLimitFlags({ "max-request-bytes": "2048KiB" }).maxRequestBytes).toBe(2 * 2 ** 20);
  });

  it("default to their HOLDSHELF_* environment variables", () => {
    const options = limitFlagOptions({
      HOLDSHELF_MAX_QUEUES: "12",
      HOLDSHELF_MAX_STORED_MESSAGES: "99",
      HOLDSHELF_MAX_SUBSCRIBERS_PER_QUEUE: "4",
    });
    expect(options["max-queues"]).toEqual({ type: "string", default: "12" });
    expect(options["max-subscribers-per-queue"]).toEqual({ type: "string", default: "4" });
    expect(options["max-stored-messages"]).toEqual({ type: "string", default: "99" });
    expect(options["max-waiting-receives"]).toEqual({ type: "string" });
  });

  it.each([
    ["max-queues", "0"],
    ["max-queues", "-5"],
    ["max-queues", "1.5"],
    ["max-queues", "lots"],
    ["max-queues", "10KiB"],
    ["max-waiting-receives", ""],
    ["max-streams-per-connection", "1000001"],
    ["max-stored-messages", "1e6"],
    ["max-deduplication-ids", "0"],
    ["max-subscribers-per-queue", "0"],
    ["max-subscribers-per-queue", "1000001"],
    ["max-subscribers-per-queue", "2KiB"],
    ["max-request-bytes", "1000"],
    ["max-request-bytes", "1GiB"],
    ["max-request-bytes", "300MiB"],
  ])("refuse --%s %j with a message naming the flag and its range", (flag, value) => {
    expect(() => parseLimitFlags({ [flag]: value })).toThrow(UsageError);
    expect(() => parseLimitFlags({ [flag]: value })).toThrow(
      new RegExp(`^--${flag} \\(HOLDSHELF_[A-Z_]+\\) is a whole number from \\d+ to \\d+`),
    );
  });

  it("are checked by the server too: a limit that is not a positive integer is refused before anything opens", async () => {
    const dir = await makeTempDir();
    try {
      for (const limits of [
        { maxQueues: 0 },
        { maxStoredMessages: 1.5 },
        { maxRequestBytes: Number.NaN },
        { maxSubscribersPerQueue: -1 },
      ]) {
        await expect(startHoldshelfServer({ dataDir: dir.path, listen: "127.0.0.1:0", limits })).rejects.toThrow(
          /^limits\.max\w+ must be a positive integer/,
        );
      }
      // Nothing was left holding the data directory: a broker starts on it.
      const server = await startHoldshelfServer({ dataDir: dir.path, listen: "127.0.0.1:0", limits: { maxQueues: 1 } });
      await server.shutdown();
    } finally {
      await dir.remove();
    }
  });

  describe("on the command", () => {
    let dir: { path: string; remove(): Promise<void> } | undefined;
    let broker: BrokerProcess | undefined;
    afterEach(async () => {
      if (broker && broker.child.exitCode === null) {
        broker.child.kill("SIGKILL");
        await once(broker.child, "exit");
      }
      broker = undefined;
      await dir?.remove();
    });

    it("refuses a bad value, by flag or environment, with usage (exit 2), and applies a good one", async () => {
      dir = await makeTempDir();
      const bad = await runHoldshelf(["serve", "--data-dir", join(dir.path, "data"), "--max-queues", "0"]);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain("--max-queues (HOLDSHELF_MAX_QUEUES) is a whole number from 1 to");
      const badEnv = await runHoldshelf(["serve", "--data-dir", join(dir.path, "data")], {
        HOLDSHELF_MAX_STORED_MESSAGES: "none",
      });
      expect(badEnv.code).toBe(2);
      expect(badEnv.stderr).toContain("--max-stored-messages (HOLDSHELF_MAX_STORED_MESSAGES)");

      broker = await startBrokerProcess(join(dir.path, "data"), ["--max-queues", "2"]);
      expect(broker.logs()).toContain('"maxQueues":2');
      const rpc = createQueueServiceRpc(broker.address);
      try {
        await rpc.createQueue({ name: "a" });
        await rpc.createQueue({ name: "b" });
        await expectRpcError(rpc.createQueue({ name: "c" }), status.RESOURCE_EXHAUSTED, "TOO_MANY_QUEUES");
      } finally {
        rpc.close();
      }
    });

    it("applies --max-subscribers-per-queue, and HOLDSHELF_MAX_SUBSCRIBERS_PER_QUEUE when the flag is unset", async () => {
      dir = await makeTempDir();
      const bad = await runHoldshelf(["serve", "--data-dir", join(dir.path, "data")], {
        HOLDSHELF_MAX_SUBSCRIBERS_PER_QUEUE: "0",
      });
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain("--max-subscribers-per-queue (HOLDSHELF_MAX_SUBSCRIBERS_PER_QUEUE)");

      broker = await startBrokerProcess(join(dir.path, "data"), ["--max-subscribers-per-queue", "1"]);
      expect(broker.logs()).toContain('"maxSubscribersPerQueue":1');
      const rpc = createQueueServiceRpc(broker.address);
      const streams = [openSubscribeStream(broker.address), openSubscribeStream(broker.address)];
      try {
        await rpc.createQueue({ name: "a" });
        streams[0]!.send({ queue: "a" });
        await probeSubscribeStream(streams[0]!);
        streams[1]!.send({ queue: "a" });
        expect((await streams[1]!.closed)?.reason).toBe("TOO_MANY_SUBSCRIBERS");
      } finally {
        for (const stream of streams) stream.close();
        rpc.close();
      }
    });
  });
});
