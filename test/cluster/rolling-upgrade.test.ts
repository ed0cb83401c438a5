// The one mixed-version cluster docs/upgrading.md supports: a rolling
// upgrade from 0.1.0 to this release, one broker at a time, on one
// PostgreSQL database whose layout both read (layout 1). Release 0.1.0's
// brokers run from its package (test/fixtures/release-0.1.0), so the test
// needs no git tag. Calls and receipt handles cross between the two
// releases' brokers in both directions, and the layout stays 1.
import { execFile } from "node:child_process";
import { once } from "node:events";
import { promisify } from "node:util";
import pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { QueueClient } from "../../src/client/queue-client.js";
import { RpcError } from "../../src/client/rpc-error.js";
import { status } from "@grpc/grpc-js";
import { postgresLayoutVersion } from "../../src/store/postgres/schema-upgrades.js";
import { shardOfQueue } from "../../src/store/postgres/shard-of-queue.js";
import { startBrokerProcess, type BrokerProcess } from "../support/broker-process.js";
import { queueOn } from "../support/cluster-brokers.js";
import { freePort } from "../support/free-port.js";
import { postgresForFile, skipWithoutPostgres } from "../support/postgres-server.js";
import { unpackRelease } from "../support/release-0.1.0.js";
import { makeTempDir } from "../support/temp-dir.js";
import { sleep } from "../support/wait.js";

const run = promisify(execFile);
const postgres = postgresForFile();

/**
 * Runs `call` again while the queue's shard is between brokers or its owner
 * restarts (a broker stopping or joining), for up to 20 s, as a client with
 * retries would.
 */
async function retrying<T>(call: () => Promise<T>): Promise<T> {
  const giveUpAt = Date.now() + 20_000;
  for (;;) {
    try {
      return await call();
    } catch (error) {
      const passing = error instanceof RpcError && error.code === status.UNAVAILABLE;
      if (!passing || Date.now() > giveUpAt) throw error;
      await sleep(100);
    }
  }
}

/** Waits until the database says `nodeId` holds the shards of every queue named (8 shards). */
async function ownedBy(url: string, nodeId: string, queues: readonly string[]): Promise<void> {
  const shards = queues.map((queue) => shardOfQueue(queue, 8));
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (let waited = 0; ; waited += 100) {
      const { rows } = await client.query<{ owner: string | null }>(
        "SELECT owner FROM holdshelf_shards WHERE shard = ANY($1) AND expires_at > now()",
        [shards],
      );
      if (rows.length === new Set(shards).size && rows.every((row) => row.owner === nodeId)) return;
      expect(waited, `${nodeId} holds the shards of ${queues.join(", ")}`).toBeLessThan(20_000);
      await sleep(100);
    }
  } finally {
    await client.end();
  }
}

async function stop(broker: BrokerProcess): Promise<void> {
  broker.child.kill("SIGTERM");
  const [code] = await once(broker.child, "exit");
  expect(code).toBe(0);
}

