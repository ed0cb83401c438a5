// Brokers of one cluster starting at once with the same queue definitions
// (`serve --queues`): their applies race, creates meet QUEUE_ALREADY_EXISTS
// or queues owned by brokers still starting, and they converge on the file.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createQueueServiceRpc } from "../../src/client/rpc-client.js";
import type { HoldshelfServer } from "../../src/server/holdshelf-server.js";
import { parseQueueDefinitions } from "../../src/server/queue-definitions.js";
import { createLogger } from "../../src/logging/logger.js";
import { startClusterBroker } from "../support/cluster-brokers.js";
import { postgresForFile, skipWithoutPostgres } from "../support/postgres-server.js";

const postgres = postgresForFile();

/** Definitions of `count` work queues, each with its own dead-letter queue, spread over the shards by their names. */
function definitions(count: number, visibilitySeconds: number) {
  const queues = Array.from({ length: count }, (_, i) => [
    {
      name: `work-${i}`,
      config: {
        visibilityTimeout: `${visibilitySeconds}s`,
        redrivePolicy: { deadLetterQueue: `dlq-${i}`, maxReceiveCount: 2 },
      },
    },
    { name: `dlq-${i}`, config: { tags: { of: `work-${i}` } } },
  ]).flat();
  return parseQueueDefinitions(JSON.stringify({ version: 1, queues }), "queues.json");
}

describe.skipIf(skipWithoutPostgres)("serve --queues in cluster mode", () => {
  let url: string;
  const servers: HoldshelfServer[] = [];

  beforeEach(async () => {
    url = await postgres().createDatabase();
  });
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.shutdown().catch(() => undefined)));
  });

  async function configs(server: HoldshelfServer): Promise<Record<string, unknown>> {
    const rpc = createQueueServiceRpc(server.address);
    try {
      const { queues } = await rpc.listQueues({ pageSize: 1000 });
      return Object.fromEntries(queues.map((queue) => [queue.name, queue.config]));
    } finally {
      rpc.close();
    }
  }

  it("converges when several brokers apply the same file as they start together", async () => {
    const file = { source: "queues.json", definitions: definitions(6, 45) };
    // Each broker may first find a queue's owner still starting ("cannot apply the queues yet"), and tries again.
    const logs: string[] = [];
    const logger = createLogger({ write: (line) => void logs.push(line) });
    const started = await Promise.all(
      ["a", "b", "c"].map((nodeId) => startClusterBroker(url, nodeId, { queues: file, logger })),
    );
    servers.push(...started);
    expect(logs.filter((line) => line.includes('"msg":"queues applied"'))).toHaveLength(3);
    // Shards move as the brokers join: a listing during a move may miss a queue, so the views are read until they settle.
    const settled = { timeout: 15_000, interval: 200 };
    await vi.waitFor(async () => {
      const seen = await Promise.all(started.map(configs));
      expect(Object.keys(seen[0]!)).toHaveLength(12);
      for (const view of seen) expect(view).toEqual(seen[0]);
      expect(seen[0]!["work-3"]).toMatchObject({
        visibilityTimeout: { seconds: 45n },
        redrivePolicy: { deadLetterQueue: "dlq-3", maxReceiveCount: 2 },
      });
    }, settled);

    // A broker joining with a changed file updates the queues, wherever they are served.
    servers.push(
      await startClusterBroker(url, "d", { queues: { source: "queues.json", definitions: definitions(6, 50) } }),
    );
    await vi.waitFor(async () => {
      const after = await configs(started[0]!);
      for (let i = 0; i < 6; i++) expect(after[`work-${i}`]).toMatchObject({ visibilityTimeout: { seconds: 50n } });
    }, settled);
  });
});
