// The console and AdminService on a real cluster over real PostgreSQL: a
// console on one broker shows the rates of a queue another broker serves
// (ListQueueActivity asks the owner), and a broker killed without a word
// shows as a takeover in GetClusterStatus, /api/cluster, the survivors' log
// and their takeover counter.
import { fromBinary, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import { Client, credentials, Metadata, status, type ServiceError } from "@grpc/grpc-js";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  AdminService,
  GetBrokerStatusResponseSchema,
  GetClusterStatusResponseSchema,
} from "../../gen/holdshelf/v1/admin_service_pb.js";
import { createQueueServiceRpc, type QueueServiceRpc } from "../../src/client/rpc-client.js";
import { createServiceDefinition } from "../../src/protocol/service-definition.js";
import type { HoldshelfServer } from "../../src/server/holdshelf-server.js";
import { ConsoleBrowser } from "../console/console-harness.js";
import { startBrokerProcess, type BrokerProcess } from "../support/broker-process.js";
import { queueOn, startClusterBroker } from "../support/cluster-brokers.js";
import { freePort } from "../support/free-port.js";
import { parseExposition, sampleValue } from "../support/prometheus-text.js";
import { postgresForFile, skipWithoutPostgres, startPostgres } from "../support/postgres-server.js";
import { makeTempDir } from "../support/temp-dir.js";

const postgres = postgresForFile();
const admin = createServiceDefinition(AdminService);

/** One AdminService unary call over gRPC (no token: the brokers here have no auth file). */
function callAdmin<O extends DescMessage>(
  address: string,
  method: "getBrokerStatus" | "getClusterStatus",
  output: O,
): Promise<MessageShape<O>> {
  const client = new Client(address, credentials.createInsecure());
  const { path } = admin[method]!;
  return new Promise<MessageShape<O>>((resolve, reject) => {
    client.makeUnaryRequest(
      path,
      (bytes: Uint8Array) => Buffer.from(bytes),
      (bytes: Buffer) => fromBinary(output, bytes),
      new Uint8Array(0),
      new Metadata(),
      {},
      (error: ServiceError | null, answer?: MessageShape<O>) => (error === null ? resolve(answer!) : reject(error)),
    );
  }).finally(() => client.close());
}

