// Brokers for the forwarding tests: real LevelDB brokers on loopback, each
// given a FixedRouter that a test points queue names at other brokers with.
import { InterceptingCall, type Interceptor } from "@grpc/grpc-js";
import { describe } from "vitest";
import type { RenewalLinger } from "../../src/broker/renewal-linger.js";
import type { ClusterPeer, QueueRoute, QueueRouter } from "../../src/cluster/queue-router.js";
import { createQueueServiceRpc, type QueueServiceRpc } from "../../src/client/rpc-client.js";
import { RpcError } from "../../src/client/rpc-error.js";
import type { HoldshelfError } from "../../src/errors/holdshelf-error.js";
import { forwardedFromKey, ownerHintKey, peerProofKey } from "../../src/protocol/routing-metadata.js";
import { peerProof } from "../../src/security/peer-proof.js";
import { startHoldshelfServer, type HoldshelfServer } from "../../src/server/holdshelf-server.js";
import { freePort } from "../support/free-port.js";
import { makeTempDir } from "../support/temp-dir.js";
import { onPostgres } from "../support/test-storage.js";

const local: QueueRoute = { kind: "local" };

/** The key the test brokers share, as a cluster's brokers share theirs. */
export const testPeerKey = Buffer.alloc(32, 7);

/**
 * describe() for the forwarding suites, which run in the LevelDB run only:
 * forwarding is the same over any store, and the PostgreSQL and cluster runs
 * of test/grpc (vitest.config.ts) would start these brokers the same way
 * again. The cluster run drives the whole gRPC suite through forwarding on
 * real shard routers (test/support/test-cluster.ts).
 */
export const describeForwarding = describe.skipIf(onPostgres);

/** A QueueRouter a test sets by hand: queues it names go where it says, every other queue is local. */
export class FixedRouter implements QueueRouter {
  private readonly routes = new Map<string, QueueRoute>();
  /** What owners() answers. */
  others: ClusterPeer[] = [];

  constructor(readonly self: ClusterPeer) {}

  /** Routes these queues to `owner`. */
  send(owner: ClusterPeer, ...queues: string[]): void {
    for (const queue of queues) this.routes.set(queue, { kind: "remote", owner });
  }

  /** Says nobody serves this queue this moment: calls on it fail with `error`. */
  unavailable(queue: string, error: HoldshelfError): void {
    this.routes.set(queue, { kind: "unavailable", error });
  }

  route(queue: string): QueueRoute {
    return this.routes.get(queue) ?? local;
  }

  owners(): readonly ClusterPeer[] {
    return this.others;
  }
}

/** A client that remembers the owner hint of each call's answer. */
export interface HintingRpc {
  readonly rpc: QueueServiceRpc & { close(): void };
  /** The holdshelf-owner trailer of the last answer, OK or error; undefined if it had none. */
  lastHint(): string | undefined;
}

/** Options of a HintingRpc. */
export interface HintingRpcOptions {
  readonly token?: string;
  /** Sent as holdshelf-forwarded-from on every call: the client poses as a broker passing calls on. */
  readonly forwardedFrom?: string;
  /** With forwardedFrom: the peer proof to send beside it; the test brokers' own if unset, none if null. */
  readonly proof?: string | null;
}

/** A client of `address` whose answers' owner hints the test can read. */
export function hintingRpc(address: string, options: HintingRpcOptions = {}): HintingRpc {
  let hint: string | undefined;
  const capture: Interceptor = (callOptions, nextCall) =>
    new InterceptingCall(nextCall(callOptions), {
      start(metadata, _listener, next) {
        if (options.forwardedFrom !== undefined) {
          metadata.set(forwardedFromKey, options.forwardedFrom);
          const proof = options.proof === undefined ? peerProof(testPeerKey) : options.proof;
          if (proof !== null) metadata.set(peerProofKey, proof);
        }
        next(metadata, {
          onReceiveStatus(status, nextStatus) {
            hint = status.metadata.get(ownerHintKey)[0] as string | undefined;
            nextStatus(status);
          },
        });
      },
    });
  const rpc = createQueueServiceRpc(address, {
    channelOptions: { interceptors: [capture] },
    ...(options.token === undefined ? {} : { token: options.token }),
  });
  return { rpc, lastHint: () => hint };
}

/** An interceptor that sends holdshelf-forwarded-from and the test brokers' peer proof, as a broker passing a call on does. */
export function posingAsBroker(nodeId: string): Interceptor {
  return (callOptions, nextCall) =>
    new InterceptingCall(nextCall(callOptions), {
      start(metadata, listener, next) {
        metadata.set(forwardedFromKey, nodeId);
        metadata.set(peerProofKey, peerProof(testPeerKey));
        next(metadata, listener);
      },
    });
}

/** A broker of a test cluster. */
export interface TestBroker {
  readonly server: HoldshelfServer;
  /** As other brokers route to it: its node id and address. */
  readonly peer: ClusterPeer;
  readonly router: FixedRouter;
  /** A client of this broker. */
  readonly rpc: QueueServiceRpc & { close(): void };
  stop(): Promise<void>;
}

/** Options of startBroker. */
export interface TestBrokerOptions {
  readonly authFile?: string;
  readonly renewalLinger?: RenewalLinger;
}

/** Starts a broker whose router says every queue is its own until the test routes some elsewhere. */
export async function startBroker(nodeId: string, options: TestBrokerOptions = {}): Promise<TestBroker> {
  const dir = await makeTempDir();
  // Its address is in its router before it starts: the owner hint of the calls it serves.
  const address = `127.0.0.1:${await freePort()}`;
  const peer = { nodeId, address };
  const router = new FixedRouter(peer);
  const server = await startHoldshelfServer({
    dataDir: dir.path,
    listen: address,
    router,
    peerKey: testPeerKey,
    ...(options.authFile === undefined ? {} : { authFile: options.authFile }),
    ...(options.renewalLinger === undefined ? {} : { renewalLinger: options.renewalLinger }),
  });
  const rpc = createQueueServiceRpc(address, {});
  let stopped = false;
  return {
    server,
    peer,
    router,
    rpc,
    async stop() {
      if (stopped) return;
      stopped = true;
      rpc.close();
      await server.shutdown();
      await dir.remove();
    },
  };
}

/** An address where nothing listens: a broker that died. */
export async function deadPeer(nodeId: string): Promise<ClusterPeer> {
  return { nodeId, address: `127.0.0.1:${await freePort()}` };
}

/** How a call ended: its answer, or its error's code, reason, message and violations. */
export async function outcome(call: Promise<unknown>): Promise<unknown> {
  try {
    return { ok: await call };
  } catch (error) {
    if (!(error instanceof RpcError)) throw error;
    return { code: error.code, reason: error.reason, message: error.message, violations: error.violations };
  }
}
