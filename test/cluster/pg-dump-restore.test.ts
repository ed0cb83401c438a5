// Cluster mode's backup is PostgreSQL's (docs/operations.md#backup): a
// pg_dump of the holdshelf tables, taken while two brokers serve, restored
// into a fresh PostgreSQL server, brings back every queue and every message
// sent before it to a broker started there; FIFO deduplication and receipt
// handles go with it, since the cluster's handle key is in the dump.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { main } from "../../src/cli/main.js";
import { createQueueServiceRpc, type QueueServiceRpc } from "../../src/client/rpc-client.js";
import type { HoldshelfServer } from "../../src/server/holdshelf-server.js";
import { startClusterBroker } from "../support/cluster-brokers.js";
import {
  postgresBinDir,
  postgresForFile,
  skipWithoutPostgres,
  startPostgres,
  type PostgresServer,
} from "../support/postgres-server.js";
import { makeTempDir } from "../support/temp-dir.js";

const postgres = postgresForFile();
const shardCount = 8;
// Short, so the restored cluster's broker takes over the shards the dump says others hold soon after.
const leaseTtlMs = 1500;

type Rpc = QueueServiceRpc & { close(): void };

/** Runs one of PostgreSQL's client programs; fails the test with its output if it fails. */
function pgTool(tool: string, args: string[]): void {
  const result = spawnSync(join(postgresBinDir()!, tool), args, { encoding: "utf8" });
  if (result.status !== 0) throw new Error(`${tool} failed: ${result.stderr || result.stdout}`);
}

/** Every message of a queue (peeked: in flight ones too), as body by id. */
async function peekAll(rpc: Rpc, queue: string): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  let pageToken = "";
  do {
    const page = await rpc.peekMessages({ queue, pageSize: 100, pageToken });
    for (const message of page.messages) found.set(message.messageId, Buffer.from(message.body).toString());
    pageToken = page.nextPageToken;
  } while (pageToken !== "");
  return found;
}

describe.skipIf(skipWithoutPostgres)("a pg_dump of a cluster restored into a fresh PostgreSQL", () => {
  const servers: HoldshelfServer[] = [];
  const clients: Rpc[] = [];
  let fresh: PostgresServer | undefined;
  let dir: { path: string; remove(): Promise<void> };
  beforeEach(async () => {
    dir = await makeTempDir();
  });
  afterEach(async () => {
    for (const client of clients.splice(0)) client.close();
    await Promise.all(servers.splice(0).map((server) => server.shutdown().catch(() => undefined)));
    await fresh?.stop();
    await dir.remove();
  });

  async function broker(url: string, nodeId: string): Promise<{ server: HoldshelfServer; rpc: Rpc }> {
    const server = await startClusterBroker(url, nodeId, { shardCount, leaseTtlMs });
    servers.push(server);
    const rpc = createQueueServiceRpc(server.address);
    clients.push(rpc);
    return { server, rpc };
  }

  it("brings back every queue and message to a broker on the restored database", async () => {
    const url = await postgres().createDatabase();
    const { server: sa, rpc: a } = await broker(url, "a");
    const { server: sb } = await broker(url, "b");
    // Settled: an even share each, and a routes every shard to its owner, so no call meets a hand-over.
    await vi.waitFor(
      () => {
        expect(sa.cluster!.ownedShardCount).toBe(shardCount / 2);
        expect(sb.cluster!.ownedShardCount).toBe(shardCount / 2);
        for (let shard = 0; shard < shardCount; shard++) {
          const route = sa.cluster!.routeShard(shard);
          const onB = sb.cluster!.routeShard(shard)?.kind === "local";
          expect(route?.kind === "local" || (onB && route?.kind === "remote" && route.address === sb.address)).toBe(
            true,
          );
        }
      },
      { timeout: 20_000, interval: 50 },
    );
    const queues = Array.from({ length: 6 }, (_, i) => `work-${i}`);
    const sent = new Map<string, Map<string, string>>();
    for (const queue of queues) {
      await a.createQueue({ name: queue });
      const bodies = new Map<string, string>();
      for (let i = 0; i < 15; i++) {
        const body = `${queue}-${i}`;
        bodies.set((await a.send({ queue, body: Buffer.from(body) })).messageId, body);
      }
      sent.set(queue, bodies);
    }
    const lease = await a.receive({ queue: "work-0", maxMessages: 2, visibilityTimeout: durationFromMs(600_000) });
    expect(lease.messages).toHaveLength(2);
    await a.createQueue({ name: "orders.fifo", config: { fifo: true } });
    const first = await a.send({
      queue: "orders.fifo",
      body: Buffer.from("o1"),
      messageGroupId: "g",
      deduplicationId: "d-1",
    });

    // Online: pg_dump reads one snapshot of the database while the brokers go on.
    const dump = join(dir.path, "holdshelf.dump");
    pgTool("pg_dump", ["--dbname", url, "--format", "custom", "--table", "holdshelf_*", "--file", dump]);
    await Promise.all(servers.splice(0).map((server) => server.shutdown()));

    fresh = await startPostgres();
    const restoredUrl = await fresh.createDatabase();
    pgTool("pg_restore", ["--dbname", restoredUrl, "--no-owner", "--exit-on-error", dump]);
    const { server: c, rpc: r } = await broker(restoredUrl, "c");
    // The dump says a and b hold the shards: c takes them once those leases lapse.
    await vi.waitFor(() => expect(c.cluster!.ownedShardCount).toBe(shardCount), { timeout: 20_000, interval: 100 });

    const listed = await r.listQueues({ pageSize: 100 });
    expect(listed.queues.map((q) => q.name).sort()).toEqual([...queues, "orders.fifo"].sort());
    for (const queue of queues) expect(await peekAll(r, queue), queue).toEqual(sent.get(queue));
    // Receipt handles: the cluster's handle key is in the dump.
    for (const message of lease.messages) await r.delete({ queue: "work-0", receiptHandle: message.receiptHandle });
    // FIFO deduplication: the same id again is the first send's message.
    const repeat = await r.send({
      queue: "orders.fifo",
      body: Buffer.from("o1"),
      messageGroupId: "g",
      deduplicationId: "d-1",
    });
    expect(repeat.messageId).toBe(first.messageId);
  }, 60_000);

  it("refuses AdminService.Backup with a reason that names PostgreSQL's tools", async () => {
    const url = await postgres().createDatabase();
    const { server } = await broker(url, "a");
    const errors: string[] = [];
    const error = vi.spyOn(console, "error").mockImplementation((line: string) => void errors.push(line));
    try {
      const code = await main(["backup", join(dir.path, "b.hsb")], { HOLDSHELF_ADDRESS: server.address });
      expect(code).toBe(1);
    } finally {
      error.mockRestore();
    }
    expect(errors.join("\n")).toMatch(/^holdshelf: BACKUP_NOT_SUPPORTED: .*pg_dump.*docs\/operations.md#backup/);
  });
});