describe.skipIf(skipWithoutPostgres)("the console's activity and status across a cluster", () => {
  let url: string;
  const servers: HoldshelfServer[] = [];
  const clients: (QueueServiceRpc & { close(): void })[] = [];
  beforeEach(async () => {
    url = await postgres().createDatabase();
  });
  afterEach(async () => {
    for (const client of clients.splice(0)) client.close();
    await Promise.all(servers.splice(0).map((server) => server.shutdown().catch(() => undefined)));
  });

  it("shows on one broker's console the rates of a queue another broker serves, and who serves it", async () => {
    const history = { sampleIntervalMs: 300, samples: 60 };
    const a = await startClusterBroker(url, "a", { consoleListen: "127.0.0.1:0", consoleHistory: history });
    servers.push(a);
    const b = await startClusterBroker(url, "b", { consoleHistory: history });
    servers.push(b);
    await vi.waitFor(() => expect([a, b].map((s) => s.cluster!.ownedShardCount)).toEqual([4, 4]), {
      timeout: 10_000,
      interval: 50,
    });
    const onB = queueOn("b", ["a", "b"], "work");
    const rpc = createQueueServiceRpc(b.address);
    clients.push(rpc);
    await rpc.createQueue({ name: onB });
    const browser = new ConsoleBrowser(a.consoleUrl!);
    await browser.session();
    const rowOf = async () =>
      (await browser.api("GET", "/api/queues")).body.queues.find((row: { name: string }) => row.name === onB);
    await vi.waitFor(async () => expect((await rowOf()).rates.t.length).toBeGreaterThan(0), {
      timeout: 10_000,
      interval: 50,
    });
    for (let i = 0; i < 5; i++) await rpc.send({ queue: onB, body: Buffer.from(`m${i}`) });
    await vi.waitFor(
      async () => {
        const row = await rowOf();
        expect((row.averageRates.sent * row.rateWindowMs) / 1000).toBeCloseTo(5, 6);
      },
      { timeout: 10_000, interval: 100 },
    );
    const detail = (await browser.api("GET", `/api/queues/${onB}`)).body;
    expect(detail.servedBy).toEqual({ nodeId: "b", address: b.address });
    expect(detail.history.sent.some((value: number) => value > 0)).toBe(true);
    const status = (await browser.api("GET", "/api/cluster")).body;
    expect(status).toMatchObject({ clustered: true, thisNode: "a" });
    expect(status.members.map((member: { nodeId: string }) => member.nodeId).sort()).toEqual(["a", "b"]);
    expect(status.shards).toHaveLength(8);
    // a claimed every shard alone, then handed b its share, which b claimed as free shards.
    const eventsOf = (kind: string, nodeId: string) =>
      status.events.filter((event: { kind: string; nodeId: string }) => event.kind === kind && event.nodeId === nodeId);
    expect(eventsOf("claimed", "a").length).toBe(8);
    expect(eventsOf("released", "a")).toHaveLength(4);
    for (const event of eventsOf("released", "a")) expect(event).toMatchObject({ peer: "b", reason: "handover" });
    expect(eventsOf("claimed", "b")).toHaveLength(4);
    for (const event of eventsOf("claimed", "b")) expect(event).toMatchObject({ peer: null, reason: "balance" });
    const overview = (await browser.api("GET", "/api/overview")).body;
    expect(overview.brokers.map((broker: { nodeId: string }) => broker.nodeId)).toEqual(["a", "b"]);
    expect(overview.brokers.every((broker: { storage: string }) => broker.storage === "postgres")).toBe(true);
  });

  it("answers GetClusterStatus STORAGE_UNAVAILABLE, not INTERNAL, while PostgreSQL is down", async () => {
    const own = await startPostgres();
    try {
      const a = await startClusterBroker(await own.createDatabase(), "a");
      servers.push(a);
      await vi.waitFor(() => expect(a.cluster!.ownedShardCount).toBe(8), { timeout: 10_000, interval: 50 });
      await own.kill();
      const refused = await callAdmin(a.address, "getClusterStatus", GetClusterStatusResponseSchema).then(
        () => undefined,
        (error: ServiceError) => error,
      );
      expect(refused?.code).toBe(status.UNAVAILABLE);
      expect(refused?.details).toMatch(/^storage read failed \(PostgreSQL .*\); the broker is recovering/);
    } finally {
      await own.stop();
    }
  });

  it("counts a message dead-lettered into another broker's queue as an arrival there", async () => {
    const history = { sampleIntervalMs: 300, samples: 60 };
    const a = await startClusterBroker(url, "a", { consoleListen: "127.0.0.1:0", consoleHistory: history });
    servers.push(a);
    const b = await startClusterBroker(url, "b", { consoleHistory: history });
    servers.push(b);
    await vi.waitFor(() => expect([a, b].map((s) => s.cluster!.ownedShardCount)).toEqual([4, 4]), {
      timeout: 10_000,
      interval: 50,
    });
    const source = queueOn("a", ["a", "b"], "jobs");
    const dlq = queueOn("b", ["a", "b"], "dlq");
    const rpc = createQueueServiceRpc(a.address);
    const onB = createQueueServiceRpc(b.address);
    clients.push(rpc, onB);
    await onB.createQueue({ name: dlq });
    await rpc.createQueue({ name: source, config: { redrivePolicy: { deadLetterQueue: dlq, maxReceiveCount: 1 } } });
    const browser = new ConsoleBrowser(a.consoleUrl!);
    await browser.session();
    const rowOf = async (name: string) =>
      (await browser.api("GET", "/api/queues")).body.queues.find((row: { name: string }) => row.name === name);
    await vi.waitFor(
      async () => {
        for (const name of [source, dlq]) expect((await rowOf(name)).rates.t.length, name).toBeGreaterThan(0);
      },
      { timeout: 10_000, interval: 50 },
    );
    await rpc.send({ queue: source, body: Buffer.from("poison") });
    const [message] = (await rpc.receive({ queue: source, maxMessages: 1 })).messages;
    await rpc.changeVisibility({
      queue: source,
      receiptHandle: message!.receiptHandle,
      visibilityTimeout: { seconds: 0n, nanos: 0 },
    });
    const events = async (name: string, rate: string) => {
      const row = await rowOf(name);
      return (row.averageRates[rate] * row.rateWindowMs) / 1000;
    };
    await vi.waitFor(
      async () => {
        await rpc.receive({ queue: source, maxMessages: 1 });
        expect(await events(dlq, "arrived")).toBeCloseTo(1, 6);
        // Each broker counts at its own next sample.
        expect(await events(source, "deadLettered")).toBeCloseTo(1, 6);
      },
      { timeout: 10_000, interval: 200 },
    );
    expect(await events(dlq, "sent")).toBe(0);
  });
});

