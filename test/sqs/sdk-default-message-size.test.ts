/**
 * The default max_message_bytes, 1 MiB as SQS's since 2025, over both APIs:
 * a queue created without it takes a message of exactly 1 MiB and refuses
 * one byte more, whether created and used over SQS's JSON protocol
 * (@aws-sdk/client-sqs), its query protocol (Debian's boto3:
 * python/test_boto3_message_size.py) or gRPC; and the request caps in front
 * of the broker take such messages at their wire's worst encoding.
 */
import { fileURLToPath } from "node:url";
import {
  CreateQueueCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
} from "@aws-sdk/client-sqs";
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectRpcError } from "../support/expect-rpc-error.js";
import { skipWithout } from "../support/required-tools.js";
import { expectSqsError } from "./expect-sqs-error.js";
import { missingBoto3, runPytest } from "./run-pytest.js";
import { startSqsHarness, type SqsHarness } from "./sqs-harness.js";

const mib = 1_048_576;
const pytestFile = fileURLToPath(new URL("./python/test_boto3_message_size.py", import.meta.url));

describe("the default MaximumMessageSize, 1 MiB", () => {
  let h: SqsHarness;
  beforeAll(async () => {
    h = await startSqsHarness();
  });
  afterAll(async () => {
    await h?.stop();
  });

  it("over SQS's JSON protocol: reported for a new queue, a 1 MiB message round-trips, a batch of 1 MiB in all is taken, one byte more is refused", async () => {
    const { QueueUrl } = await h.sqs.send(new CreateQueueCommand({ QueueName: "size-json" }));
    const { Attributes } = await h.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ["MaximumMessageSize"] }),
    );
    expect(Attributes).toEqual({ MaximumMessageSize: String(mib) });
    // Each quote is escaped in the JSON request: 2 MiB on the wire. The SDK checks the body's MD5.
    const body = '"'.repeat(mib);
    const sent = await h.sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: body }));
    const { Messages } = await h.sqs.send(new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10 }));
    expect(Messages!.map((message) => [message.MessageId, message.Body])).toEqual([[sent.MessageId, body]]);
    await h.sqs.send(new DeleteMessageCommand({ QueueUrl, ReceiptHandle: Messages![0]!.ReceiptHandle }));

    await expectSqsError(
      h.sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: `${body}x` })),
      "InvalidParameterValue",
      400,
    );
    const half = "h".repeat(mib / 2);
    const batch = (last: string) =>
      new SendMessageBatchCommand({
        QueueUrl,
        Entries: [
          { Id: "a", MessageBody: half },
          { Id: "b", MessageBody: last },
        ],
      });
    await expectSqsError(h.sqs.send(batch(`${half}x`)), "AWS.SimpleQueueService.BatchRequestTooLong", 400);
    const taken = await h.sqs.send(batch(half));
    expect(taken.Successful!.map((entry) => entry.Id)).toEqual(["a", "b"]);
    expect((await h.rpc.getQueue({ name: "size-json" })).queue!.stats!.visible).toBe(2n);
  });

  it("over gRPC: a new queue's max_message_bytes, a message of exactly 1 MiB with its attributes, one byte more refused, a SendBatch of four", async () => {
    const { queue } = await h.rpc.createQueue({ name: "size-grpc" });
    expect(queue!.config!.maxMessageBytes).toBe(mib);
    // Attribute keys and values count: 1 + 9 bytes.
    const body = Buffer.alloc(mib - 10, 0xab);
    const sent = await h.rpc.send({ queue: "size-grpc", body, attributes: { k: "v".repeat(9) } });
    const [received] = (await h.rpc.receive({ queue: "size-grpc", maxMessages: 10 })).messages;
    expect(received!.messageId).toBe(sent.messageId);
    expect(Buffer.from(received!.body).equals(body)).toBe(true);
    await h.rpc.delete({ queue: "size-grpc", receiptHandle: received!.receiptHandle });

    await expectRpcError(
      h.rpc.send({ queue: "size-grpc", body: Buffer.alloc(mib + 1) }),
      status.INVALID_ARGUMENT,
      "MESSAGE_TOO_LARGE",
      "body",
    );
    // SendBatch's 4 MiB cap holds four messages at the default; the request fits the 8 MiB request limit.
    const { messageIds } = await h.rpc.sendBatch({
      queue: "size-grpc",
      entries: Array.from({ length: 4 }, (_, i) => ({ body: Buffer.alloc(mib, i) })),
    });
    expect(messageIds).toHaveLength(4);
    expect((await h.rpc.getQueue({ name: "size-grpc" })).queue!.stats!.visible).toBe(4n);
  });

  it.skipIf(skipWithout(missingBoto3))(
    "over SQS's query protocol: passes test_boto3_message_size.py",
    async () => {
      expect(missingBoto3, "Debian packages missing (see .ci/run)").toEqual([]);
      const result = await runPytest(pytestFile, h);
      expect(result.code, result.output).toBe(0);
      expect(result.output).toMatch(/5 passed/);
    },
    120_000,
  );
});
