// `holdshelf queue export` and `queue apply` against real brokers, the
// command running in this process (main, as bin/holdshelf.js calls it), as
// fifo-command.test.ts does; serve --queues runs the built command in
// serve-queues.test.ts.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { main } from "../../src/cli/main.js";
import { startGrpcHarness, type GrpcHarness } from "../support/grpc-harness.js";
import { makeTempDir } from "../support/temp-dir.js";

/** An SQS queue policy: QueueConfig keeps it as an opaque document. */
const sqsPolicy = JSON.stringify({
  Version: "2012-10-17",
  Statement: [{ Effect: "Allow", Action: "sqs:SendMessage" }],
});

/** What one run of the command printed, and its exit code. */
interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly lines: Record<string, unknown>[];
  readonly stderr: string;
}

describe("queues as code", () => {
  let source: GrpcHarness;
  let target: GrpcHarness;
  let dir: { path: string; remove(): Promise<void> };
  beforeEach(async () => {
    [source, target, dir] = await Promise.all([startGrpcHarness(), startGrpcHarness(), makeTempDir()]);
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    await Promise.all([source.stop(), target.stop(), dir.remove()]);
  });

  async function holdshelf(broker: GrpcHarness, ...argv: string[]): Promise<Run> {
    const out: string[] = [];
    const err: string[] = [];
    const log = vi.spyOn(console, "log").mockImplementation((line: string) => void out.push(line));
    const error = vi.spyOn(console, "error").mockImplementation((line: string) => void err.push(line));
    try {
      const code = await main(argv, { HOLDSHELF_ADDRESS: broker.server.address });
      const stdout = out.join("\n");
      const lines =
        argv[1] === "apply" && code === 0 ? out.map((line) => JSON.parse(line) as Record<string, unknown>) : [];
      return { code, stdout, lines, stderr: err.join("\n") };
    } finally {
      log.mockRestore();
      error.mockRestore();
    }
  }

  async function writeDefinitions(name: string, document: unknown): Promise<string> {
    const path = join(dir.path, name);
    await writeFile(path, typeof document === "string" ? document : JSON.stringify(document));
    return path;
  }

  /** Every field of QueueConfig set away from its default somewhere, FIFO and standard, with dead-letter chains. */
  async function createVariety(): Promise<void> {
    const { rpc } = source;
    await rpc.createQueue({ name: "jobs-dlq", config: { tags: { team: "core", tier: "1" } } });
    await rpc.createQueue({
      name: "jobs",
      config: {
        visibilityTimeout: { seconds: 45n },
        delay: { seconds: 2n },
        retention: { seconds: 86_400n },
        maxMessageBytes: 4096,
        receiveWaitTime: { seconds: 5n },
        maxInFlight: 77,
        maxLeaseDuration: { seconds: 3600n },
        redrivePolicy: { deadLetterQueue: "jobs-dlq", maxReceiveCount: 4 },
        retryPolicy: { minBackoff: { seconds: 1n }, maxBackoff: { seconds: 60n } },
        tags: { team: "core" },
        accessPolicy: sqsPolicy,
        sqsEncryption: { kmsMasterKeyId: "alias/jobs", kmsDataKeyReusePeriod: { seconds: 900n } },
      },
    });
    await rpc.createQueue({ name: "orders-dlq.fifo", config: { fifo: true } });
    await rpc.createQueue({
      name: "orders.fifo",
      config: {
        fifo: true,
        contentBasedDeduplication: true,
        deduplicationScope: 2,
        redrivePolicy: { deadLetterQueue: "orders-dlq.fifo", maxReceiveCount: 2 },
      },
    });
  }

  it("exports every queue's configuration, and applying it to a fresh broker gives identical configurations", async () => {
    await createVariety();
    const exported = await holdshelf(source, "queue", "export");
    expect(exported.code).toBe(0);
    const document = JSON.parse(exported.stdout) as { version: number; queues: { name: string; config: object }[] };
    expect(document.version).toBe(1);
    expect(document.queues.map((queue) => queue.name)).toEqual(["jobs", "jobs-dlq", "orders-dlq.fifo", "orders.fifo"]);
    expect(document.queues[0]!.config).toMatchObject({
      visibilityTimeout: "45s",
      redrivePolicy: { deadLetterQueue: "jobs-dlq", maxReceiveCount: 4 },
      retryPolicy: { minBackoff: "1s", maxBackoff: "60s" },
      tags: { team: "core" },
      accessPolicy: sqsPolicy,
      sqsEncryption: { kmsMasterKeyId: "alias/jobs", kmsDataKeyReusePeriod: "900s" },
    });
    const file = await writeDefinitions("queues.json", exported.stdout);

    const applied = await holdshelf(target, "queue", "apply", file);
    expect(applied.code).toBe(0);
    // Dead-letter queues first: names sort the sources first, so this order is the apply's own.
    expect(applied.lines.slice(0, 4).map((line) => `${line["action"]} ${line["queue"]}`)).toEqual([
      "create jobs-dlq",
      "create jobs",
      "create orders-dlq.fifo",
      "create orders.fifo",
    ]);
    expect(applied.lines[4]).toEqual({ created: 4, updated: 0, deleted: 0, unchanged: 0, dryRun: false });
    expect((await holdshelf(target, "queue", "export")).stdout).toBe(exported.stdout);
    const configs = async (broker: GrpcHarness) =>
      (await broker.rpc.listQueues({})).queues.map(({ name, config }) => ({ name, config }));
    expect(await configs(target)).toEqual(await configs(source));
  });

  it("is idempotent: a second apply changes nothing and says so", async () => {
    await createVariety();
    const file = await writeDefinitions("queues.json", (await holdshelf(source, "queue", "export")).stdout);
    expect((await holdshelf(target, "queue", "apply", file)).code).toBe(0);
    const before = await target.rpc.getQueue({ name: "jobs" });
    const again = await holdshelf(target, "queue", "apply", file);
    expect(again.lines).toEqual([{ created: 0, updated: 0, deleted: 0, unchanged: 4, dryRun: false }]);
    expect(again.stderr).toContain("nothing to change");
    // Not even an UpdateQueue that changes nothing: update_time stays.
    expect((await target.rpc.getQueue({ name: "jobs" })).queue?.updateTime).toEqual(before.queue?.updateTime);
  });

  it("prints the changes of a dry run and makes none", async () => {
    await source.rpc.createQueue({ name: "a", config: { visibilityTimeout: { seconds: 10n } } });
    await source.rpc.createQueue({ name: "gone" });
    const file = await writeDefinitions("queues.json", {
      version: 1,
      queues: [
        { name: "a", config: { visibilityTimeout: "20s", tags: { k: "v" } } },
        { name: "new", config: { maxInFlight: 5 } },
      ],
    });
    const exported = (await holdshelf(source, "queue", "export")).stdout;
    const dry = await holdshelf(source, "queue", "apply", file, "--dry-run", "--delete-missing");
    expect(dry.code).toBe(0);
    expect(dry.lines).toEqual([
      {
        action: "create",
        queue: "new",
        config: {
          maxInFlight: 5,
          visibilityTimeout: "30s",
          delay: "0s",
          retention: "345600s",
          maxMessageBytes: 1048576,
          receiveWaitTime: "0s",
          maxLeaseDuration: "43200s",
        },
      },
      {
        action: "update",
        queue: "a",
        fields: { visibility_timeout: { from: "10s", to: "20s" }, tags: { to: { k: "v" } } },
      },
      { action: "delete", queue: "gone" },
      { created: 1, updated: 1, deleted: 1, unchanged: 0, dryRun: true },
    ]);
    expect(dry.stderr).toContain("dry run: nothing was changed");
    expect((await holdshelf(source, "queue", "export")).stdout).toBe(exported);
  });

  it("never deletes a queue the file leaves out unless asked, and then deletes sources before their dead-letter queues", async () => {
    await createVariety();
    await source.rpc.createQueue({ name: "kept" });
    const file = await writeDefinitions("queues.json", { version: 1, queues: [{ name: "kept", config: {} }] });
    expect((await holdshelf(source, "queue", "apply", file)).lines).toEqual([
      { created: 0, updated: 0, deleted: 0, unchanged: 1, dryRun: false },
    ]);
    const onlyJobs = await holdshelf(source, "queue", "apply", file, "--delete-missing", "--prefix", "jobs");
    expect(onlyJobs.lines).toEqual([
      { action: "delete", queue: "jobs" },
      { action: "delete", queue: "jobs-dlq" },
      { created: 0, updated: 0, deleted: 2, unchanged: 1, dryRun: false },
    ]);
    const names = (await source.rpc.listQueues({})).queues.map((queue) => queue.name);
    expect(names).toEqual(["kept", "orders-dlq.fifo", "orders.fifo"]);
  });

  it("exports only the queues under --prefix", async () => {
    await createVariety();
    const exported = JSON.parse((await holdshelf(source, "queue", "export", "--prefix", "orders")).stdout) as {
      queues: { name: string }[];
    };
    expect(exported.queues.map((queue) => queue.name)).toEqual(["orders-dlq.fifo", "orders.fifo"]);
  });

  it.each([
    ["a FIFO-ness change", { a: { fifo: true } }, 'queue "a" is standard on the broker and FIFO in the file'],
    [
      "a redrive to a queue nowhere",
      { b: { redrivePolicy: { deadLetterQueue: "x", maxReceiveCount: 1 } } },
      "neither in the file nor on the broker",
    ],
    [
      "a redrive cycle",
      {
        b: { redrivePolicy: { deadLetterQueue: "c", maxReceiveCount: 1 } },
        c: { redrivePolicy: { deadLetterQueue: "b", maxReceiveCount: 1 } },
      },
      "cycle: b -> c -> b",
    ],
    ["a setting out of bounds", { b: { maxInFlight: 0, retention: "1s" } }, 'queue "b": config.retention'],
    ["an unknown field", { b: { visibility: "1s" } }, 'queues[1] ("b").config: '],
  ])("refuses %s with a clear message, exit code 1 and nothing changed", async (_, queues, message) => {
    await source.rpc.createQueue({ name: "a" });
    // The first queue of the file is valid and new: it must not be created either.
    const entries = [
      { name: "first", config: {} },
      ...Object.entries(queues).map(([name, config]) => ({ name, config })),
    ];
    const file = await writeDefinitions("queues.json", { version: 1, queues: entries });
    const exported = (await holdshelf(source, "queue", "export")).stdout;
    const refused = await holdshelf(source, "queue", "apply", file);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(message);
    expect(refused.stdout).toBe("");
    expect((await holdshelf(source, "queue", "export")).stdout).toBe(exported);
  });

  it("refuses a file that is not a definitions document, or is missing, naming it", async () => {
    const bad = await writeDefinitions("bad.json", '{"version": 1, "queues": [], "queue": []}');
    const refused = await holdshelf(source, "queue", "apply", bad);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`${bad}: the document has an unknown key "queue"`);
    const missing = await holdshelf(source, "queue", "apply", join(dir.path, "missing.json"));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`cannot read ${join(dir.path, "missing.json")}: ENOENT`);
    expect((await holdshelf(source, "queue", "apply")).code).toBe(2);
  });

  it("applies the same file from standard input", async () => {
    const text = JSON.stringify({ version: 1, queues: [{ name: "piped", config: {} }] });
    const stdin = vi.spyOn(process, "stdin", "get").mockReturnValue(
      (async function* () {
        yield Buffer.from(text);
      })() as never,
    );
    const applied = await holdshelf(source, "queue", "apply", "-");
    stdin.mockRestore();
    expect(applied.code).toBe(0);
    expect((await source.rpc.getQueue({ name: "piped" })).queue?.name).toBe("piped");
  });
});
