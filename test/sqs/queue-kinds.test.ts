/**
 * What the SQS endpoint learns of a queue's kind, and what it spares: the
 * broker here is a stand-in that checks FIFO fields as the real one does
 * (src/broker/fifo-intake.ts) and records each call, so the test can count
 * the sends a fair queue's messages cost, and make a queue again as the
 * other kind between two sends. The same sends against a real broker,
 * through the AWS SDK, are in test/sqs/sdk-fifo-messages.test.ts.
 */
import { describe, expect, it } from "vitest";
import { HoldshelfError, invalidArgument } from "../../src/errors/holdshelf-error.js";
import type { SqsActionContext } from "../../src/sqs/actions/action-context.js";
import { deleteQueue } from "../../src/sqs/actions/queue-actions.js";
import { QueueKinds } from "../../src/sqs/actions/queue-kinds.js";
import { sendMessage, sendMessageBatch } from "../../src/sqs/actions/send-actions.js";

/** One send as the stand-in broker saw it. */
interface SentEntry {
  readonly group: string | undefined;
  readonly delayed: boolean;
}

interface SendInit {
  readonly messageGroupId?: string;
  readonly delay?: unknown;
}

/** A broker with one queue whose kind the test sets, checking FIFO fields as holdshelf's does. */
function standInBroker(queue: string) {
  const state = { kind: "standard" as "standard" | "fifo", sequence: 0 };
  const sends: { method: string; entries: SentEntry[] }[] = [];
  const check = (entry: SendInit, field: string): string => {
    if (state.kind === "standard") {
      if (entry.messageGroupId === undefined) return "";
      throw new HoldshelfError("NOT_A_FIFO_QUEUE", `${field}message_group_id: only FIFO queues take it`, {
        violations: [{ field: `${field}message_group_id`, description: "only FIFO queues take it" }],
      });
    }
    if (entry.messageGroupId === undefined) {
      throw new HoldshelfError("MESSAGE_GROUP_ID_REQUIRED", `${field}message_group_id: is required`, {
        violations: [{ field: `${field}message_group_id`, description: "is required on a FIFO queue" }],
      });
    }
    if (entry.delay !== undefined) throw invalidArgument(`${field}delay`, "a FIFO queue takes no per-message delay");
    state.sequence += 1;
    return String(state.sequence).padStart(20, "0");
  };
  const seen = (entry: SendInit): SentEntry => ({ group: entry.messageGroupId, delayed: entry.delay !== undefined });
  const call = async (method: string, init: Record<string, unknown>): Promise<unknown> => {
    if (init["queue"] !== undefined && init["queue"] !== queue)
      throw new Error(`unexpected queue ${String(init["queue"])}`);
    if (method === "send") {
      sends.push({ method, entries: [seen(init)] });
      return { messageId: `m${sends.length}`, sequenceNumber: check(init, "") };
    }
    if (method === "sendBatch") {
      const entries = init["entries"] as SendInit[];
      sends.push({ method, entries: entries.map(seen) });
      const sequenceNumbers = entries.map((entry, index) => check(entry, `entries[${index}].`));
      return { messageIds: entries.map((_, index) => `m${sends.length}-${index}`), sequenceNumbers };
    }
    if (method === "getQueue") return { queue: { name: queue, config: { fifo: state.kind === "fifo" } } };
    if (method === "deleteQueue") return {};
    throw new Error(`unexpected call ${method}`);
  };
  const context = { queues: { call }, queueKinds: new QueueKinds(), pathQueue: queue } as unknown as SqsActionContext;
  return { state, sends, context };
}

const withGroup = { MessageBody: "hello", MessageGroupId: "g", MessageDeduplicationId: "d" };

