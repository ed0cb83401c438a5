// `holdshelf backup` of a running broker under load and `holdshelf restore`
// into a new data directory: nothing acknowledged is lost, nothing deleted
// comes back, and leases, FIFO deduplication, dead letters and move tasks
// survive. The command runs in this process (main, as bin/holdshelf.js calls
// it) against a real broker on a free port, so the load keeps going in the
// same process while the backup streams.
import { createReadStream } from "node:fs";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { main } from "../../src/cli/main.js";
import { createQueueServiceRpc, type QueueServiceRpc } from "../../src/client/rpc-client.js";
import { startHoldshelfServer, type HoldshelfServer } from "../../src/server/holdshelf-server.js";
import { BackupEncoder, readBackup, type BackupEntry } from "../../src/store/backup-format.js";
import { formatVersionKey, levelFormatVersion } from "../../src/store/format-version.js";
import { freePort } from "../support/free-port.js";
import { makeTempDir } from "../support/temp-dir.js";

type Rpc = QueueServiceRpc & { close(): void };

/** What one run of the command printed, and its exit code. */
interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

async function holdshelf(env: NodeJS.ProcessEnv, ...argv: string[]): Promise<Run> {
  const out: string[] = [];
  const err: string[] = [];
  const log = vi.spyOn(console, "log").mockImplementation((line: string) => void out.push(line));
  const error = vi.spyOn(console, "error").mockImplementation((line: string) => void err.push(line));
  try {
    const code = await main(argv, env);
    return { code, stdout: out.join("\n"), stderr: err.join("\n") };
  } finally {
    log.mockRestore();
    error.mockRestore();
  }
}

/** Every message of a queue, in flight ones too, by id. */
async function peekAll(rpc: Rpc, queue: string): Promise<Map<string, { body: string; sourceQueue: string }>> {
  const found = new Map<string, { body: string; sourceQueue: string }>();
  let pageToken = "";
  do {
    const page = await rpc.peekMessages({ queue, pageSize: 100, pageToken });
    for (const message of page.messages) {
      found.set(message.messageId, {
        body: Buffer.from(message.body).toString(),
        sourceQueue: message.deadLetterSourceQueue,
      });
    }
    pageToken = page.nextPageToken;
  } while (pageToken !== "");
  return found;
}

const text = (body: string): Uint8Array => Buffer.from(body);

