// FIFO queues from the command line: `queue create --fifo` with its settings,
// `send --group --dedup-id` printing the sequence number, receive and peek
// printing each message's group and sequence number, and the FIFO refusals.
// The command runs in this process (main, as bin/holdshelf.js calls it)
// against a real broker: a child process per command would cost seconds
// each on a loaded machine, and holdshelf-command.test.ts already covers
// the built command itself.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { main } from "../../src/cli/main.js";
import { startGrpcHarness, type GrpcHarness } from "../support/grpc-harness.js";

type Line = Record<string, unknown>;

/** What one run of the command printed, and its exit code. */
interface Run {
  readonly code: number;
  readonly lines: Line[];
  readonly stderr: string;
}

describe("the holdshelf command on FIFO queues", () => {
  let h: GrpcHarness;
  beforeEach(async () => {
    h = await startGrpcHarness();
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    await h.stop();
  });

  async function holdshelf(...argv: string[]): Promise<Run> {
    const out: string[] = [];
    const err: string[] = [];
    const log = vi.spyOn(console, "log").mockImplementation((line: string) => void out.push(line));
    const error = vi.spyOn(console, "error").mockImplementation((line: string) => void err.push(line));
    try {
      const code = await main(argv, { HOLDSHELF_ADDRESS: h.server.address });
      return { code, lines: out.map((line) => JSON.parse(line) as Line), stderr: err.join("\n") };
    } finally {
      log.mockRestore();
      error.mockRestore();
    }
  }

  it("creates a FIFO queue with its settings, printing the scope by name", async () => {
    const created = await holdshelf(
      "queue",
      "create",
      "orders.fifo",
      "--fifo",
      "--content-based-deduplication",
      "--deduplication-scope",
      "message-group",
    );
    expect(created.code).toBe(0);
    expect(created.lines[0]).toMatchObject({
      config: { fifo: true, contentBasedDeduplication: true, deduplicationScope: "MESSAGE_GROUP" },
    });
    expect((await holdshelf("queue", "create", "plain.fifo", "--fifo")).lines[0]).toMatchObject({
      config: { fifo: true, contentBasedDeduplication: false, deduplicationScope: "QUEUE" },
    });
    // update may repeat --fifo: the same FIFO-ness is no change.
    const updated = await holdshelf("queue", "update", "plain.fifo", "--fifo", "--max-in-flight", "5");
    expect(updated.lines[0]).toMatchObject({ config: { fifo: true, maxInFlight: 5 } });
    expect((await holdshelf("queue", "create", "standard")).lines[0]).toMatchObject({
      config: { fifo: false, deduplicationScope: "UNSPECIFIED" },
    });
  });

  it("sends to groups printing sequence numbers, and receives and peeks them with group and number", async () => {
    expect((await holdshelf("queue", "create", "orders.fifo", "--fifo", "--content-based-deduplication")).code).toBe(0);
    const send = async (...args: string[]) => {
      const result = await holdshelf("send", "orders.fifo", ...args);
      expect(result.code).toBe(0);
      return result.lines[0] as { messageId: string; sequenceNumber: string };
    };
    const first = await send("first", "--group", "customer-1", "--dedup-id", "order-1");
    const second = await send("second", "--group", "customer-1");
    const other = await send("other", "--group", "customer-2", "--dedup-id", "order-2");
    for (const sent of [first, second, other]) expect(sent.sequenceNumber).toMatch(/^\d{20}$/);
    expect([first, second, other].map((sent) => sent.sequenceNumber)).toEqual(
      [first, second, other].map((sent) => sent.sequenceNumber).sort(),
    );
    // A duplicate prints the first send's id and number.
    expect(await send("first again", "--group", "customer-1", "--dedup-id", "order-1")).toEqual(first);

    const peeked = (await holdshelf("peek", "orders.fifo")).lines;
    expect(peeked).toMatchObject([
      {
        messageId: first.messageId,
        messageGroupId: "customer-1",
        sequenceNumber: first.sequenceNumber,
        deduplicationId: "order-1",
        state: "VISIBLE",
      },
      { messageId: second.messageId, messageGroupId: "customer-1", sequenceNumber: second.sequenceNumber },
      { messageId: other.messageId, messageGroupId: "customer-2", sequenceNumber: other.sequenceNumber },
    ]);
    const received = (await holdshelf("receive", "orders.fifo", "--max", "10")).lines;
    expect(received).toMatchObject([
      { body: "first", messageGroupId: "customer-1", sequenceNumber: first.sequenceNumber, deduplicationId: "order-1" },
      { body: "second", messageGroupId: "customer-1", sequenceNumber: second.sequenceNumber },
      { body: "other", messageGroupId: "customer-2", sequenceNumber: other.sequenceNumber },
    ]);
  });

  it("prints the FIFO reasons of a refused call with exit code 1, and refuses an unknown scope as a usage error", async () => {
    expect((await holdshelf("queue", "create", "f", "--fifo")).code).toBe(0);
    expect((await holdshelf("queue", "create", "s")).code).toBe(0);
    const refusals = [
      [["send", "f", "x", "--dedup-id", "d"], "holdshelf: MESSAGE_GROUP_ID_REQUIRED"],
      [["send", "f", "x", "--group", "g"], "holdshelf: DEDUPLICATION_ID_REQUIRED"],
      [["send", "s", "x", "--group", "g"], "holdshelf: NOT_A_FIFO_QUEUE"],
      [["queue", "update", "s", "--fifo"], "config.fifo"],
      [["queue", "create", "t", "--content-based-deduplication"], "config.content_based_deduplication"],
    ] as const;
    for (const [args, printed] of refusals) {
      const result = await holdshelf(...args);
      expect({ args, code: result.code }).toEqual({ args, code: 1 });
      expect(result.stderr).toContain(printed);
    }
    const usage = await holdshelf("queue", "create", "g", "--fifo", "--deduplication-scope", "group");
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('--deduplication-scope takes queue or message-group, not "group"');
    expect((await holdshelf("queue", "list")).lines.map((queue) => queue["name"])).toEqual(["f", "s"]);
  });
});
