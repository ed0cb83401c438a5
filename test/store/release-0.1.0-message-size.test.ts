// Queues release 0.1.0 created without max_message_bytes (test/fixtures/
// release-0.1.0, made by its own code) keep 0.1.0's default, 262144, under
// today's default of 1048576: the stored configuration is not changed, and
// the calls that give a whole configuration leaving it unset (CreateQueue of
// the queue again, UpdateQueue without update_mask, `queue apply` of a file)
// keep it too. Only new queues, or a request that names the field, get 1 MiB.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createQueueServiceRpc, type QueueServiceRpc } from "../../src/client/rpc-client.js";
import { rpcQueueAdmin } from "../../src/cli/rpc-queue-admin.js";
import { applyQueues } from "../../src/server/apply-queues.js";
import { startHoldshelfServer, type HoldshelfServer } from "../../src/server/holdshelf-server.js";
import { parseQueueDefinitions } from "../../src/server/queue-definitions.js";
import { unpackDataDir } from "../support/release-0.1.0.js";
import { makeTempDir } from "../support/temp-dir.js";

const earlierDefault = 262_144;
const mib = 1_048_576;

describe("max_message_bytes of queues release 0.1.0 created without it", () => {
  let dir: Awaited<ReturnType<typeof makeTempDir>>;
  let server: HoldshelfServer;
  let rpc: QueueServiceRpc & { close(): void };
  beforeEach(async () => {
    dir = await makeTempDir();
    server = await startHoldshelfServer({ dataDir: await unpackDataDir(dir.path), listen: "127.0.0.1:0" });
    rpc = createQueueServiceRpc(server.address);
  });
  afterEach(async () => {
    rpc.close();
    await server.shutdown();
    await dir.remove();
  });

  const sizeOf = async (name: string) => (await rpc.getQueue({ name })).queue!.config!.maxMessageBytes;

  it("stays 262144, and CreateQueue of the queue again as 0.1.0's client created it still succeeds", async () => {
    expect(await sizeOf("orders-dlq")).toBe(earlierDefault);
    const { queue } = await rpc.createQueue({ name: "orders-dlq", config: { tags: { team: "payments" } } });
    expect(queue!.config!.maxMessageBytes).toBe(earlierDefault);
    // Another setting still conflicts, as before.
    await expect(rpc.createQueue({ name: "orders-dlq", config: { maxInFlight: 7 } })).rejects.toMatchObject({
      reason: "QUEUE_ALREADY_EXISTS",
    });
    // A request that names a size compares it.
    await expect(rpc.createQueue({ name: "orders-dlq", config: { maxMessageBytes: mib } })).rejects.toMatchObject({
      reason: "QUEUE_ALREADY_EXISTS",
    });
    expect((await rpc.createQueue({ name: "new" })).queue!.config!.maxMessageBytes).toBe(mib);
  });

  it("stays 262144 through an UpdateQueue without update_mask that leaves it unset, and changes when named", async () => {
    await rpc.updateQueue({ name: "orders-dlq", config: { maxInFlight: 7 } });
    expect((await rpc.getQueue({ name: "orders-dlq" })).queue!.config).toMatchObject({
      maxInFlight: 7,
      maxMessageBytes: earlierDefault,
    });
    // Named in the update mask without a value: back to the default of today.
    await rpc.updateQueue({ name: "orders-dlq", config: {}, updateMask: { paths: ["max_message_bytes"] } });
    expect(await sizeOf("orders-dlq")).toBe(mib);
  });

  it("stays 262144 when `queue apply` applies a file that leaves it unset; a new queue of the file gets 1 MiB", async () => {
    const file = JSON.stringify({
      version: 1,
      queues: [
        { name: "orders-dlq", config: { tags: { team: "payments" } } },
        { name: "fresh", config: {} },
      ],
    });
    const outcome = await applyQueues(rpcQueueAdmin(rpc), parseQueueDefinitions(file, "queues.json"), {
      dryRun: false,
      deleteMissing: false,
      prefix: "",
    });
    expect(outcome.changes.map((change) => [change.action, change.queue])).toEqual([["create", "fresh"]]);
    expect(outcome.unchanged).toEqual(["orders-dlq"]);
    expect(await sizeOf("orders-dlq")).toBe(earlierDefault);
    expect(await sizeOf("fresh")).toBe(mib);
  });
});