describe("holdshelf backup and restore", () => {
  let dir: { path: string; remove(): Promise<void> };
  let server: HoldshelfServer | undefined;
  let rpc: Rpc | undefined;
  const start = async (dataDir: string): Promise<{ server: HoldshelfServer; rpc: Rpc }> => {
    server = await startHoldshelfServer({ dataDir, listen: "127.0.0.1:0" });
    rpc = createQueueServiceRpc(server.address);
    return { server, rpc };
  };
  const stop = async (): Promise<void> => {
    rpc?.close();
    await server?.shutdown();
    rpc = undefined;
    server = undefined;
  };
  beforeEach(async () => {
    dir = await makeTempDir();
  });
  afterEach(async () => {
    await stop();
    await dir.remove();
  });

  it("restores every message acknowledged before a backup taken under load, with its leases, deduplication, dead letters and move tasks", async () => {
    const first = await start(join(dir.path, "data"));
    const env = { HOLDSHELF_ADDRESS: first.server.address };
    const c = first.rpc;
    await c.createQueue({ name: "work" });
    const gone = await c.send({ queue: "work", body: text("deleted before") });
    const goneLease = await c.receive({ queue: "work", maxMessages: 1 });
    expect(goneLease.messages[0]?.messageId).toBe(gone.messageId);
    await c.delete({ queue: "work", receiptHandle: goneLease.messages[0]!.receiptHandle });
    // Enough keys for the backup to take several reads, each a turn of the event loop the load runs in.
    for (let i = 0; i < 3000; i += 100) {
      const entries = Array.from({ length: 100 }, (_, n) => ({ id: `e${n}`, body: text(`pre-${i + n}`) }));
      await c.sendBatch({ queue: "work", entries });
    }
    // Leases taken before the backup, held past its end.
    const held = await c.receive({ queue: "work", maxMessages: 5, visibilityTimeout: durationFromMs(600_000) });
    expect(held.messages).toHaveLength(5);
    // FIFO deduplication window.
    await c.createQueue({ name: "orders.fifo", config: { fifo: true } });
    const original = await c.send({
      queue: "orders.fifo",
      body: text("o1"),
      messageGroupId: "g",
      deduplicationId: "d-1",
    });
    // A dead-lettered message.
    await c.createQueue({ name: "dlq" });
    await c.createQueue({ name: "src", config: { redrivePolicy: { deadLetterQueue: "dlq", maxReceiveCount: 1 } } });
    await c.send({ queue: "src", body: text("poison") });
    const once = await c.receive({ queue: "src", maxMessages: 1 });
    await c.changeVisibility({
      queue: "src",
      receiptHandle: once.messages[0]!.receiptHandle,
      visibilityTimeout: durationFromMs(0),
    });
    await c.receive({ queue: "src", maxMessages: 1 });
    await first.server.broker.settled();
    // A move task, still running at the backup (one message a second).
    await c.createQueue({ name: "parked" });
    await c.createQueue({ name: "moved" });
    for (let i = 0; i < 20; i++) await c.send({ queue: "parked", body: text(`parked-${i}`) });
    const task = await c.startMessageMoveTask({ sourceQueue: "parked", destinationQueue: "moved", maxPerSecond: 1 });

    // The load: senders, and receivers that delete what they got.
    const sent = new Map<string, { body: string; ackedAt: number }>();
    const deletes = new Map<string, { startedAt: number; ackedAt: number }>();
    let stopping = false;
    const sender = async (name: string): Promise<void> => {
      for (let n = 0; !stopping; n++) {
        const body = `${name}-${n}`;
        const { messageId } = await c.send({ queue: "work", body: text(body) });
        sent.set(messageId, { body, ackedAt: performance.now() });
      }
    };
    const receiver = async (): Promise<void> => {
      while (!stopping) {
        const { messages } = await c.receive({
          queue: "work",
          maxMessages: 10,
          visibilityTimeout: durationFromMs(60_000),
        });
        for (const message of messages) {
          const startedAt = performance.now();
          await c.delete({ queue: "work", receiptHandle: message.receiptHandle });
          deletes.set(message.messageId, { startedAt, ackedAt: performance.now() });
        }
      }
    };
    const load = Promise.all([sender("a"), sender("b"), receiver(), receiver()]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const backupFile = join(dir.path, "backup.hsb");
    const backupStarted = performance.now();
    const backup = await holdshelf(env, "backup", backupFile);
    const backupEnded = performance.now();
    await new Promise((resolve) => setTimeout(resolve, 200));
    stopping = true;
    await load;
    expect(backup, backup.stderr).toMatchObject({ code: 0 });
    const summary = JSON.parse(backup.stdout) as { backup: string; bytes: number; records: number };
    expect(summary.backup).toBe(backupFile);
    expect(summary.bytes).toBe((await readFile(backupFile)).length);
    const loadedBefore = [...sent.values()].filter((s) => s.ackedAt < backupStarted).length;
    // The backup did run under load: sends were acknowledged before it began and while it ran.
    expect(loadedBefore).toBeGreaterThan(0);
    expect([...sent.values()].some((s) => s.ackedAt > backupStarted && s.ackedAt < backupEnded)).toBe(true);
    await stop();

    const restoredDir = join(dir.path, "restored");
    const restore = await holdshelf({}, "restore", backupFile, "--data-dir", restoredDir);
    expect(restore, restore.stderr).toMatchObject({ code: 0 });
    expect(JSON.parse(restore.stdout)).toMatchObject({ restored: restoredDir, records: summary.records });
    const second = await start(restoredDir);
    const r = second.rpc;
    const work = await peekAll(r, "work");
    for (const [id, send] of sent) {
      const deleted = deletes.get(id);
      if (send.ackedAt < backupStarted && (deleted === undefined || deleted.startedAt > backupEnded)) {
        expect(work.get(id)?.body, `message ${send.body}, acknowledged before the backup`).toBe(send.body);
      }
      if (deleted !== undefined && deleted.ackedAt < backupStarted) expect(work.has(id)).toBe(false);
    }
    for (const [id, message] of work) {
      const body = sent.get(id)?.body;
      if (body !== undefined) expect(message.body).toBe(body);
      else expect(message.body).toMatch(/^pre-\d+$/);
    }
    expect(work.has(gone.messageId)).toBe(false);
    // The leases taken before the backup: their receipt handles still work.
    for (const message of held.messages) {
      expect(work.has(message.messageId)).toBe(true);
      await r.changeVisibility({
        queue: "work",
        receiptHandle: message.receiptHandle,
        visibilityTimeout: durationFromMs(120_000),
      });
      await r.delete({ queue: "work", receiptHandle: message.receiptHandle });
    }
    // The deduplication window: the same id again is the first send's message.
    const repeat = await r.send({
      queue: "orders.fifo",
      body: text("o1"),
      messageGroupId: "g",
      deduplicationId: "d-1",
    });
    expect(repeat.messageId).toBe(original.messageId);
    expect((await peekAll(r, "orders.fifo")).size).toBe(1);
    // The dead letter, with its origin.
    expect([...(await peekAll(r, "dlq")).values()]).toEqual([{ body: "poison", sourceQueue: "src" }]);
    // The move task, and every message it moves, exactly once.
    const tasks = await r.listMessageMoveTasks({ sourceQueue: "parked", maxResults: 10 });
    expect(tasks.tasks.map((t) => t.taskHandle)).toContain(task.taskHandle);
    const parked = [...(await peekAll(r, "parked")).values(), ...(await peekAll(r, "moved")).values()];
    expect(parked.map((m) => m.body).sort()).toEqual(Array.from({ length: 20 }, (_, i) => `parked-${i}`).sort());
  });

  it("refuses a DEST that exists, and leaves it as it was", async () => {
    const { server: s } = await start(join(dir.path, "data"));
    const dest = join(dir.path, "taken");
    await writeFile(dest, "mine");
    const run = await holdshelf({ HOLDSHELF_ADDRESS: s.address }, "backup", dest);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/exists: a backup never overwrites a file/);
    expect(await readFile(dest, "utf8")).toBe("mine");
    expect(await readdir(dir.path)).toEqual(["data", "taken"]);
  });

  it("fails against an unreachable broker, leaving no file", async () => {
    const port = await freePort();
    const run = await holdshelf({ HOLDSHELF_ADDRESS: `127.0.0.1:${port}` }, "backup", join(dir.path, "b.hsb"));
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^holdshelf: error: /);
    expect(await readdir(dir.path)).toEqual([]);
  });

  describe("restore", () => {
    let backupFile: string;
    beforeEach(async () => {
      const { server: s, rpc: c } = await start(join(dir.path, "data"));
      await c.createQueue({ name: "work" });
      for (let i = 0; i < 50; i++) await c.send({ queue: "work", body: text(`m-${i}`) });
      backupFile = join(dir.path, "backup.hsb");
      expect((await holdshelf({ HOLDSHELF_ADDRESS: s.address }, "backup", backupFile)).code).toBe(0);
      await stop();
    });

    it("refuses a truncated backup before writing anything", async () => {
      const whole = await readFile(backupFile);
      const cut = join(dir.path, "cut.hsb");
      await writeFile(cut, whole.subarray(0, whole.length - 10));
      const run = await holdshelf({}, "restore", cut, "--data-dir", join(dir.path, "restored"));
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/cut short/);
      expect((await readdir(dir.path)).sort()).toEqual(["backup.hsb", "cut.hsb", "data"]);
    });

    it("refuses a corrupt backup before writing anything", async () => {
      const bytes = Buffer.from(await readFile(backupFile));
      const middle = Math.floor(bytes.length / 2);
      bytes[middle] = bytes[middle]! ^ 0xff;
      const corrupt = join(dir.path, "corrupt.hsb");
      await writeFile(corrupt, bytes);
      const run = await holdshelf({}, "restore", corrupt, "--data-dir", join(dir.path, "restored"));
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/corrupt/);
      expect((await readdir(dir.path)).sort()).toEqual(["backup.hsb", "corrupt.hsb", "data"]);
    });

    it("refuses a backup of a data directory in a newer format with exit status 3, writing nothing", async () => {
      // The same backup, its data directory's format raised to one this release does not read.
      const encoder = new BackupEncoder();
      const parts = [encoder.header(Date.now())];
      let stamped = false;
      for await (const entries of readBackup(createReadStream(backupFile))) {
        const raised = entries.map(([key, value]): BackupEntry => {
          if (!formatVersionKey.equals(key)) return [key, value];
          stamped = true;
          return [key, Buffer.of(0, 0, 0, levelFormatVersion + 1)];
        });
        parts.push(encoder.records(raised));
      }
      parts.push(encoder.end());
      expect(stamped).toBe(true);
      const newer = join(dir.path, "newer.hsb");
      await writeFile(newer, Buffer.concat(parts));
      const run = await holdshelf({}, "restore", newer, "--data-dir", join(dir.path, "restored"));
      expect(run.code).toBe(3);
      expect(run.stderr).toMatch(`data format ${levelFormatVersion + 1}, newer than data format ${levelFormatVersion}`);
      expect((await readdir(dir.path)).sort()).toEqual(["backup.hsb", "data", "newer.hsb"]);
    });

    it("refuses a backup that does not exist, making no directory", async () => {
      const run = await holdshelf(
        {},
        "restore",
        join(dir.path, "missing.hsb"),
        "--data-dir",
        join(dir.path, "restored"),
      );
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/cannot read the backup/);
      expect((await readdir(dir.path)).sort()).toEqual(["backup.hsb", "data"]);
    });

    it("refuses a data directory that is not empty", async () => {
      const run = await holdshelf({}, "restore", backupFile, "--data-dir", join(dir.path, "data"));
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/is not empty/);
    });

    it("restores into a directory whose parents do not exist yet", async () => {
      const nested = join(dir.path, "new", "parent", "data");
      expect((await holdshelf({}, "restore", backupFile, "--data-dir", nested)).code).toBe(0);
      const { rpc: r } = await start(nested);
      expect((await peekAll(r, "work")).size).toBe(50);
      expect(await readdir(join(dir.path, "new", "parent"))).toEqual(["data"]);
    });

    it("restores into an empty directory", async () => {
      const empty = join(dir.path, "empty");
      await mkdir(empty);
      expect((await holdshelf({}, "restore", backupFile, "--data-dir", empty)).code).toBe(0);
      const { rpc: r } = await start(empty);
      expect((await peekAll(r, "work")).size).toBe(50);
    });
  });
});
