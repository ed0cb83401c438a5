// ListQueueActivity and AdminService's status RPCs over gRPC against a real
// broker with an auth file: each answers only what the caller's token may
// see, and refuses requests out of bounds with a stable reason and field.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fromBinary, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import { Client, credentials, Metadata, status, type ServiceError } from "@grpc/grpc-js";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  AdminService,
  GetBrokerStatusResponseSchema,
  GetClusterStatusResponseSchema,
} from "../../gen/holdshelf/v1/admin_service_pb.js";
import { createQueueServiceRpc, type QueueServiceRpc } from "../../src/client/rpc-client.js";
import { encodePageToken } from "../../src/protocol/queue-pages.js";
import { createServiceDefinition } from "../../src/protocol/service-definition.js";
import { startHoldshelfServer, type HoldshelfServer } from "../../src/server/holdshelf-server.js";
import { authFileText, makeToken, type TestToken } from "../security/auth-harness.js";
import { expectRpcError } from "../support/expect-rpc-error.js";
import { makeTempDir } from "../support/temp-dir.js";

const admin = createServiceDefinition(AdminService);

function callAdmin<O extends DescMessage>(
  address: string,
  token: string,
  method: "getBrokerStatus" | "getClusterStatus",
  output: O,
): Promise<MessageShape<O>> {
  const client = new Client(address, credentials.createInsecure());
  const metadata = new Metadata();
  metadata.set("authorization", `Bearer ${token}`);
  return new Promise<MessageShape<O>>((resolve, reject) => {
    client.makeUnaryRequest(
      admin[method]!.path,
      (bytes: Uint8Array) => Buffer.from(bytes),
      (bytes: Buffer) => fromBinary(output, bytes),
      new Uint8Array(0),
      metadata,
      {},
      (error: ServiceError | null, answer?: MessageShape<O>) => (error === null ? resolve(answer!) : reject(error)),
    );
  }).finally(() => client.close());
}

describe("ListQueueActivity and the status RPCs", () => {
  let server: HoldshelfServer;
  let dir: Awaited<ReturnType<typeof makeTempDir>>;
  let ops: TestToken;
  let sender: TestToken;
  const clients: (QueueServiceRpc & { close(): void })[] = [];
  const rpc = (token: string): QueueServiceRpc => {
    const client = createQueueServiceRpc(server.address, { token });
    clients.push(client);
    return client;
  };

  beforeEach(async () => {
    dir = await makeTempDir();
    ops = makeToken("ops", { queues: "*", allow: ["admin", "send", "receive"] });
    sender = makeToken("orders-sender", { queues: "orders-*", allow: ["send"] });
    const authFile = join(dir.path, "auth.json");
    await writeFile(authFile, authFileText([ops, sender]));
    server = await startHoldshelfServer({
      dataDir: join(dir.path, "data"),
      listen: "127.0.0.1:0",
      authFile,
      consoleHistory: { sampleIntervalMs: 200, samples: 60 },
    });
    for (const name of ["orders-1", "orders-2", "billing"]) await rpc(ops.token).createQueue({ name });
  });
  afterEach(async () => {
    for (const client of clients.splice(0)) client.close();
    await server.shutdown();
    await dir.remove();
  });

  it("answers the sampled queues the token may see, by name, a page at a time", async () => {
    await vi.waitFor(
      async () => expect((await rpc(ops.token).listQueueActivity({})).activity.map((a) => a.queue)).toHaveLength(3),
      { timeout: 10_000, interval: 50 },
    );
    const all = await rpc(ops.token).listQueueActivity({ maxSamples: 2 });
    expect(all.activity.map((activity) => activity.queue)).toEqual(["billing", "orders-1", "orders-2"]);
    for (const activity of all.activity) {
      expect(activity.sampleTimeMs.length).toBeLessThanOrEqual(2);
      expect(activity.sentPerSecond).toHaveLength(activity.sampleTimeMs.length);
      expect(activity.arrivedPerSecond).toHaveLength(activity.sampleTimeMs.length);
      expect(activity.sampleInterval?.nanos).toBe(200_000_000);
      expect(activity.nodeId).toBe("");
    }
    // Only the sender's queues, whatever it names.
    const own = await rpc(sender.token).listQueueActivity({});
    expect(own.activity.map((activity) => activity.queue)).toEqual(["orders-1", "orders-2"]);
    const named = await rpc(sender.token).listQueueActivity({ names: ["billing", "orders-2"] });
    expect(named.activity.map((activity) => activity.queue)).toEqual(["orders-2"]);
    const first = await rpc(ops.token).listQueueActivity({ pageSize: 2 });
    expect(first.activity.map((activity) => activity.queue)).toEqual(["billing", "orders-1"]);
    const rest = await rpc(ops.token).listQueueActivity({ pageSize: 2, pageToken: first.nextPageToken });
    expect(rest).toMatchObject({ activity: [expect.objectContaining({ queue: "orders-2" })], nextPageToken: "" });
    expect(first.nextPageToken).toBe(encodePageToken("orders-1"));
  });

  it("refuses a page size, sample count, name list or page token out of bounds, naming the field", async () => {
    const client = rpc(ops.token);
    const invalid = status.INVALID_ARGUMENT;
    await expectRpcError(client.listQueueActivity({ pageSize: 1001 }), invalid, "INVALID_ARGUMENT", "page_size");
    await expectRpcError(client.listQueueActivity({ maxSamples: -1 }), invalid, "INVALID_ARGUMENT", "max_samples");
    const names = Array.from({ length: 101 }, (_, i) => `q${i}`);
    await expectRpcError(client.listQueueActivity({ names }), invalid, "INVALID_ARGUMENT", "names");
    await expectRpcError(client.listQueueActivity({ pageToken: "x" }), invalid, "INVALID_ARGUMENT", "page_token");
  });

  it("gives the broker's and the cluster's status to admin on every queue only", async () => {
    const brokers = await callAdmin(server.address, ops.token, "getBrokerStatus", GetBrokerStatusResponseSchema);
    expect(brokers.brokers).toHaveLength(1);
    expect(brokers.brokers[0]).toMatchObject({ nodeId: "", storage: "leveldb", state: "serving" });
    expect(brokers.brokers[0]!.budgets.map((budget) => budget.name)).toEqual([
      "max-stored-messages",
      "max-queues",
      "max-deduplication-ids",
      "max-waiting-receives",
    ]);
    const cluster = await callAdmin(server.address, ops.token, "getClusterStatus", GetClusterStatusResponseSchema);
    expect(cluster.clustered).toBe(false);
    for (const method of ["getBrokerStatus", "getClusterStatus"] as const) {
      const refused = await callAdmin(server.address, sender.token, method, GetBrokerStatusResponseSchema).then(
        () => undefined,
        (error: ServiceError) => error,
      );
      expect(refused?.code, method).toBe(status.PERMISSION_DENIED);
    }
  });
});
