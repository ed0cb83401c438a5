import {
  ChangeMessageVisibilityBatchCommand,
  ChangeMessageVisibilityCommand,
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  DeleteMessageCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  SetQueueAttributesCommand,
  type MessageAttributeValue,
} from "@aws-sdk/client-sqs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { md5OfMessageAttributes } from "../../src/sqs/message-digests.js";
import { FakeClock } from "../support/fake-clock.js";
import { expectSqsError } from "./expect-sqs-error.js";
import { startSqsHarness, type SqsHarness } from "./sqs-harness.js";

const attributesOfEveryType: Record<string, MessageAttributeValue> = {
  plain: { DataType: "String", StringValue: "hello, wörld ✓" },
  count: { DataType: "Number", StringValue: "-12.5e3" },
  id: { DataType: "Number.int", StringValue: "42" },
  raw: { DataType: "Binary", BinaryValue: Uint8Array.of(0, 1, 2, 255) },
  zipped: { DataType: "Binary.gzip", BinaryValue: Uint8Array.of(31, 139) },
  label: { DataType: "String.label", StringValue: "x" },
};

describe("SQS message actions through @aws-sdk/client-sqs (MD5 checks on)", () => {
  let h: SqsHarness;
  let url: string;
  const clock = new FakeClock();
  beforeEach(async () => {
    h = await startSqsHarness({ clock });
    url = (await h.sqs.send(new CreateQueueCommand({ QueueName: "work", Attributes: { VisibilityTimeout: "30" } })))
      .QueueUrl!;
  });
  afterEach(async () => {
    await h.stop();
  });

  it("sends and receives a message with attributes of every type, kept exactly, with digests the SDK verifies", async () => {
    const body = 'quotes " and <tags> & CR\r\nLF, ünïcödé, emoji 🎉';
    const sent = await h.sqs.send(
      new SendMessageCommand({ QueueUrl: url, MessageBody: body, MessageAttributes: attributesOfEveryType }),
    );
    expect(sent.MD5OfMessageAttributes).toBe(md5OfMessageAttributes(attributesOfEveryType as never));
    const { Messages } = await h.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: url,
        MessageAttributeNames: ["All"],
        MessageSystemAttributeNames: ["All"],
      }),
    );
    expect(Messages).toHaveLength(1);
    const [message] = Messages!;
    expect(message!.MessageId).toBe(sent.MessageId);
    expect(message!.Body).toBe(body);
    expect(message!.MD5OfMessageAttributes).toBe(sent.MD5OfMessageAttributes);
    expect(message!.MessageAttributes).toEqual(attributesOfEveryType);
    expect(message!.Attributes).toEqual({
      SenderId: "000000000000",
      SentTimestamp: String(clock.now()),
      ApproximateReceiveCount: "1",
      ApproximateFirstReceiveTimestamp: String(clock.now()),
    });
  });

  it("matches the published MD5OfMessageAttributes test vector", () => {
    expect(md5OfMessageAttributes({ attribName1: { DataType: "String", StringValue: "attribValue 1" } })).toBe(
      "19e27d4e946b072f3f58da80d94fd778",
    );
  });

  it("returns only the message attributes asked for, by name or prefix, with the digest of those", async () => {
    await h.sqs.send(
      new SendMessageCommand({
        QueueUrl: url,
        MessageBody: "m",
        MessageAttributes: {
          "trace.id": { DataType: "String", StringValue: "t" },
          "trace.span": { DataType: "String", StringValue: "s" },
          other: { DataType: "Number", StringValue: "1" },
        },
      }),
    );
    const { Messages } = await h.sqs.send(
      new ReceiveMessageCommand({ QueueUrl: url, MessageAttributeNames: ["trace.*"] }),
    );
    const expected = {
      "trace.id": { DataType: "String", StringValue: "t" },
      "trace.span": { DataType: "String", StringValue: "s" },
    };
    expect(Messages![0]!.MessageAttributes).toEqual(expected);
    expect(Messages![0]!.MD5OfMessageAttributes).toBe(md5OfMessageAttributes(expected));
    expect(Messages![0]!.Attributes).toBeUndefined();
  });

  it("reads attribute name wildcards as AWS does: *, .* and All are every one, Hel.* a prefix without the dot", async () => {
    // AWS's recorded case (LocalStack's test_receive_message_message_attribute_names_filters).
    const attributes = {
      "Help.Me": { DataType: "String", StringValue: "Me" },
      Hello: { DataType: "String", StringValue: "There" },
      General: { DataType: "String", StringValue: "Kenobi" },
    };
    await h.sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "msg", MessageAttributes: attributes }));
    const namesOf = async (names: string[]) => {
      const { Messages } = await h.sqs.send(
        new ReceiveMessageCommand({ QueueUrl: url, MessageAttributeNames: names, VisibilityTimeout: 0 }),
      );
      return Messages![0]!.MessageAttributes;
    };
    expect(await namesOf(["*"])).toEqual(attributes);
    expect(await namesOf([".*"])).toEqual(attributes);
    expect(await namesOf(["All"])).toEqual(attributes);
    expect(await namesOf(["Hel.*"])).toEqual({ "Help.Me": attributes["Help.Me"], Hello: attributes.Hello });
    expect(await namesOf(["Help.*"])).toEqual({ "Help.Me": attributes["Help.Me"] });
    expect(await namesOf(["Foo", "Hello"])).toEqual({ Hello: attributes.Hello });
    expect(await namesOf(["Foo", "Help"])).toBeUndefined();
  });

  it("refuses bad message attributes and bodies with SQS's errors, storing nothing", async () => {
    const send = (input: Partial<ConstructorParameters<typeof SendMessageCommand>[0]>) =>
      h.sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "b", ...input }));
    const eleven = Object.fromEntries(
      Array.from({ length: 11 }, (_, i) => [`a${i}`, { DataType: "String", StringValue: "v" }]),
    );
    await expectSqsError(send({ MessageAttributes: eleven }), "InvalidParameterValue", 400, /\[11\] exceeds/);
    await expectSqsError(
      send({ MessageAttributes: { "AWS.x": { DataType: "String", StringValue: "v" } } }),
      "InvalidParameterValue",
      400,
    );
    await expectSqsError(
      send({ MessageAttributes: { "a..b": { DataType: "String", StringValue: "v" } } }),
      "InvalidParameterValue",
      400,
    );
    await expectSqsError(
      send({ MessageAttributes: { n: { DataType: "Number", StringValue: "twelve" } } }),
      "InvalidParameterValue",
      400,
      /number/,
    );
    await expectSqsError(
      send({ MessageAttributes: { n: { DataType: "Float", StringValue: "1" } } }),
      "InvalidParameterValue",
      400,
      /type/,
    );
    // A long digit run that is no number: refused at once (a pattern that backtracked took minutes, the test's timeout catches it).
    await expectSqsError(
      send({ MessageAttributes: { n: { DataType: "Number", StringValue: `${"1".repeat(200_000)}x` } } }),
      "InvalidParameterValue",
      400,
      /number/,
    );
    await expectSqsError(
      send({ MessageAttributes: { n: { DataType: "String", StringValue: "" } } }),
      "InvalidParameterValue",
      400,
    );
    await expectSqsError(
      send({ MessageAttributes: { n: { DataType: "Binary", StringValue: "x" } } }),
      "InvalidParameterValue",
      400,
      /Binary/,
    );
    await expectSqsError(send({ MessageBody: "bad \u0001 char" }), "InvalidMessageContents", 400);
    await expectSqsError(send({ MessageBody: "" }), "MissingParameter", 400);
    await expectSqsError(send({ DelaySeconds: 901 }), "InvalidParameterValue", 400);
    await expectSqsError(
      send({ MessageDeduplicationId: "d" }),
      "InvalidParameterValue",
      400,
      /MessageDeduplicationId .*not valid for this queue type/,
    );
    await expectSqsError(send({ MessageBody: "x".repeat(1_048_577) }), "InvalidParameterValue", 400);
    await expectSqsError(send({ QueueUrl: h.urlOf("absent") }), "AWS.SimpleQueueService.NonExistentQueue", 400);
    expect((await h.rpc.getQueue({ name: "work" })).queue!.stats!.visible).toBe(0n);
  });

  it("sends batches entry by entry: bad entries fail, the rest are stored", async () => {
    // Under the default 1 MiB an entry too large would make the whole batch too long (BatchRequestTooLong).
    await h.sqs.send(new SetQueueAttributesCommand({ QueueUrl: url, Attributes: { MaximumMessageSize: "262144" } }));
    const result = await h.sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: url,
        Entries: [
          { Id: "ok-1", MessageBody: "one", MessageAttributes: { n: { DataType: "Number", StringValue: "1" } } },
          { Id: "bad_chars", MessageBody: "\u0000" },
          { Id: "too-big", MessageBody: "x".repeat(262_145) },
          { Id: "ok-2", MessageBody: "two", DelaySeconds: 0 },
        ],
      }),
    );
    expect(result.Successful!.map((entry) => entry.Id)).toEqual(["ok-1", "ok-2"]);
    expect(result.Failed!.map((entry) => [entry.Id, entry.Code, entry.SenderFault])).toEqual([
      ["bad_chars", "InvalidMessageContents", true],
      ["too-big", "InvalidParameterValue", true],
    ]);
    const { Messages } = await h.sqs.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10 }));
    expect(Messages!.map((message) => message.Body)).toEqual(["one", "two"]);
  });

  it("refuses whole batches SQS refuses", async () => {
    const entry = (Id: string) => ({ Id, MessageBody: "b" });
    await expectSqsError(
      h.sqs.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: [] })),
      "AWS.SimpleQueueService.EmptyBatchRequest",
      400,
    );
    await expectSqsError(
      h.sqs.send(
        new SendMessageBatchCommand({ QueueUrl: url, Entries: Array.from({ length: 11 }, (_, i) => entry(`e${i}`)) }),
      ),
      "AWS.SimpleQueueService.TooManyEntriesInBatchRequest",
      400,
    );
    await expectSqsError(
      h.sqs.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: [entry("a"), entry("a")] })),
      "AWS.SimpleQueueService.BatchEntryIdsNotDistinct",
      400,
    );
    await expectSqsError(
      h.sqs.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: [entry("no spaces")] })),
      "AWS.SimpleQueueService.InvalidBatchEntryId",
      400,
    );
    await expectSqsError(
      h.sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: url,
          Entries: Array.from({ length: 5 }, (_, i) => ({ Id: `e${i}`, MessageBody: "x".repeat(250_000) })),
        }),
      ),
      "AWS.SimpleQueueService.BatchRequestTooLong",
      400,
    );
    expect((await h.rpc.getQueue({ name: "work" })).queue!.stats!.visible).toBe(0n);
  });

  it("deletes by receipt handle: a superseded handle succeeds without deleting, a malformed one is ReceiptHandleIsInvalid", async () => {
    await h.sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "m" }));
    const first = (await h.sqs.send(new ReceiveMessageCommand({ QueueUrl: url, VisibilityTimeout: 1 }))).Messages![0]!;
    clock.advance(1500);
    const second = (await h.sqs.send(new ReceiveMessageCommand({ QueueUrl: url }))).Messages![0]!;
    expect(second.ReceiptHandle).not.toBe(first.ReceiptHandle);
    await h.sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: first.ReceiptHandle }));
    expect((await h.rpc.getQueue({ name: "work" })).queue!.stats!.inFlight).toBe(1n);
    await expectSqsError(
      h.sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: "garbage" })),
      "ReceiptHandleIsInvalid",
      400,
      /"garbage" is not a valid receipt handle/,
    );
    await h.sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: second.ReceiptHandle }));
    expect((await h.rpc.getQueue({ name: "work" })).queue!.stats!.inFlight).toBe(0n);
    // Deleting again is safe, as in SQS.
    await h.sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: second.ReceiptHandle }));
  });

  it("deletes batches with partial failures", async () => {
    await h.sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: url,
        Entries: [
          { Id: "a", MessageBody: "a" },
          { Id: "b", MessageBody: "b" },
        ],
      }),
    );
    const { Messages } = await h.sqs.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10 }));
    const result = await h.sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: url,
        Entries: [
          { Id: "first", ReceiptHandle: Messages![0]!.ReceiptHandle },
          { Id: "forged", ReceiptHandle: "forged-handle" },
          { Id: "second", ReceiptHandle: Messages![1]!.ReceiptHandle },
        ],
      }),
    );
    expect(result.Successful!.map((entry) => entry.Id)).toEqual(["first", "second"]);
    expect(result.Failed!.map((entry) => [entry.Id, entry.Code, entry.SenderFault])).toEqual([
      ["forged", "ReceiptHandleIsInvalid", true],
    ]);
    expect((await h.rpc.getQueue({ name: "work" })).queue!.stats).toMatchObject({ visible: 0n, inFlight: 0n });
  });

  it("changes visibility: hides, releases, and answers stale or deleted handles as SQS does", async () => {
    await h.sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "m" }));
    const leased = (await h.sqs.send(new ReceiveMessageCommand({ QueueUrl: url }))).Messages![0]!;
    await h.sqs.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: url,
        ReceiptHandle: leased.ReceiptHandle,
        VisibilityTimeout: 100,
      }),
    );
    clock.advance(60_000);
    expect((await h.sqs.send(new ReceiveMessageCommand({ QueueUrl: url }))).Messages).toBeUndefined();
    await h.sqs.send(
      new ChangeMessageVisibilityCommand({ QueueUrl: url, ReceiptHandle: leased.ReceiptHandle, VisibilityTimeout: 0 }),
    );
    const again = (await h.sqs.send(new ReceiveMessageCommand({ QueueUrl: url }))).Messages![0]!;
    expect(again.MessageId).toBe(leased.MessageId);
    // The superseded handle succeeds, as in SQS, and changes nothing: releasing with it leaves the message hidden.
    await h.sqs.send(
      new ChangeMessageVisibilityCommand({ QueueUrl: url, ReceiptHandle: leased.ReceiptHandle, VisibilityTimeout: 0 }),
    );
    expect((await h.sqs.send(new ReceiveMessageCommand({ QueueUrl: url }))).Messages).toBeUndefined();
    await expectSqsError(
      h.sqs.send(
        new ChangeMessageVisibilityCommand({
          QueueUrl: url,
          ReceiptHandle: again.ReceiptHandle,
          VisibilityTimeout: 43_201,
        }),
      ),
      "InvalidParameterValue",
      400,
    );
    // 12 hours after the receive is the limit, as in SQS: up to it is fine, past it is refused.
    await h.sqs.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: url,
        ReceiptHandle: again.ReceiptHandle,
        VisibilityTimeout: 43_200,
      }),
    );
    clock.advance(1000);
    await expectSqsError(
      h.sqs.send(
        new ChangeMessageVisibilityCommand({
          QueueUrl: url,
          ReceiptHandle: again.ReceiptHandle,
          VisibilityTimeout: 43_200,
        }),
      ),
      "InvalidParameterValue",
      400,
      /beyond the limit/,
    );
    await h.sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: again.ReceiptHandle }));
    await expectSqsError(
      h.sqs.send(
        new ChangeMessageVisibilityCommand({
          QueueUrl: url,
          ReceiptHandle: again.ReceiptHandle,
          VisibilityTimeout: 10,
        }),
      ),
      "InvalidParameterValue",
      400,
      /Message does not exist or is not available for visibility timeout change/,
    );
    await expectSqsError(
      h.sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: url, ReceiptHandle: "junk", VisibilityTimeout: 10 })),
      "ReceiptHandleIsInvalid",
      400,
    );
  });

  it("changes visibility in batches, each entry with its own timeout, with partial failures", async () => {
    await h.sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: url,
        Entries: [
          { Id: "a", MessageBody: "a" },
          { Id: "b", MessageBody: "b" },
        ],
      }),
    );
    const { Messages } = await h.sqs.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10 }));
    const result = await h.sqs.send(
      new ChangeMessageVisibilityBatchCommand({
        QueueUrl: url,
        Entries: [
          { Id: "short", ReceiptHandle: Messages![0]!.ReceiptHandle, VisibilityTimeout: 0 },
          { Id: "bad", ReceiptHandle: "nope", VisibilityTimeout: 5 },
          { Id: "long", ReceiptHandle: Messages![1]!.ReceiptHandle, VisibilityTimeout: 300 },
        ],
      }),
    );
    expect(result.Successful!.map((entry) => entry.Id)).toEqual(["short", "long"]);
    expect(result.Failed!.map((entry) => [entry.Id, entry.Code])).toEqual([["bad", "ReceiptHandleIsInvalid"]]);
    clock.advance(100_000);
    const visible = await h.sqs.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10 }));
    expect(visible.Messages!.map((message) => message.Body)).toEqual(["a"]);
  });

  it("refuses receive parameters out of SQS's bounds", async () => {
    await expectSqsError(
      h.sqs.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 11 })),
      "InvalidParameterValue",
      400,
    );
    await expectSqsError(
      h.sqs.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 0 })),
      "InvalidParameterValue",
      400,
    );
    await expectSqsError(
      h.sqs.send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 21 })),
      "InvalidParameterValue",
      400,
    );
    await expectSqsError(
      h.sqs.send(new ReceiveMessageCommand({ QueueUrl: url, VisibilityTimeout: -1 })),
      "InvalidParameterValue",
      400,
    );
    await expectSqsError(
      h.sqs.send(new ReceiveMessageCommand({ QueueUrl: url, MessageSystemAttributeNames: ["Bogus" as never] })),
      "InvalidAttributeName",
      400,
    );
  });
});