describe("the SQS endpoint's queue kinds", () => {
  it("sends a fair queue's later messages once, without their group, once a send showed the queue standard", async () => {
    const { sends, context } = standInBroker("plain");
    const first = await sendMessage({ MessageBody: "hello", MessageGroupId: "g" }, context);
    const second = await sendMessage({ MessageBody: "hello", MessageGroupId: "g" }, context);
    expect(sends).toEqual([
      { method: "send", entries: [{ group: "g", delayed: false }] },
      { method: "send", entries: [{ group: undefined, delayed: false }] },
      { method: "send", entries: [{ group: undefined, delayed: false }] },
    ]);
    expect([first["SequenceNumber"], second["SequenceNumber"]]).toEqual([undefined, undefined]);
  });

  it("learns a standard queue from a plain send too", async () => {
    const { sends, context } = standInBroker("plain");
    await sendMessage({ MessageBody: "hello" }, context);
    await sendMessageBatch({ Entries: [{ Id: "a", MessageBody: "x", MessageGroupId: "g" }] }, context);
    expect(sends.map(({ entries }) => entries)).toEqual([
      [{ group: undefined, delayed: false }],
      [{ group: undefined, delayed: false }],
    ]);
  });

  it("sends as given when the name was made again as a FIFO queue, and forgets it", async () => {
    const { state, sends, context } = standInBroker("plain");
    await sendMessage({ MessageBody: "hello" }, context);
    state.kind = "fifo";
    const again = await sendMessage(withGroup, context);
    expect(again["SequenceNumber"]).toBe("00000000000000000001");
    const next = await sendMessage(withGroup, context);
    expect(next["SequenceNumber"]).toBe("00000000000000000002");
    expect(sends.map(({ entries }) => entries[0]!.group)).toEqual([undefined, undefined, "g", "g"]);
  });

  it("gives a batch's entries their groups back when the name was made again as a FIFO queue", async () => {
    const { state, sends, context } = standInBroker("plain");
    await sendMessage({ MessageBody: "hello" }, context);
    state.kind = "fifo";
    const answer = await sendMessageBatch(
      {
        Entries: [
          { Id: "a", MessageBody: "x", MessageGroupId: "g1", MessageDeduplicationId: "1" },
          { Id: "b", MessageBody: "y", MessageGroupId: "g2", MessageDeduplicationId: "2" },
        ],
      },
      context,
    );
    expect(answer["Failed"]).toEqual([]);
    expect((answer["Successful"] as { SequenceNumber?: string }[]).map((entry) => entry.SequenceNumber)).toEqual([
      "00000000000000000001",
      "00000000000000000002",
    ]);
    expect(sends.slice(1).map(({ entries }) => entries.map((entry) => entry.group))).toEqual([
      [undefined, undefined],
      ["g1", "g2"],
    ]);
  });

  it("forgets a queue the endpoint deletes", async () => {
    const { state, sends, context } = standInBroker("plain");
    await sendMessage({ MessageBody: "hello" }, context);
    await deleteQueue({}, context);
    state.kind = "fifo";
    await sendMessage(withGroup, context);
    expect(sends.map(({ entries }) => entries[0]!.group)).toEqual([undefined, "g"]);
  });

  it("leaves out DelaySeconds=0 before sending to a queue whose name says FIFO, in one send", async () => {
    const { state, sends, context } = standInBroker("orders.fifo");
    state.kind = "fifo";
    await sendMessage({ ...withGroup, DelaySeconds: 0 }, context);
    await sendMessageBatch({ Entries: [{ Id: "a", ...withGroup, DelaySeconds: 0 }] }, context);
    expect(sends.map(({ entries }) => entries)).toEqual([
      [{ group: "g", delayed: false }],
      [{ group: "g", delayed: false }],
    ]);
  });

  it("still learns a FIFO queue's zero delay from the broker's refusal where its name does not say FIFO", async () => {
    const { state, sends, context } = standInBroker("orders");
    state.kind = "fifo";
    await sendMessage({ ...withGroup, DelaySeconds: 0 }, context);
    expect(sends.map(({ entries }) => entries[0]!.delayed)).toEqual([true, false]);
  });

  it("remembers a bounded number of queues, the oldest forgotten first", () => {
    const kinds = new QueueKinds(2);
    for (const queue of ["a", "b", "c"]) kinds.learnStandard(queue);
    expect(["a", "b", "c"].map((queue) => kinds.isStandard(queue))).toEqual([false, true, true]);
    kinds.forget("b");
    expect(kinds.isStandard("b")).toBe(false);
  });
});
