import { SQSClient } from "@aws-sdk/client-sqs";
import { createQueueServiceRpc, type QueueServiceRpc } from "../../src/client/rpc-client.js";
import type { Logger } from "../../src/logging/logger.js";
import { startHoldshelfServer, type HoldshelfServer, type SqsEndpoint } from "../../src/server/holdshelf-server.js";
import type { Clock } from "../../src/time/clock.js";
import { makeTempDir } from "../support/temp-dir.js";
import { settledRoutes, startClusterMember } from "../support/test-cluster.js";
import { freshClusterStorage, freshDatabase, inCluster, onPostgres } from "../support/test-storage.js";

/** The account id the harness's queue URLs carry. */
export const testAccountId = "000000000000";

/** A broker serving gRPC and the SQS endpoint on free loopback ports, with a client of each. */
export interface SqsHarness {
  server: HoldshelfServer;
  /** The SQS endpoint URL, e.g. http://127.0.0.1:40123. */
  readonly endpoint: string;
  /** An @aws-sdk/client-sqs client of the endpoint, with MD5 checks on (the SDK's default). */
  sqs: SQSClient;
  /** A gRPC client of the same broker. */
  rpc: QueueServiceRpc & { close(): void };
  /** The queue URL the endpoint gives a queue. */
  urlOf(queue: string): string;
  /** A new SDK client of the endpoint with these access keys. */
  client(credentials?: { accessKeyId: string; secretAccessKey: string }): SQSClient;
  /** Long-poll receives waiting now, at whichever broker owns their queue. */
  waitingReceives(): number;
  stop(): Promise<void>;
}

/** How a test wants its broker. */
export interface SqsHarnessOptions {
  readonly clock?: Clock;
  readonly logger?: Logger;
  /** The endpoint's settings beyond the listen address. */
  readonly sqs?: Partial<SqsEndpoint>;
  readonly authFile?: string;
}

/**
 * Starts an SqsHarness on a temporary data directory; in the vitest projects
 * that run on PostgreSQL (test-storage.ts), on a new database, and in the
 * cluster project on a cluster of three brokers whose SQS endpoint is on the
 * one that owns no shards, so every SQS call is forwarded to its queue's owner.
 */
export async function startSqsHarness(options: SqsHarnessOptions = {}): Promise<SqsHarness> {
  const dir = await makeTempDir();
  const shared = {
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    ...(options.logger === undefined ? {} : { logger: options.logger }),
    ...(options.authFile === undefined ? {} : { authFile: options.authFile }),
  };
  const sqs = { listen: "127.0.0.1:0", accountId: testAccountId, region: "us-east-1", ...options.sqs };
  let owners: HoldshelfServer[] = [];
  let server: HoldshelfServer;
  if (inCluster) {
    const url = await freshDatabase();
    owners = [await startClusterMember(url, "owner-1", shared), await startClusterMember(url, "owner-2", shared)];
    server = await startClusterMember(url, "entry", { routeOnly: true, sqs, ...shared });
    await settledRoutes(server, owners);
  } else {
    server = await startHoldshelfServer({
      dataDir: dir.path,
      listen: "127.0.0.1:0",
      sqs,
      ...(onPostgres ? { postgres: await freshClusterStorage() } : {}),
      ...shared,
    });
  }
  const endpoint = server.sqsUrl!;
  const clients: SQSClient[] = [];
  const client = (credentials = { accessKeyId: "test", secretAccessKey: "test" }): SQSClient => {
    // No retries: a test sees each answer as the endpoint gave it.
    const sqs = new SQSClient({ endpoint, region: "us-east-1", credentials, maxAttempts: 1 });
    clients.push(sqs);
    return sqs;
  };
  // The test's own gRPC client ignores owner hints, so in the cluster its calls are forwarded too.
  const rpc = createQueueServiceRpc(server.address, { followOwnerHints: false });
  return {
    server,
    endpoint,
    sqs: client(),
    rpc,
    urlOf: (queue) => `${endpoint}/${testAccountId}/${queue}`,
    client,
    waitingReceives: () => [server, ...owners].reduce((sum, broker) => sum + broker.broker.waitingReceiveCount, 0),
    async stop() {
      for (const sqs of clients) sqs.destroy();
      rpc.close();
      await server.shutdown();
      await Promise.all(owners.map((owner) => owner.shutdown()));
      await dir.remove();
    },
  };
}
