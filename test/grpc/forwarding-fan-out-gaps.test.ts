// The fan-outs over a cluster whose members cannot all answer: a 0.1.0
// broker mid rolling upgrade lacks ListQueueActivity and the status RPCs
// (it answers UNIMPLEMENTED), and a member may be gone or refuse the token.
// ListQueueActivity then answers the activity of the brokers that could
// (the others' queues show no rates), and GetBrokerStatus lists each silent
// member with why.
import { create } from "@bufbuild/protobuf";
import { Metadata, Server, ServerCredentials, status, type sendUnaryData } from "@grpc/grpc-js";
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import {
  BrokerStatusSchema,
  GetBrokerStatusRequestSchema,
  GetBrokerStatusResponseSchema,
  GetClusterStatusResponseSchema,
} from "../../gen/holdshelf/v1/admin_service_pb.js";
import { fanOutAdminStatus } from "../../src/grpc/forwarding/admin-status-fan-out.js";
import { PeerClients } from "../../src/grpc/forwarding/peer-clients.js";
import { queueServiceDefinition } from "../../src/protocol/queue-service-definition.js";
import { adminServiceDefinition } from "../../src/grpc/admin-service.js";
import { AnswerTrailer } from "../../src/service/call-context.js";
import { deadPeer, describeForwarding, startBroker, type TestBroker } from "./forwarding-harness.js";

/** A gRPC server on loopback with the given methods, answering each with `code`; no methods answers UNIMPLEMENTED. */
async function standIn(
  methods: Record<string, { path: string }>,
  code: status = status.UNIMPLEMENTED,
): Promise<{ server: Server; address: string }> {
  const server = new Server();
  const names = Object.keys(methods);
  if (names.length > 0) {
    server.addService(
      Object.fromEntries(names.map((name) => [name, methods[name]])) as never,
      Object.fromEntries(
        names.map((name) => [
          name,
          (_call: unknown, callback: sendUnaryData<unknown>) => callback({ code, details: "no" }),
        ]),
      ),
    );
  }
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    ),
  );
  return { server, address: `127.0.0.1:${port}` };
}

describeForwarding("a fan-out over members that cannot all answer", () => {
  const servers: Server[] = [];
  let a: TestBroker;
  beforeEach(async () => {
    a = await startBroker("a");
  });
  afterEach(async () => {
    for (const server of servers.splice(0)) server.forceShutdown();
    await a.stop();
  });

  it("answers ListQueueActivity with what the others had when an owner lacks the method or is gone", async () => {
    const old = await standIn({});
    servers.push(old.server);
    const oldPeer = { nodeId: "old", address: old.address };
    a.router.others = [oldPeer, await deadPeer("gone")];
    a.router.send(oldPeer, "theirs");
    await a.rpc.createQueue({ name: "mine" });
    await vi.waitFor(
      async () => expect((await a.rpc.listQueueActivity({})).activity.map((entry) => entry.queue)).toEqual(["mine"]),
      { timeout: 15_000, interval: 200 },
    );
    const named = await a.rpc.listQueueActivity({ names: ["mine", "theirs"] });
    expect(named.activity.map((entry) => entry.queue)).toEqual(["mine"]);
  });

  it("keeps failing ListQueueActivity when an owner refuses the caller", async () => {
    const refusing = await standIn(
      { listQueueActivity: queueServiceDefinition["listQueueActivity"]! },
      status.PERMISSION_DENIED,
    );
    servers.push(refusing.server);
    a.router.others = [{ nodeId: "strict", address: refusing.address }];
    await expect(a.rpc.listQueueActivity({})).rejects.toMatchObject({ code: status.PERMISSION_DENIED });
  });

  it("lists each member GetBrokerStatus got no status from with why: unsupported, denied or unreachable", async () => {
    const old = await standIn({});
    const refusing = await standIn(
      { getBrokerStatus: adminServiceDefinition["getBrokerStatus"]! },
      status.UNAUTHENTICATED,
    );
    servers.push(old.server, refusing.server);
    const gone = await deadPeer("gone");
    const members = new Map([
      ["old", old.address],
      ["strict", refusing.address],
      ["gone", gone.address],
    ]);
    const peers = new PeerClients({ maxRequestBytes: 1 << 20 });
    const own = create(BrokerStatusSchema, { nodeId: "self", state: "serving" });
    const handlers = fanOutAdminStatus(
      {
        backup: () => {
          throw new Error("not asked");
        },
        getBrokerStatus: async () => create(GetBrokerStatusResponseSchema, { brokers: [own] }),
        getClusterStatus: async () => create(GetClusterStatusResponseSchema, { clustered: true }),
      },
      peers,
      { selfId: "self", members: () => members },
    );
    try {
      const answer = await handlers.getBrokerStatus(
        create(GetBrokerStatusRequestSchema),
        new AbortController().signal,
        { metadata: new Metadata(), deadline: Date.now() + 10_000, trailer: new AnswerTrailer() },
      );
      expect(answer.brokers.map(({ nodeId, state }) => [nodeId, state])).toEqual([
        ["self", "serving"],
        ["gone", "unreachable"],
        ["old", "unsupported"],
        ["strict", "denied"],
      ]);
    } finally {
      peers.close();
    }
  });
});
