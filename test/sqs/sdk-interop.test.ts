import {
  CreateQueueCommand,
  DeleteMessageCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
} from "@aws-sdk/client-sqs";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FakeClock } from "../support/fake-clock.js";
import { openHeartbeatStream } from "../support/heartbeat-stream.js";
import { startSqsHarness, type SqsHarness } from "./sqs-harness.js";

describe("one queue, two APIs: SQS and gRPC see the same messages", () => {
  let h: SqsHarness;
  let url: string;
  const clock = new FakeClock();
  beforeEach(async () => {
    h = await startSqsHarness({ clock });
    url = (await h.sqs.send(new CreateQueueCommand({ QueueName: "shared", Attributes: { VisibilityTimeout: "5" } })))
      .QueueUrl!;
  });
  afterEach(async () => {
    await h.stop();
  });

  it("sent over SQS, received over gRPC and held with a Heartbeat, with its attributes intact", async () => {
    const { MessageId } = await h.sqs.send(
      new SendMessageCommand({
        QueueUrl: url,
        MessageBody: "from SQS ✓",
        MessageAttributes: {
          tenant: { DataType: "String", StringValue: "acme" },
          amount: { DataType: "Number.cents", StringValue: "1999" },
          blob: { DataType: "Binary", BinaryValue: Uint8Array.of(9, 8, 7) },
        },
      }),
    );
    const [message] = (await h.rpc.receive({ queue: "shared" })).messages;
    expect(message!.messageId).toBe(MessageId);
    expect(Buffer.from(message!.body).toString()).toBe("from SQS ✓");
    // A plain String attribute is an attribute; the others keep their types.
    expect(message!.attributes).toEqual({ tenant: "acme" });
    expect(message!.typedAttributes).toMatchObject({
      amount: { dataType: "Number.cents", value: { case: "stringValue", value: "1999" } },
      blob: { dataType: "Binary", value: { case: "binaryValue", value: Buffer.of(9, 8, 7) } },
    });
    const heartbeat = openHeartbeatStream(h.server.address);
    try {
      clock.advance(4000);
      heartbeat.send({
        queue: "shared",
        leases: [{ receiptHandle: message!.receiptHandle, visibilityTimeout: durationFromMs(5000) }],
      });
      const [state] = (await heartbeat.next()).leases;
      expect(state!.held).toBe(true);
      clock.advance(4000);
      // Past the first lease's 5 s, the renewed lease still hides it from SQS consumers.
      expect((await h.sqs.send(new ReceiveMessageCommand({ QueueUrl: url }))).Messages).toBeUndefined();
    } finally {
      heartbeat.close();
    }
    await h.rpc.delete({ queue: "shared", receiptHandle: message!.receiptHandle });
    expect((await h.rpc.getQueue({ name: "shared" })).queue!.stats).toMatchObject({ visible: 0n, inFlight: 0n });
  });

  it("sent over gRPC with typed attributes, received over SQS exactly, with digests the SDK checks, and deleted there", async () => {
    const { messageId } = await h.rpc.send({
      queue: "shared",
      body: Buffer.from("from gRPC"),
      attributes: { kind: "invoice" },
      typedAttributes: {
        total: { dataType: "Number", value: { case: "stringValue", value: "12.50" } },
        sig: { dataType: "Binary.sha", value: { case: "binaryValue", value: Uint8Array.of(1, 2) } },
      },
    });
    const { Messages } = await h.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: url,
        MessageAttributeNames: ["All"],
        MessageSystemAttributeNames: ["SentTimestamp", "ApproximateReceiveCount"],
      }),
    );
    const [message] = Messages!;
    expect(message!.MessageId).toBe(messageId);
    expect(message!.Body).toBe("from gRPC");
    expect(message!.MessageAttributes).toEqual({
      kind: { DataType: "String", StringValue: "invoice" },
      total: { DataType: "Number", StringValue: "12.50" },
      sig: { DataType: "Binary.sha", BinaryValue: Uint8Array.of(1, 2) },
    });
    expect(message!.Attributes).toEqual({ SentTimestamp: String(clock.now()), ApproximateReceiveCount: "1" });
    await h.sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: message!.ReceiptHandle }));
    expect((await h.rpc.getQueue({ name: "shared" })).queue!.stats).toMatchObject({ visible: 0n, inFlight: 0n });
  });

  it("gives a gRPC body that is not UTF-8 to SQS clients with each bad sequence replaced, and a digest of what it sent", async () => {
    await h.rpc.send({ queue: "shared", body: Uint8Array.of(0x68, 0x69, 0xff, 0x21, 0x00) });
    // Bytes that are not UTF-8, and U+0000, which SQS text cannot hold; the SDK checks the digest of what it got.
    const [message] = (await h.sqs.send(new ReceiveMessageCommand({ QueueUrl: url }))).Messages!;
    expect(message!.Body).toBe("hi\uFFFD!\uFFFD");
  });
});
