import { ReceiveMessageCommand, SendMessageCommand } from "@aws-sdk/client-sqs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { QueueClient } from "../../src/client/queue-client.js";
import { startSqsHarness, type SqsHarness } from "../sqs/sqs-harness.js";

const header = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1";

describe("trace headers between the TypeScript client and the SQS endpoint", () => {
  let h: SqsHarness;
  let client: QueueClient;
  beforeEach(async () => {
    h = await startSqsHarness();
    client = new QueueClient(h.server.address);
    await client.createQueue("traced");
  });
  afterEach(async () => {
    await client.close();
    await h.stop();
  });

  it("sends traceHeader with send() and sendBatch(), which the AWS SDK reads as AWSTraceHeader", async () => {
    await Promise.all([
      client.send("traced", "alone", { traceHeader: header }),
      client.send("traced", "batched", { traceHeader: `${header};Lineage=1` }),
    ]);
    await client.sendBatch("traced", [{ body: "entry", traceHeader: "Root=1-00000000-000000000000000000000001" }]);
    const read = new Map<string, string | undefined>();
    while (read.size < 3) {
      const { Messages } = await h.sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: h.urlOf("traced"),
          MaxNumberOfMessages: 10,
          MessageSystemAttributeNames: ["AWSTraceHeader"],
        }),
      );
      for (const message of Messages ?? []) read.set(message.Body!, message.Attributes?.["AWSTraceHeader"]);
    }
    expect(Object.fromEntries(read)).toEqual({
      alone: header,
      batched: `${header};Lineage=1`,
      entry: "Root=1-00000000-000000000000000000000001",
    });
  });

  it("returns an SQS send's AWSTraceHeader as traceHeader on receive and peek, and none where none was sent", async () => {
    await h.sqs.send(
      new SendMessageCommand({
        QueueUrl: h.urlOf("traced"),
        MessageBody: "from SQS",
        MessageSystemAttributes: { AWSTraceHeader: { DataType: "String", StringValue: header } },
      }),
    );
    await client.send("traced", "untraced");
    const peeked = (await client.peekMessages("traced")).messages;
    expect(peeked.map((message) => [Buffer.from(message.body).toString(), message.traceHeader])).toEqual([
      ["from SQS", header],
      ["untraced", undefined],
    ]);
    const received = await client.receive("traced", { maxMessages: 10 });
    expect(Object.fromEntries(received.map((message) => [Buffer.from(message.body).toString(), message]))).toEqual({
      "from SQS": expect.objectContaining({ traceHeader: header }),
      untraced: expect.not.objectContaining({ traceHeader: expect.anything() }),
    });
  });
});
