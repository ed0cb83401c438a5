// Internal metadata only from peers: a client that sets
// holdshelf-forwarded-from is served as a client, while the brokers of a
// cluster, which share the cluster's key, still prove themselves to each
// other and keep the one-hop rule.
import { InterceptingCall, type Interceptor, status } from "@grpc/grpc-js";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createQueueServiceRpc, type QueueServiceRpc } from "../../src/client/rpc-client.js";
import { forwardedFromKey, peerProofKey } from "../../src/protocol/routing-metadata.js";
import type { HoldshelfServer } from "../../src/server/holdshelf-server.js";
import { peerProof } from "../../src/security/peer-proof.js";
import { queueOn, startClusterBroker } from "../support/cluster-brokers.js";
import { expectRpcError } from "../support/expect-rpc-error.js";
import { postgresForFile, skipWithoutPostgres } from "../support/postgres-server.js";

const postgres = postgresForFile();

/** Sets holdshelf-forwarded-from, and the given peer proof if any, on every call. */
function posing(proof: string | undefined): Interceptor {
  return (options, nextCall) =>
    new InterceptingCall(nextCall(options), {
      start(metadata, listener, next) {
        metadata.set(forwardedFromKey, "not-a-broker");
        if (proof !== undefined) metadata.set(peerProofKey, proof);
        next(metadata, listener);
      },
    });
}

describe.skipIf(skipWithoutPostgres)("internal metadata on a cluster's brokers", () => {
  let a: HoldshelfServer;
  let b: HoldshelfServer;
  const clients: (QueueServiceRpc & { close(): void })[] = [];
  const onB = queueOn("b", ["a", "b"], "guarded");
  const onA = queueOn("a", ["a", "b"], "guarded");

  function clientOf(server: HoldshelfServer, interceptor: Interceptor): QueueServiceRpc {
    const client = createQueueServiceRpc(server.address, { channelOptions: { interceptors: [interceptor] } });
    clients.push(client);
    return client;
  }

  beforeEach(async () => {
    const url = await postgres().createDatabase();
    a = await startClusterBroker(url, "a");
    b = await startClusterBroker(url, "b");
    await vi.waitFor(() => expect(a.cluster!.route(onB)).toMatchObject({ kind: "remote", address: b.address }), {
      timeout: 10_000,
      interval: 50,
    });
    await vi.waitFor(() => expect(b.cluster!.route(onA)).toMatchObject({ kind: "remote", address: a.address }), {
      timeout: 10_000,
      interval: 50,
    });
  });
  afterEach(async () => {
    for (const client of clients.splice(0)) client.close();
    await Promise.all([a.shutdown(), b.shutdown()]);
  });

  it("drops holdshelf-forwarded-from from a client without the peer proof, and serves it through the owner", async () => {
    // Without the guard, a takes the call for one a broker passed on, and answers QUEUE_MOVING.
    const rpc = clientOf(a, posing(undefined));
    await rpc.createQueue({ name: onB });
    expect((await rpc.getQueue({ name: onB })).queue!.name).toBe(onB);
    const wrong = clientOf(a, posing(peerProof(Buffer.alloc(32, 1))));
    expect((await wrong.getQueue({ name: onB })).queue!.name).toBe(onB);
  });

  it("takes the brokers' shared proof from either broker: a call that says it was passed on is not passed on again", async () => {
    await clientOf(a, posing(undefined)).createQueue({ name: onA });
    // The proof made from a's copy of the cluster key is the one b accepts: they share it through PostgreSQL.
    const asPeer = clientOf(b, posing(peerProof(a.cluster!.sharedKey)));
    await expectRpcError(asPeer.getQueue({ name: onA }), status.UNAVAILABLE, "QUEUE_MOVING");
  });
});