describe.skipIf(skipWithoutPostgres)("a rolling upgrade from 0.1.0", () => {
  let dir: Awaited<ReturnType<typeof makeTempDir>>;
  const brokers: BrokerProcess[] = [];
  const clients: QueueClient[] = [];
  beforeEach(async () => {
    dir = await makeTempDir();
  });
  afterEach(async () => {
    for (const client of clients.splice(0)) client.close();
    for (const broker of brokers.splice(0)) if (broker.child.exitCode === null) await stop(broker);
    await dir.remove();
  });

  it("serves one cluster with 0.1.0 and 0.2.0 brokers together, then with 0.2.0 alone, losing nothing", async () => {
    const release010 = await unpackRelease(dir.path);
    const url = await postgres().createDatabase();
    await run(process.execPath, [release010, "cluster", "init", "--postgres", url, "--shards", "8"]);
    // Each broker keeps its address across its upgrade, as a deployed one does.
    const ports = { a: await freePort(), b: await freePort() };
    const start = async (nodeId: "a" | "b", bin?: string): Promise<QueueClient> => {
      const listen = `127.0.0.1:${ports[nodeId]}`;
      const args = ["--listen", listen, "--postgres", url, "--node-id", nodeId, "--shard-lease-ttl", "2s"];
      const broker = await startBrokerProcess(dir.path, args, bin === undefined ? {} : { bin });
      brokers.push(broker);
      const client = new QueueClient(broker.address, { batching: { delayMs: 0 } });
      clients.push(client);
      return client;
    };
    const onA = queueOn("a", ["a", "b"], "work");
    const onB = queueOn("b", ["a", "b"], "work");
    const oldA = await start("a", release010);
    await start("b", release010);
    for (const queue of [onA, onB]) {
      await retrying(() => oldA.createQueue(queue, { visibilityTimeoutMs: 60_000 }));
      for (const n of [1, 2, 3]) await retrying(() => oldA.send(queue, `${queue} ${n}`));
    }
    const [leaseA] = await retrying(() => oldA.receive(onA));
    const [leaseB] = await retrying(() => oldA.receive(onB));

    // b first: 0.2.0 beside 0.1.0, each forwarding to the other, each honouring the other's handles.
    await stop(brokers[1]!);
    const newB = await start("b");
    await retrying(() => newB.send(onA, `${onA} through 0.2.0`));
    await retrying(() => oldA.send(onB, `${onB} through 0.1.0`));
    await retrying(() => newB.delete(onB, leaseB!.receiptHandle));
    await retrying(() => newB.changeVisibility(onA, leaseA!.receiptHandle, 30_000));

    // Then a: 0.2.0 alone.
    await stop(brokers[0]!);
    const newA = await start("a");
    await retrying(() => newA.delete(onA, leaseA!.receiptHandle));
    const bodies = async (queue: string) =>
      (await retrying(() => newA.peekMessages(queue, { pageSize: 100 }))).messages.map((message) =>
        Buffer.from(message.body).toString(),
      );
    expect(await bodies(onA)).toEqual([`${onA} 2`, `${onA} 3`, `${onA} through 0.2.0`]);
    expect(await bodies(onB)).toEqual([`${onB} 2`, `${onB} 3`, `${onB} through 0.1.0`]);

    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      const { rows } = await admin.query("SELECT layout_version FROM holdshelf_cluster");
      expect(rows).toEqual([{ layout_version: postgresLayoutVersion }]);
    } finally {
      await admin.end();
    }
  }, 90_000);

  it("lets a 0.1.0 broker read a dead letter 0.2.0 moved with its receive history, and read and dead-letter a message 0.2.0 stored with a trace header, which 0.2.0 then reads back", async () => {
    const release010 = await unpackRelease(dir.path);
    const url = await postgres().createDatabase();
    await run(process.execPath, [release010, "cluster", "init", "--postgres", url, "--shards", "8"]);
    const ports = { a: await freePort(), b: await freePort() };
    const start = async (nodeId: "a" | "b", bin?: string): Promise<QueueClient> => {
      const listen = `127.0.0.1:${ports[nodeId]}`;
      const args = ["--listen", listen, "--postgres", url, "--node-id", nodeId, "--shard-lease-ttl", "2s"];
      const broker = await startBrokerProcess(dir.path, args, bin === undefined ? {} : { bin });
      brokers.push(broker);
      const client = new QueueClient(broker.address, { batching: { delayMs: 0 } });
      clients.push(client);
      return client;
    };
    const header = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1";
    const work = queueOn("b", ["a", "b"], "traced");
    const dlq = queueOn("b", ["a", "b"], "traced-dlq");
    const oldA = await start("a", release010);
    const newB = await start("b");
    // Until b holds its shards, a (0.1.0) serves them, and would dead-letter as 0.1.0 does (its count reset).
    const counted = queueOn("b", ["a", "b"], "counted");
    await ownedBy(url, "b", [work, dlq, counted]);
    await retrying(() => newB.createQueue(dlq));
    await retrying(() => newB.createQueue(work, { redrivePolicy: { deadLetterQueue: dlq, maxReceiveCount: 1 } }));
    await retrying(() => newB.send(work, "traced body", { attributes: { k: "v" }, traceHeader: header }));
    // 0.2.0 dead-letters a message keeping its receive count: the same layout, a count 0.1.0 left at 0.
    await retrying(() => newB.createQueue(counted, { redrivePolicy: { deadLetterQueue: dlq, maxReceiveCount: 1 } }));
    await retrying(() => newB.send(counted, "counted body"));
    await retrying(() => newB.receive(counted, { visibilityTimeoutMs: 0 }));
    for (let waited = 0; (await retrying(() => newB.peekMessages(dlq))).messages.length === 0; waited += 100) {
      expect(waited, "0.2.0 dead-letters the message").toBeLessThan(20_000);
      await sleep(100);
    }

    // 0.1.0 alone: it reads that dead letter with its count, and the traced
    // message whole, the header as one more typed attribute, and dead-letters it.
    await stop(brokers[1]!);
    const [kept] = (await retrying(() => oldA.peekMessages(dlq))).messages;
    expect(Buffer.from(kept!.body).toString()).toBe("counted body");
    expect(kept!.receiveCount).toBe(1);
    expect(kept!.deadLetter).toEqual({ sourceQueue: counted, reason: "MAX_RECEIVE_COUNT_EXCEEDED" });
    const [old] = await retrying(() => oldA.receive(work, { visibilityTimeoutMs: 100 }));
    expect(Buffer.from(old!.body).toString()).toBe("traced body");
    expect(old!.attributes).toEqual({ k: "v" });
    expect(old!.typedAttributes).toEqual({ "": { dataType: "AWSTraceHeader", value: header } });
    for (let waited = 0; (await retrying(() => oldA.peekMessages(dlq))).messages.length < 2; waited += 100) {
      expect(waited, "0.1.0 dead-letters the message").toBeLessThan(20_000);
      await sleep(100);
    }

    // 0.2.0 alone again: the header 0.1.0 moved is a trace header once more, with no stray typed attribute.
    await stop(brokers[0]!);
    const newA = await start("a");
    const [, moved] = (await retrying(() => newA.peekMessages(dlq))).messages;
    expect(Buffer.from(moved!.body).toString()).toBe("traced body");
    expect(moved!.traceHeader).toBe(header);
    expect(moved!.typedAttributes).toEqual({});
    expect(moved!.deadLetter).toEqual({ sourceQueue: work, reason: "MAX_RECEIVE_COUNT_EXCEEDED" });
  }, 90_000);
});
