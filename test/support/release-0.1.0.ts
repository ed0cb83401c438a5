// What release 0.1.0 left behind (test/fixtures/release-0.1.0, made by its
// own code: make-fixtures.sh), unpacked for a test: its data directory, its
// cluster database, its package to run its brokers, and the answers its
// broker gave about that data, to hold today's answers to.
import { execFile } from "node:child_process";
import { readFile, symlink } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import pg from "pg";
import { expect } from "vitest";
import type { QueueClient } from "../../src/client/queue-client.js";
import type { Clock } from "../../src/time/clock.js";

const run = promisify(execFile);
const fixtures = fileURLToPath(new URL("../fixtures/release-0.1.0/", import.meta.url));
const repository = fileURLToPath(new URL("../../", import.meta.url));

/** A lease 0.1.0 issued, as its receive returned it (plain JSON). */
export interface FixtureLease {
  readonly queue: string;
  readonly messageId: string;
  readonly receiptHandle: string;
  readonly leaseDeadline: string;
}

/** What 0.1.0's broker answered about its data (populate.mjs), in plain JSON. */
export interface ReleaseFixture {
  /** Epoch ms after every write: a clock set here finds each lease and deduplication window still open. */
  readonly madeAt: number;
  /** Per queue, in name order: getQueue, every message peeked, and its move tasks. */
  readonly queues: readonly QueueView[];
  readonly leases: readonly FixtureLease[];
  /** Each FIFO send's result, by deduplication id. */
  readonly fifoSends: Readonly<Record<string, { messageId: string; sequenceNumber: string }>>;
}

/** One queue as a client sees it, in plain JSON. */
export interface QueueView {
  readonly queue: unknown;
  readonly messages: readonly unknown[];
  readonly moveTasks: readonly unknown[];
}

/** The queues of the fixtures, in the order they are recorded. */
export const fixtureQueues = ["events.fifo", "jobs", "orders", "orders-dlq"] as const;

/** The recorded answers of the embedded broker (`leveldb`) or of the cluster's (`postgres`). */
export async function readFixture(kind: "leveldb" | "postgres"): Promise<ReleaseFixture> {
  const fixture = JSON.parse(await readFile(join(fixtures, `${kind}.json`), "utf8")) as ReleaseFixture;
  // An age depends on when it is asked, not on what is stored.
  for (const view of fixture.queues)
    delete (view.queue as { stats: { oldestMessageAgeMs?: number } }).stats.oldestMessageAgeMs;
  return fixture;
}

/** Unpacks 0.1.0's data directory into `parent`; resolves to its path. */
export async function unpackDataDir(parent: string): Promise<string> {
  await run("tar", ["-xzf", join(fixtures, "leveldb-data.tar.gz"), "-C", parent]);
  return join(parent, "data");
}

/** Loads the dump of 0.1.0's cluster database into the (empty) database at `url`. */
export async function restoreDump(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(await readFile(join(fixtures, "postgres-dump.sql"), "utf8"));
  } finally {
    await client.end();
  }
}

/** Unpacks 0.1.0's package into `parent` beside a link to the repository's node_modules; resolves to its command. */
export async function unpackRelease(parent: string): Promise<string> {
  await run("tar", ["-xzf", join(fixtures, "holdshelf-0.1.0-js.tgz"), "-C", parent]);
  await symlink(join(repository, "node_modules"), join(parent, "package", "node_modules"));
  return join(parent, "package", "bin", "holdshelf.js");
}

/** Every queue of the fixtures as `client` sees it now, in the fixtures' plain JSON. */
export async function viewQueues(client: QueueClient): Promise<QueueView[]> {
  const views: QueueView[] = [];
  for (const name of fixtureQueues) {
    const messages: unknown[] = [];
    let pageToken = "";
    do {
      const page = await client.peekMessages(name, { pageSize: 100, pageToken });
      messages.push(...page.messages);
      pageToken = page.nextPageToken;
    } while (pageToken !== "");
    const queue = await client.getQueue(name);
    delete (queue.stats as { oldestMessageAgeMs?: number }).oldestMessageAgeMs;
    views.push(plain({ queue, messages, moveTasks: await client.listMessageMoveTasks(name, 10) }) as QueueView);
  }
  return views;
}

/** JSON-ready as populate.mjs records it: dates as ISO strings, bytes as UTF-8 text. */
export function plain(value: unknown): unknown {
  return JSON.parse(
    JSON.stringify(value, (_, field: unknown) =>
      field instanceof Uint8Array || (field as { type?: unknown } | null)?.type === "Buffer"
        ? { utf8: Buffer.from(field as Uint8Array).toString("utf8") }
        : field,
    ),
  );
}

/**
 * Holds a broker opened on 0.1.0's data, on a clock at the fixture's
 * `madeAt`, to what 0.1.0 answered: every queue, configuration, message and
 * move task as recorded; the deduplication window still answers a repeated
 * id with the first send; and every receipt handle 0.1.0 issued still
 * extends and deletes its message.
 */
export async function expectReleaseData(client: QueueClient, fixture: ReleaseFixture, clock: Clock): Promise<void> {
  expect(await viewQueues(client)).toMatchObject(fixture.queues);
  for (const id of ["d-1", "d-3"]) {
    const group = id === "d-3" ? "g2" : "g1";
    const again = await client.sendWithResult("events.fifo", "again", { messageGroupId: group, deduplicationId: id });
    expect(again).toEqual(fixture.fifoSends[id]);
  }
  for (const lease of fixture.leases) {
    const deadline = await client.changeVisibility(lease.queue, lease.receiptHandle, 60_000);
    expect(deadline.getTime()).toBe(clock.now() + 60_000);
    await client.delete(lease.queue, lease.receiptHandle);
  }
  const left = await viewQueues(client);
  const bodies = (name: string) =>
    (left.find((view) => (view.queue as { name: string }).name === name)!.messages as { body: { utf8: string } }[]).map(
      (message) => message.body.utf8,
    );
  expect(bodies("orders")).toEqual(["order-3", "order-later"]);
  // The duplicates stored nothing; the first of group g1 is gone, so its second is next.
  expect(bodies("events.fifo")).toEqual(["g1 d-2", "g2 d-3"]);
  const received = await client.receive("events.fifo", { maxMessages: 10 });
  // Groups in any order: g2's message waited behind no lease, g1's behind the deleted one.
  expect(received.map((message) => Buffer.from(message.body).toString()).sort()).toEqual(["g1 d-2", "g2 d-3"]);
}