describe.skipIf(skipWithoutPostgres)("a takeover across a cluster of three broker processes", () => {
  let dir: Awaited<ReturnType<typeof makeTempDir>>;
  const brokers: BrokerProcess[] = [];
  beforeEach(async () => {
    dir = await makeTempDir();
  });
  afterEach(async () => {
    for (const broker of brokers.splice(0)) if (broker.child.exitCode === null) broker.child.kill("SIGKILL");
    await dir.remove();
  });

  it("records, logs and counts the shards the survivors claimed from a killed broker", async () => {
    const url = await postgres().createDatabase();
    const consolePort = await freePort();
    for (const nodeId of ["a", "b", "c"]) {
      const args = ["--postgres", url, "--node-id", nodeId, "--shard-lease-ttl", "2s"];
      if (nodeId === "a") args.push("--console-listen", `127.0.0.1:${consolePort}`);
      brokers.push(await startBrokerProcess(dir.path, args));
    }
    const [a, b, c] = brokers as [BrokerProcess, BrokerProcess, BrokerProcess];
    const membersOf = async () =>
      (await callAdmin(a.address, "getClusterStatus", GetClusterStatusResponseSchema)).members;
    await vi.waitFor(
      async () => {
        const members = await membersOf();
        expect(members.filter((member) => member.live)).toHaveLength(3);
        for (const member of members) expect(member.shards, member.nodeId).toBeGreaterThan(0);
      },
      { timeout: 20_000, interval: 200 },
    );
    const held = (await membersOf()).find((member) => member.nodeId === "c")?.shards ?? 0;
    c.child.kill("SIGKILL");
    const takeovers = async () =>
      (await callAdmin(a.address, "getClusterStatus", GetClusterStatusResponseSchema)).events.filter(
        (event) => event.kind === "claimed" && event.reason === "takeover" && event.peer === "c",
      );
    await vi.waitFor(async () => expect((await takeovers()).length).toBeGreaterThan(0), {
      timeout: 20_000,
      interval: 200,
    });
    // Every shard c held was claimed by a or b, each recorded once.
    await vi.waitFor(async () => expect((await takeovers()).length).toBe(held), { timeout: 20_000, interval: 200 });
    const claimers = new Set((await takeovers()).map((event) => event.nodeId));
    // The console shows the same events.
    const browser = new ConsoleBrowser(`http://127.0.0.1:${consolePort}/`);
    await browser.session();
    const cluster = (await browser.api("GET", "/api/cluster")).body;
    const live = cluster.members.filter((member: { live: boolean }) => member.live);
    expect(live.map((member: { nodeId: string }) => member.nodeId).sort()).toEqual(["a", "b"]);
    expect(
      cluster.events.filter(
        (event: { kind: string; reason: string; peer: string }) =>
          event.kind === "claimed" && event.reason === "takeover" && event.peer === "c",
      ),
    ).toHaveLength(held);
    // Each claimer logged its takeover and counted the shards.
    let counted = 0;
    for (const [nodeId, broker] of [
      ["a", a],
      ["b", b],
    ] as const) {
      const metrics = parseExposition(await (await fetch(`http://${broker.metricsAddress}/metrics`)).text());
      const value = sampleValue(metrics, "holdshelf_cluster_shard_takeovers_total") ?? 0;
      counted += value;
      if (claimers.has(nodeId)) {
        expect(value).toBeGreaterThan(0);
        expect(broker.logs()).toMatch(/"msg":"shards claimed".*"peer":"c","reason":"takeover"/);
      }
    }
    expect(counted).toBe(held);
    // Both survivors answer GetBrokerStatus; the dead one is not a member any more.
    const status = await callAdmin(a.address, "getBrokerStatus", GetBrokerStatusResponseSchema);
    expect(status.brokers.map((broker) => [broker.nodeId, broker.state])).toEqual([
      ["a", "serving"],
      ["b", "serving"],
    ]);
  });
});
