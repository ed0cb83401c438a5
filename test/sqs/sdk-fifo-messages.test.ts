import { createHash } from "node:crypto";
import {
  ChangeMessageVisibilityBatchCommand,
  ChangeMessageVisibilityCommand,
  CreateQueueCommand,
  DeleteMessageCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  type Message,
  type ReceiveMessageCommandInput,
  type SendMessageCommandInput,
} from "@aws-sdk/client-sqs";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FakeClock } from "../support/fake-clock.js";
import { expectSqsError } from "./expect-sqs-error.js";
import { pollUntil } from "./poll-until.js";
import { startSqsHarness, type SqsHarness } from "./sqs-harness.js";

describe("FIFO queues' messages through @aws-sdk/client-sqs", () => {
  let h: SqsHarness;
  let url: string;
  const clock = new FakeClock();
  beforeEach(async () => {
    h = await startSqsHarness({ clock });
    url = (
      await h.sqs.send(
        new CreateQueueCommand({
          QueueName: "orders.fifo",
          Attributes: { FifoQueue: "true", VisibilityTimeout: "30" },
        }),
      )
    ).QueueUrl!;
  });
  afterEach(async () => {
    await h.stop();
  });

  const send = (MessageBody: string, MessageGroupId: string, input: Partial<SendMessageCommandInput> = {}) =>
    h.sqs.send(
      new SendMessageCommand({
        QueueUrl: url,
        MessageBody,
        MessageGroupId,
        MessageDeduplicationId: MessageBody,
        ...input,
      }),
    );
  const receive = async (max = 10, queueUrl = url): Promise<Message[]> =>
    (
      await h.sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: queueUrl,
          MaxNumberOfMessages: max,
          MessageSystemAttributeNames: ["All"],
        }),
      )
    ).Messages ?? [];
  const bodies = (messages: readonly Message[]): string[] => messages.map((message) => message.Body!);
  const remove = (message: Message) =>
    h.sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: message.ReceiptHandle }));
  const stored = async (): Promise<bigint> => (await h.rpc.getQueue({ name: "orders.fifo" })).queue!.stats!.visible;

  it("delivers a group in send order across redeliveries, one lease at a time", async () => {
    for (const body of ["a1", "a2", "a3"]) await send(body, "a");
    const [first] = await receive(1);
    expect(first!.Body).toBe("a1");
    // The group is locked while a1 is in flight: nothing after it is delivered.
    expect(await receive()).toEqual([]);
    clock.advance(30_001);
    const [again] = await receive(1);
    expect([again!.Body, again!.Attributes!["ApproximateReceiveCount"]]).toEqual(["a1", "2"]);
    // Released early (a failed delivery): still a1 first.
    await h.sqs.send(
      new ChangeMessageVisibilityCommand({ QueueUrl: url, ReceiptHandle: again!.ReceiptHandle, VisibilityTimeout: 0 }),
    );
    const third = await receive();
    expect(bodies(third)).toEqual(["a1", "a2", "a3"]);
    expect(third[0]!.Attributes!["ApproximateReceiveCount"]).toBe("3");
    for (const message of third) await remove(message);
    expect(await receive()).toEqual([]);
  });

  it("keeps groups independent: a locked group holds back only its own messages", async () => {
    await send("x1", "x");
    await send("y1", "y");
    await send("x2", "x");
    await send("y2", "y");
    const [x1] = await receive(1);
    expect(x1!.Body).toBe("x1");
    // x is locked: a receive gets y's messages, in order, and nothing of x.
    const ys = await receive();
    expect(bodies(ys)).toEqual(["y1", "y2"]);
    expect(await receive()).toEqual([]);
    await remove(x1!);
    expect(bodies(await receive())).toEqual(["x2"]);
  });

  it("answers a duplicate within five minutes with the first send's MessageId and SequenceNumber, storing nothing", async () => {
    const first = await send("order 1", "g", { MessageDeduplicationId: "d-1" });
    expect(first.SequenceNumber).toMatch(/^\d{20}$/);
    const repeat = await send("order 1, sent again", "g", { MessageDeduplicationId: "d-1" });
    expect([repeat.MessageId, repeat.SequenceNumber]).toEqual([first.MessageId, first.SequenceNumber]);
    // The digest is of the body this call sent: the SDK checks it against its own.
    expect(repeat.MD5OfMessageBody).toBe(createHash("md5").update("order 1, sent again").digest("hex"));
    expect(await stored()).toBe(1n);
    // Remembered after the message is deleted, for the rest of the window.
    const [message] = await receive();
    await remove(message!);
    clock.advance(299_000);
    expect((await send("order 1", "g", { MessageDeduplicationId: "d-1" })).MessageId).toBe(first.MessageId);
    expect(await stored()).toBe(0n);
    clock.advance(1_001);
    const later = await send("order 1", "g", { MessageDeduplicationId: "d-1" });
    expect(later.MessageId).not.toBe(first.MessageId);
    expect(BigInt(later.SequenceNumber!)).toBeGreaterThan(BigInt(first.SequenceNumber!));
    expect(await stored()).toBe(1n);
  });

  it("deduplicates by the body's SHA-256 with ContentBasedDeduplication; an explicit id wins", async () => {
    const queue = (
      await h.sqs.send(
        new CreateQueueCommand({
          QueueName: "content.fifo",
          Attributes: { FifoQueue: "true", ContentBasedDeduplication: "true" },
        }),
      )
    ).QueueUrl!;
    const sendTo = (MessageBody: string, extra: Partial<SendMessageCommandInput> = {}) =>
      h.sqs.send(new SendMessageCommand({ QueueUrl: queue, MessageBody, MessageGroupId: "g", ...extra }));
    const first = await sendTo("same body");
    expect((await sendTo("same body")).MessageId).toBe(first.MessageId);
    expect((await sendTo("same body", { MessageGroupId: "other-group" })).MessageId).toBe(first.MessageId);
    const explicit = await sendTo("same body", { MessageDeduplicationId: "explicit" });
    expect(explicit.MessageId).not.toBe(first.MessageId);
    const other = await sendTo("another body");
    expect(other.MessageId).not.toBe(first.MessageId);
    const received = await receive(10, queue);
    expect(received.map((message) => [message.Body, message.Attributes!["MessageDeduplicationId"]])).toEqual([
      ["same body", createHash("sha256").update("same body").digest("hex")],
      ["same body", "explicit"],
      ["another body", createHash("sha256").update("another body").digest("hex")],
    ]);
  });

  it("returns MessageGroupId, MessageDeduplicationId and SequenceNumber when asked, and only then", async () => {
    const sent = await send("m", "group-7", { MessageDeduplicationId: "dedup-7" });
    const [all] = await receive();
    expect(all!.Attributes).toMatchObject({
      MessageGroupId: "group-7",
      MessageDeduplicationId: "dedup-7",
      SequenceNumber: sent.SequenceNumber,
    });
    clock.advance(30_001);
    const byName = await h.sqs.send(
      new ReceiveMessageCommand({ QueueUrl: url, AttributeNames: ["SequenceNumber" as never] }),
    );
    expect(byName.Messages![0]!.Attributes).toEqual({ SequenceNumber: sent.SequenceNumber });
    clock.advance(30_001);
    const none = await h.sqs.send(new ReceiveMessageCommand({ QueueUrl: url }));
    expect(none.Messages![0]!.Attributes).toBeUndefined();
  });

  it("sends batches with a SequenceNumber per entry, in order, deduplicating within the batch and failing a delayed entry alone (one without its ids fails the whole batch: sdk-aws-errors.test.ts)", async () => {
    const result = await h.sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: url,
        Entries: [
          { Id: "a", MessageBody: "a", MessageGroupId: "g", MessageDeduplicationId: "a" },
          { Id: "b", MessageBody: "b", MessageGroupId: "g", MessageDeduplicationId: "b", DelaySeconds: 0 },
          { Id: "delayed", MessageBody: "y", MessageGroupId: "g", MessageDeduplicationId: "y", DelaySeconds: 5 },
          { Id: "a-again", MessageBody: "a", MessageGroupId: "g", MessageDeduplicationId: "a" },
          { Id: "c", MessageBody: "c", MessageGroupId: "h", MessageDeduplicationId: "c" },
        ],
      }),
    );
    const byId = Object.fromEntries(result.Successful!.map((entry) => [entry.Id, entry]));
    expect(Object.keys(byId).sort()).toEqual(["a", "a-again", "b", "c"]);
    expect(byId["a-again"]!.MessageId).toBe(byId["a"]!.MessageId);
    expect(byId["a-again"]!.SequenceNumber).toBe(byId["a"]!.SequenceNumber);
    expect(BigInt(byId["b"]!.SequenceNumber!)).toBeGreaterThan(BigInt(byId["a"]!.SequenceNumber!));
    expect(Object.fromEntries(result.Failed!.map((entry) => [entry.Id, [entry.Code, entry.SenderFault]]))).toEqual({
      delayed: ["InvalidParameterValue", true],
    });
    expect(bodies(await receive())).toEqual(["a", "b", "c"]);
  });

  it("refuses sends SQS refuses, with SQS's error codes, storing nothing", async () => {
    const plain = (await h.sqs.send(new CreateQueueCommand({ QueueName: "plain" }))).QueueUrl!;
    const sendTo = (input: Partial<SendMessageCommandInput>) =>
      h.sqs.send(
        new SendMessageCommand({
          QueueUrl: url,
          MessageBody: "b",
          MessageGroupId: "g",
          MessageDeduplicationId: "d",
          ...input,
        }),
      );
    await expectSqsError(
      sendTo({ MessageGroupId: undefined }),
      "MissingParameter",
      400,
      /The request must contain the parameter MessageGroupId/,
    );
    await expectSqsError(sendTo({ MessageGroupId: "" }), "MissingParameter", 400, /MessageGroupId/);
    await expectSqsError(
      sendTo({ MessageDeduplicationId: undefined }),
      "InvalidParameterValue",
      400,
      /The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly/,
    );
    await expectSqsError(
      sendTo({ DelaySeconds: 5 }),
      "InvalidParameterValue",
      400,
      /Value 5 for parameter DelaySeconds is invalid.*not valid for this queue type/,
    );
    await expectSqsError(
      sendTo({ MessageGroupId: "has space" }),
      "InvalidParameterValue",
      400,
      /parameter MessageGroupId is invalid/,
    );
    await expectSqsError(
      sendTo({ MessageDeduplicationId: "x".repeat(129) }),
      "InvalidParameterValue",
      400,
      /parameter MessageDeduplicationId is invalid/,
    );
    expect(await stored()).toBe(0n);
    const standard = (input: Partial<SendMessageCommandInput>) =>
      h.sqs.send(new SendMessageCommand({ QueueUrl: plain, MessageBody: "b", ...input }));
    // A group alone is a fair queue's send (SQS since 2025): stored, the group dropped; with a deduplication id it stays refused.
    await expect(standard({ MessageGroupId: "g" })).resolves.toMatchObject({ MessageId: expect.any(String) });
    await expectSqsError(
      standard({ MessageGroupId: "g", MessageDeduplicationId: "d" }),
      "InvalidParameterValue",
      400,
      /MessageDeduplicationId is invalid/,
    );
    await expectSqsError(
      standard({ MessageDeduplicationId: "d" }),
      "InvalidParameterValue",
      400,
      /parameter MessageDeduplicationId is invalid.*not valid for this queue type/,
    );
    // Only the fair queue's send was stored, and it was received as a standard message, without a group.
    expect((await h.rpc.getQueue({ name: "plain" })).queue!.stats!.visible).toBe(1n);
    const [fair] = (await h.rpc.receive({ queue: "plain" })).messages;
    expect(fair!.messageGroupId).toBe("");
  });

  it("sends a fair queue's group to a queue of that name made again as a FIFO queue, which the endpoint knew as standard", async () => {
    const plain = (await h.sqs.send(new CreateQueueCommand({ QueueName: "plain" }))).QueueUrl!;
    const fair = () => h.sqs.send(new SendMessageCommand({ QueueUrl: plain, MessageBody: "b", MessageGroupId: "g" }));
    // Twice: the endpoint now knows "plain" as a standard queue, and drops the group before sending.
    await fair();
    expect((await fair()).SequenceNumber).toBeUndefined();
    // Made again over gRPC as a FIFO queue without the suffix (only SQS needs it): the group must reach it.
    await h.rpc.deleteQueue({ name: "plain" });
    await h.rpc.createQueue({ name: "plain", config: { fifo: true, contentBasedDeduplication: true } });
    expect((await fair()).SequenceNumber).toMatch(/^\d{20}$/);
    const [message] = (await h.rpc.receive({ queue: "plain" })).messages;
    expect(message!.messageGroupId).toBe("g");
  });

  it("takes DelaySeconds=0 on a FIFO queue as SQS does: ignored, the queue's own delay applies", async () => {
    const delayed = (
      await h.sqs.send(
        new CreateQueueCommand({ QueueName: "slow.fifo", Attributes: { FifoQueue: "true", DelaySeconds: "10" } }),
      )
    ).QueueUrl!;
    const sent = await h.sqs.send(
      new SendMessageCommand({
        QueueUrl: delayed,
        MessageBody: "m",
        MessageGroupId: "g",
        MessageDeduplicationId: "d",
        DelaySeconds: 0,
      }),
    );
    expect(sent.SequenceNumber).toMatch(/^\d{20}$/);
    expect(await receive(10, delayed)).toEqual([]);
    clock.advance(10_000);
    expect(bodies(await receive(10, delayed))).toEqual(["m"]);
  });

  it("applies the FIFO delay rule to a FIFO queue made over gRPC without the .fifo suffix, and not to a standard one", async () => {
    await h.rpc.createQueue({ name: "grpc-fifo", config: { fifo: true } });
    const fifo = h.urlOf("grpc-fifo");
    const sendTo = (QueueUrl: string, DelaySeconds: number, MessageGroupId?: string) =>
      h.sqs.send(
        new SendMessageCommand({
          QueueUrl,
          MessageBody: `after ${DelaySeconds}`,
          MessageGroupId,
          MessageDeduplicationId: MessageGroupId,
          DelaySeconds,
        }),
      );
    expect((await sendTo(fifo, 0, "g")).SequenceNumber).toMatch(/^\d{20}$/);
    await expectSqsError(
      sendTo(fifo, 900, "h"),
      "InvalidParameterValue",
      400,
      /Value 900 for parameter DelaySeconds is invalid.*not valid for this queue type/,
    );
    const batch = await h.sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: fifo,
        Entries: [
          { Id: "zero", MessageBody: "z", MessageGroupId: "b", MessageDeduplicationId: "z", DelaySeconds: 0 },
          { Id: "five", MessageBody: "f", MessageGroupId: "b", MessageDeduplicationId: "f", DelaySeconds: 5 },
        ],
      }),
    );
    expect(batch.Successful!.map((entry) => entry.Id)).toEqual(["zero"]);
    expect(batch.Failed!.map((entry) => [entry.Id, entry.Code, entry.Message])).toEqual([
      [
        "five",
        "InvalidParameterValue",
        expect.stringMatching(/Value 5 for parameter DelaySeconds .*not valid for this queue type/),
      ],
    ]);
    // A standard queue's delay past its retention is refused as the broker's bound, not as a FIFO rule.
    await h.sqs.send(new CreateQueueCommand({ QueueName: "short", Attributes: { MessageRetentionPeriod: "60" } }));
    await expectSqsError(
      sendTo(h.urlOf("short"), 900),
      "InvalidParameterValue",
      400,
      /^Value for parameter DelaySeconds is invalid. Reason: DelaySeconds must be/,
    );
  });

  describe("ReceiveRequestAttemptId", () => {
    const receiveAttempt = async (
      attemptId: string,
      input: Partial<ReceiveMessageCommandInput> = {},
    ): Promise<Message[]> =>
      (
        await h.sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: url,
            MaxNumberOfMessages: 2,
            MessageSystemAttributeNames: ["All"],
            ReceiveRequestAttemptId: attemptId,
            ...input,
          }),
        )
      ).Messages ?? [];
    const handles = (messages: readonly Message[]) => messages.map((message) => message.ReceiptHandle);
    const receiveMessageRequests = async (): Promise<number> => {
      const { values } = await h.server.metrics.getSingleMetric("sqs_server_started_total")!.get();
      return values.find((value) => value.labels["sqs_action"] === "ReceiveMessage")?.value ?? 0;
    };

    it("answers a retried receive with the same messages and receipt handles, and renews their leases", async () => {
      for (const body of ["a1", "a2", "a3"]) await send(body, "a");
      const first = await receiveAttempt("attempt-1");
      expect(bodies(first)).toEqual(["a1", "a2"]);
      clock.advance(20_000);
      const retry = await receiveAttempt("attempt-1");
      expect(handles(retry)).toEqual(handles(first));
      expect(retry.map((message) => message.Attributes!["ApproximateReceiveCount"])).toEqual(["1", "1"]);
      // Renewed for the queue's 30 s at the retry: still leased 40 s after the first receive...
      clock.advance(20_000);
      expect(await receive()).toEqual([]);
      // ...and back once 30 s have passed since the retry.
      clock.advance(10_001);
      expect(bodies(await receive())).toEqual(["a1", "a2", "a3"]);
    });

    it("renews for the retry's own VisibilityTimeout when it gives one", async () => {
      await send("b1", "b");
      await receiveAttempt("attempt-v", { VisibilityTimeout: 5 });
      clock.advance(4_000);
      expect(bodies(await receiveAttempt("attempt-v", { VisibilityTimeout: 60 }))).toEqual(["b1"]);
      clock.advance(59_000);
      expect(await receive()).toEqual([]);
      clock.advance(1_001);
      expect(bodies(await receive())).toEqual(["b1"]);
    });

    it("is a new receive once one of the answer's messages was deleted, even where the endpoint did not see it", async () => {
      for (const body of ["c1", "c2", "c3"]) await send(body, "c");
      const first = await receiveAttempt("attempt-2");
      // Deleted over gRPC: the retry's renewal finds c1 gone.
      await h.rpc.delete({ queue: "orders.fifo", receiptHandle: first[0]!.ReceiptHandle! });
      // c2's lease is still held, but the answer is no longer whole: the retry
      // is a new receive, and the group stays locked by c2.
      expect(await receiveAttempt("attempt-2")).toEqual([]);
      await remove(first[1]!);
      expect(bodies(await receiveAttempt("attempt-2"))).toEqual(["c3"]);
    });

    it("is a new receive once the answer's lease ran out and another consumer has the message", async () => {
      await send("e1", "e");
      await receiveAttempt("attempt-3", { VisibilityTimeout: 5 });
      clock.advance(5_001);
      const [again] = await receive(1);
      expect(again!.Body).toBe("e1");
      expect(await receiveAttempt("attempt-3")).toEqual([]);
    });

    it("repeats an answer whose leases are at the queue's max_lease_duration without extending them", async () => {
      await h.rpc.createQueue({
        name: "capped.fifo",
        config: { fifo: true, visibilityTimeout: durationFromMs(60_000), maxLeaseDuration: durationFromMs(60_000) },
      });
      const capped = h.urlOf("capped.fifo");
      await send("k1", "k", { QueueUrl: capped });
      const first = await receiveAttempt("attempt-10", { QueueUrl: capped });
      clock.advance(10_000);
      expect(handles(await receiveAttempt("attempt-10", { QueueUrl: capped }))).toEqual(handles(first));
      // Not extended past the cap: back at 60 s after the receive, as a redelivery.
      clock.advance(50_001);
      const [again] = await receiveAttempt("attempt-10", { QueueUrl: capped });
      expect([again!.Body, again!.Attributes!["ApproximateReceiveCount"]]).toEqual(["k1", "2"]);
    });

    it("gives concurrent retries of a changed attempt one new receive, not one each", async () => {
      await send("l1", "l");
      const [first] = await receiveAttempt("attempt-11");
      await h.rpc.delete({ queue: "orders.fifo", receiptHandle: first!.ReceiptHandle! });
      await send("l2", "l");
      const [a, b] = await Promise.all([receiveAttempt("attempt-11"), receiveAttempt("attempt-11")]);
      expect(bodies(a)).toEqual(["l2"]);
      expect(handles(b)).toEqual(handles(a));
    });

    it("is a new receive, counted as a redelivery, once the answer's leases ran out", async () => {
      await send("h1", "h");
      await receiveAttempt("attempt-8");
      clock.advance(30_001);
      const [again] = await receiveAttempt("attempt-8");
      expect([again!.Body, again!.Attributes!["ApproximateReceiveCount"]]).toEqual(["h1", "2"]);
    });

    it("is a new receive once the consumer released one of the answer's messages", async () => {
      for (const body of ["i1", "i2"]) await send(body, "i");
      const first = await receiveAttempt("attempt-9");
      await h.sqs.send(
        new ChangeMessageVisibilityBatchCommand({
          QueueUrl: url,
          Entries: [{ Id: "0", ReceiptHandle: first[1]!.ReceiptHandle, VisibilityTimeout: 0 }],
        }),
      );
      // i1 is still leased to the first answer: the new receive finds the group locked.
      expect(await receiveAttempt("attempt-9")).toEqual([]);
      await remove(first[0]!);
      expect(bodies(await receiveAttempt("attempt-9"))).toEqual(["i2"]);
    });

    it("is a new receive after five minutes, and for another attempt id", async () => {
      await send("d1", "d");
      await send("e1", "e");
      const hours = { MaxNumberOfMessages: 1, VisibilityTimeout: 43_200 };
      const [first] = await receiveAttempt("attempt-4", hours);
      expect(bodies(await receiveAttempt("attempt-5", hours))).toEqual([first!.Body === "d1" ? "e1" : "d1"]);
      clock.advance(5 * 60_000);
      // Both groups are still leased: the retry, a new receive now, finds nothing.
      expect(await receiveAttempt("attempt-4", hours)).toEqual([]);
    });

    it("shares the answer of a first receive still long-polling with a retry made meanwhile", async () => {
      const receivesBefore = await receiveMessageRequests();
      const first = receiveAttempt("attempt-6", { WaitTimeSeconds: 20 });
      const retry = receiveAttempt("attempt-6", { WaitTimeSeconds: 20 });
      // The endpoint counts a request as it starts it, in the same turn in which
      // the request takes or finds its attempt: once both are counted, both wait.
      await pollUntil(receiveMessageRequests, (count) => count === receivesBefore + 2);
      await send("f1", "f");
      // A retry that polled on its own would wait on the fake clock forever:
      // f1's group is locked by the first receive.
      const [a, b] = await Promise.all([first, retry]);
      expect(bodies(a)).toEqual(["f1"]);
      expect(handles(b)).toEqual(handles(a));
    });

    it("is ignored on standard queues: receives with one id are separate, and never share messages", async () => {
      const standard = (await h.sqs.send(new CreateQueueCommand({ QueueName: "plain" }))).QueueUrl!;
      const poll = () => receiveAttempt("attempt-7", { QueueUrl: standard, WaitTimeSeconds: 20 });
      const polls = [poll(), poll()];
      await pollUntil(
        async () => h.waitingReceives(),
        (waiting) => waiting === 2,
      );
      await h.sqs.send(new SendMessageCommand({ QueueUrl: standard, MessageBody: "p1" }));
      await pollUntil(
        async () => h.waitingReceives(),
        (waiting) => waiting === 1,
      );
      clock.advance(20_000);
      expect((await Promise.all(polls)).flatMap(bodies)).toEqual(["p1"]);
      // An id SQS would refuse on a FIFO queue is ignored here too.
      expect(await receiveAttempt("has space", { QueueUrl: standard })).toEqual([]);
    });

    it("refuses an id SQS would refuse with InvalidParameterValue, receiving nothing", async () => {
      await send("g1", "g");
      for (const attemptId of ["has space", "x".repeat(129)]) {
        await expectSqsError(receiveAttempt(attemptId), "InvalidParameterValue", 400, /ReceiveRequestAttemptId/);
      }
      expect(bodies(await receive())).toEqual(["g1"]);
    });
  });
});
