/**
 * The answers AWS words its own way, as AWS recorded them (LocalStack's
 * test_sqs.snapshot.json; moto where AWS's are not recorded), through
 * @aws-sdk/client-sqs (JSON protocol): code, HTTP status and exact message.
 * test/sqs/python/test_boto3_aws_errors.py checks the same over the query protocol.
 */
import {
  ChangeMessageVisibilityBatchCommand,
  ChangeMessageVisibilityCommand,
  CreateQueueCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  TagQueueCommand,
  UntagQueueCommand,
} from "@aws-sdk/client-sqs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FakeClock } from "../support/fake-clock.js";
import { expectSqsError } from "./expect-sqs-error.js";
import { startSqsHarness, type SqsHarness } from "./sqs-harness.js";

/** A pattern matching exactly `text`. */
const exactly = (text: string): RegExp => new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`);

const badName = exactly("Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length");

describe("AWS's recorded error answers through @aws-sdk/client-sqs", () => {
  let h: SqsHarness;
  const clock = new FakeClock();
  beforeEach(async () => {
    h = await startSqsHarness({ clock });
  });
  afterEach(async () => {
    await h.stop();
  });

  const createQueue = async (name: string, attributes: Record<string, string> = {}): Promise<string> =>
    (await h.sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }))).QueueUrl!;
  const stored = async (name: string): Promise<bigint> => {
    const { visible, inFlight, delayed } = (await h.rpc.getQueue({ name })).queue!.stats!;
    return visible + inFlight + delayed;
  };

  it("refuses an oversize message naming the queue's limit, for SendMessage and for a batch entry", async () => {
    const url = await createQueue("small", { MaximumMessageSize: "1024" });
    await expectSqsError(
      h.sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "a".repeat(1025) })),
      "InvalidParameterValue",
      400,
      exactly("One or more parameters are invalid. Reason: Message must be shorter than 1024 bytes."),
    );
    const batch = await h.sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: url,
        Entries: [
          { Id: "fits", MessageBody: "a".repeat(1024) },
          { Id: "over", MessageBody: "a".repeat(1025) },
        ],
      }),
    );
    expect(batch.Successful!.map((entry) => entry.Id)).toEqual(["fits"]);
    expect(batch.Failed).toEqual([
      {
        Id: "over",
        SenderFault: true,
        Code: "InvalidParameterValue",
        Message: "One or more parameters cannot be validated. Reason: Message must be shorter than 1024 bytes.",
      },
    ]);
    // A queue created without the attribute: the message names its default, whatever that is.
    const plain = await createQueue("plain");
    const { Attributes } = await h.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: plain, AttributeNames: ["MaximumMessageSize"] }),
    );
    const limit = Number(Attributes!["MaximumMessageSize"]);
    await expectSqsError(
      h.sqs.send(new SendMessageCommand({ QueueUrl: plain, MessageBody: "a".repeat(limit + 1) })),
      "InvalidParameterValue",
      400,
      exactly(`One or more parameters are invalid. Reason: Message must be shorter than ${limit} bytes.`),
    );
  });

  it("takes a bare queue name as QueueUrl, and answers an unknown one as AWS does on JSON", async () => {
    await createQueue("named");
    await h.sqs.send(new SendMessageCommand({ QueueUrl: "named", MessageBody: "by name" }));
    const [message] = (await h.sqs.send(new ReceiveMessageCommand({ QueueUrl: "named" }))).Messages!;
    expect(message!.Body).toBe("by name");
    await h.sqs.send(new DeleteMessageCommand({ QueueUrl: "named", ReceiptHandle: message!.ReceiptHandle }));
    expect(await stored("named")).toBe(0n);
    await expectSqsError(
      h.sqs.send(new SendMessageCommand({ QueueUrl: "absent", MessageBody: "b" })),
      "AWS.SimpleQueueService.NonExistentQueue",
      400,
      exactly("The specified queue does not exist."),
    );
  });

  it("fails a whole FIFO batch, storing nothing, when an entry lacks its group or a needed deduplication id", async () => {
    const url = await createQueue("jobs.fifo", { FifoQueue: "true", ContentBasedDeduplication: "false" });
    await expectSqsError(
      h.sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: url,
          Entries: [
            { Id: "whole", MessageBody: "b", MessageGroupId: "g", MessageDeduplicationId: "d1" },
            { Id: "groupless", MessageBody: "b", MessageDeduplicationId: "d2" },
          ],
        }),
      ),
      "InvalidParameterValue",
      400,
      exactly("The request must contain the parameter MessageGroupId."),
    );
    await expectSqsError(
      h.sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: url,
          Entries: [
            { Id: "whole", MessageBody: "b", MessageGroupId: "g", MessageDeduplicationId: "d1" },
            { Id: "undeduplicated", MessageBody: "b", MessageGroupId: "g" },
          ],
        }),
      ),
      "InvalidParameterValue",
      400,
      exactly(
        "The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly",
      ),
    );
    expect(await stored("jobs.fifo")).toBe(0n);
    // SendMessage without a group stays MissingParameter, as AWS answers it.
    await expectSqsError(
      h.sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "b", MessageDeduplicationId: "d" })),
      "MissingParameter",
      400,
      exactly("The request must contain the parameter MessageGroupId."),
    );
  });

  it("answers a visibility change with a superseded handle OK, and leaves the current holder's lease as it is", async () => {
    const url = await createQueue("work", { VisibilityTimeout: "30" });
    await h.sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "m" }));
    const stale = (await h.sqs.send(new ReceiveMessageCommand({ QueueUrl: url }))).Messages![0]!;
    clock.advance(31_000);
    const current = (await h.sqs.send(new ReceiveMessageCommand({ QueueUrl: url }))).Messages![0]!;
    expect(current.MessageId).toBe(stale.MessageId);
    // Releasing with the stale handle: OK, and the message stays hidden.
    await h.sqs.send(
      new ChangeMessageVisibilityCommand({ QueueUrl: url, ReceiptHandle: stale.ReceiptHandle, VisibilityTimeout: 0 }),
    );
    const batch = await h.sqs.send(
      new ChangeMessageVisibilityBatchCommand({
        QueueUrl: url,
        Entries: [{ Id: "stale", ReceiptHandle: stale.ReceiptHandle, VisibilityTimeout: 0 }],
      }),
    );
    expect({ successful: batch.Successful, failed: batch.Failed ?? [] }).toEqual({
      successful: [{ Id: "stale" }],
      failed: [],
    });
    expect((await h.sqs.send(new ReceiveMessageCommand({ QueueUrl: url }))).Messages).toBeUndefined();
    // Extending with it: OK, and the current lease still ends 30 s after its receive.
    await h.sqs.send(
      new ChangeMessageVisibilityCommand({ QueueUrl: url, ReceiptHandle: stale.ReceiptHandle, VisibilityTimeout: 600 }),
    );
    await h.sqs.send(
      new ChangeMessageVisibilityBatchCommand({
        QueueUrl: url,
        Entries: [{ Id: "stale", ReceiptHandle: stale.ReceiptHandle, VisibilityTimeout: 600 }],
      }),
    );
    clock.advance(31_000);
    const third = (await h.sqs.send(new ReceiveMessageCommand({ QueueUrl: url }))).Messages![0]!;
    expect(third.MessageId).toBe(stale.MessageId);
  });

  it("words bad queue names as LocalStack and moto do: InvalidParameterValue, an empty name too", async () => {
    for (const name of ["has space", "", "x".repeat(81), "standard.fifo"]) {
      await expectSqsError(createQueue(name), "InvalidParameterValue", 400, badName);
    }
    await expectSqsError(
      createQueue("no-suffix", { FifoQueue: "true" }),
      "InvalidParameterValue",
      400,
      exactly(
        "The name of a FIFO queue can only include alphanumeric characters, hyphens, or underscores, must end with .fifo suffix and be 1 to 80 in length",
      ),
    );
  });

  it("answers a create with several bad settings with one AWS error, as AWS does, though the broker names them all", async () => {
    await expectSqsError(
      createQueue("several", { VisibilityTimeout: "99999", MessageRetentionPeriod: "1", DelaySeconds: "-1" }),
      "InvalidAttributeValue",
      400,
      /^Invalid value for the parameter \w+\. Reason: [^;]*$/,
    );
  });

  it("words too many tags and an over-long tag key as moto does, without the broker's field paths", async () => {
    const tags = (count: number, prefix: string) =>
      Object.fromEntries(Array.from({ length: count }, (_, i) => [`${prefix}${i}`, "v"]));
    await expectSqsError(
      h.sqs.send(new CreateQueueCommand({ QueueName: "crowded", tags: tags(51, "k") })),
      "InvalidParameterValue",
      400,
      exactly("Too many tags added for queue crowded."),
    );
    const url = await createQueue("tagged");
    await h.sqs.send(new TagQueueCommand({ QueueUrl: url, Tags: tags(50, "k") }));
    await expectSqsError(
      h.sqs.send(new TagQueueCommand({ QueueUrl: url, Tags: { more: "v" } })),
      "InvalidParameterValue",
      400,
      exactly("Too many tags added for queue tagged."),
    );
    const longKey = "k".repeat(129);
    const badKey = exactly("Tag keys must be between 1 and 128 characters in length.");
    await expectSqsError(
      h.sqs.send(new UntagQueueCommand({ QueueUrl: url, TagKeys: ["k1", longKey] })),
      "InvalidParameterValue",
      400,
      badKey,
    );
    await h.sqs.send(new UntagQueueCommand({ QueueUrl: url, TagKeys: ["k1", "k".repeat(128)] }));
    await expectSqsError(
      h.sqs.send(new TagQueueCommand({ QueueUrl: url, Tags: { [longKey]: "v" } })),
      "InvalidParameterValue",
      400,
      badKey,
    );
  });

  it("words malformed FIFO ids and an empty attribute value as AWS does, on either kind of queue", async () => {
    const fifo = await createQueue("ids.fifo", { FifoQueue: "true" });
    const plain = await createQueue("plain");
    const reason = (name: string, value: string) =>
      exactly(
        `Value ${value} for parameter ${name} is invalid. Reason: ${name} can only include alphanumeric and punctuation characters. 1 to 128 in length.`,
      );
    for (const value of ["group 123", "a".repeat(129)]) {
      await expectSqsError(
        h.sqs.send(new SendMessageCommand({ QueueUrl: plain, MessageBody: "m", MessageGroupId: value })),
        "InvalidParameterValue",
        400,
        reason("MessageGroupId", value),
      );
    }
    for (const value of ["", "group 123", "a".repeat(129)]) {
      await expectSqsError(
        h.sqs.send(
          new SendMessageCommand({
            QueueUrl: fifo,
            MessageBody: "m",
            MessageGroupId: "g",
            MessageDeduplicationId: value,
          }),
        ),
        "InvalidParameterValue",
        400,
        reason("MessageDeduplicationId", value),
      );
    }
    await expectSqsError(
      h.sqs.send(
        new SendMessageCommand({
          QueueUrl: plain,
          MessageBody: "m",
          MessageAttributes: { ErrorDetails: { DataType: "String", StringValue: "" } },
        }),
      ),
      "InvalidParameterValue",
      400,
      exactly("Message (user) attribute 'ErrorDetails' must contain a non-empty value of type 'String'."),
    );
    expect((await stored("plain")) + (await stored("ids.fifo"))).toBe(0n);
  });

  it("words ReceiveMessage's bounds as AWS does", async () => {
    const url = await createQueue("bounds");
    await expectSqsError(
      h.sqs.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 11 })),
      "InvalidParameterValue",
      400,
      exactly("Value 11 for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if provided."),
    );
    await expectSqsError(
      h.sqs.send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 21 })),
      "InvalidParameterValue",
      400,
      exactly("Value 21 for parameter WaitTimeSeconds is invalid. Reason: Must be >= 0 and <= 20, if provided."),
    );
  });
});
