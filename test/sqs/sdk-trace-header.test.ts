import {
  CreateQueueCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  StartMessageMoveTaskCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { status } from "@grpc/grpc-js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { expectRpcError } from "../support/expect-rpc-error.js";
import { expectSqsError } from "./expect-sqs-error.js";
import { pollUntil } from "./poll-until.js";
import { startSqsHarness, testAccountId, type SqsHarness } from "./sqs-harness.js";

// AWS's recorded case: this header's MD5OfMessageSystemAttributes, as SQS
// answered it (LocalStack's test_system_attributes_have_no_effect_on_attr_md5).
const header = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1";
const headerDigest = "5ae4d5d7636402d80f4eb6d213245a88";
const traced = { AWSTraceHeader: { DataType: "String", StringValue: header } };
const arnOf = (queue: string): string => `arn:aws:sqs:us-east-1:${testAccountId}:${queue}`;

/** An SDK client (the harness destroys it) that sends this X-Amzn-Trace-Id header, as an X-Ray-instrumented one does. */
function withTraceIdHeader(client: SQSClient, value: string): SQSClient {
  client.middlewareStack.add(
    (next) => async (args) => {
      (args.request as { headers: Record<string, string> }).headers["X-Amzn-Trace-Id"] = value;
      return next(args);
    },
    { step: "build", name: "xrayTraceIdHeader" },
  );
  return client;
}

describe("AWSTraceHeader: a trace across both APIs, through @aws-sdk/client-sqs and gRPC", () => {
  let h: SqsHarness;
  let url: string;
  beforeEach(async () => {
    h = await startSqsHarness();
    url = (await h.sqs.send(new CreateQueueCommand({ QueueName: "work", Attributes: { MaximumMessageSize: "1024" } })))
      .QueueUrl!;
  });
  afterEach(async () => {
    await h.stop();
  });

  const receiveOne = async (names?: string[]) => {
    const { Messages } = await h.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: url,
        VisibilityTimeout: 0,
        ...(names === undefined ? {} : { MessageSystemAttributeNames: names as never }),
      }),
    );
    expect(Messages).toHaveLength(1);
    return Messages![0]!;
  };

  it("keeps an SQS send's AWSTraceHeader, answers AWS's digest, and returns it when asked, to SQS and gRPC consumers", async () => {
    const sent = await h.sqs.send(
      new SendMessageCommand({ QueueUrl: url, MessageBody: "traced", MessageSystemAttributes: traced }),
    );
    expect(sent.MD5OfMessageSystemAttributes).toBe(headerDigest);
    expect(sent.MD5OfMessageAttributes).toBeUndefined();
    expect((await receiveOne(["AWSTraceHeader"])).Attributes).toEqual({ AWSTraceHeader: header });
    expect((await receiveOne(["All"])).Attributes).toMatchObject({ AWSTraceHeader: header });
    expect((await receiveOne(["SentTimestamp"])).Attributes).not.toHaveProperty("AWSTraceHeader");
    expect((await receiveOne()).Attributes).toBeUndefined();
    const { messages } = await h.rpc.peekMessages({ queue: "work" });
    expect(messages.map((message) => message.traceHeader)).toEqual([header]);
    const [received] = (await h.rpc.receive({ queue: "work" })).messages;
    expect(received!.traceHeader).toBe(header);
  });

  it("gives a gRPC send's trace_header to SQS consumers as AWSTraceHeader, and none to a message sent without", async () => {
    await h.rpc.send({ queue: "work", body: Buffer.from("from gRPC"), traceHeader: header });
    expect((await receiveOne(["AWSTraceHeader"])).Attributes).toEqual({ AWSTraceHeader: header });
    await h.rpc.purgeQueue({ name: "work" });
    await h.rpc.send({ queue: "work", body: Buffer.from("untraced") });
    expect((await receiveOne(["All"])).Attributes).not.toHaveProperty("AWSTraceHeader");
    expect((await h.rpc.receive({ queue: "work" })).messages[0]!.traceHeader).toBe("");
  });

  it("keeps each SendMessageBatch entry's own header, with its digest, and a gRPC SendBatch entry's", async () => {
    const { Successful } = await h.sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: url,
        Entries: [
          { Id: "traced", MessageBody: "a", MessageSystemAttributes: traced },
          { Id: "plain", MessageBody: "b" },
        ],
      }),
    );
    expect(Object.fromEntries(Successful!.map((entry) => [entry.Id, entry.MD5OfMessageSystemAttributes]))).toEqual({
      traced: headerDigest,
      plain: undefined,
    });
    await h.rpc.sendBatch({
      queue: "work",
      entries: [{ body: Buffer.from("c"), traceHeader: "Root=1-00000000-000000000000000000000003" }],
    });
    const { Messages } = await h.sqs.send(
      new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, MessageSystemAttributeNames: ["All"] }),
    );
    expect(
      Object.fromEntries(Messages!.map((message) => [message.Body, message.Attributes!["AWSTraceHeader"]])),
    ).toEqual({ a: header, b: undefined, c: "Root=1-00000000-000000000000000000000003" });
  });

  it("takes the request's X-Amzn-Trace-Id header as AWS does, unless MessageSystemAttributes sets one", async () => {
    const instrumented = withTraceIdHeader(h.client(), "Root=1-3152b799-8954dae64eda91bc9a23a7e8;Sampled=1");
    const sent = await instrumented.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "h" }));
    expect(sent.MD5OfMessageSystemAttributes).toBeUndefined();
    expect((await receiveOne(["AWSTraceHeader"])).Attributes).toEqual({
      AWSTraceHeader: "Root=1-3152b799-8954dae64eda91bc9a23a7e8;Sampled=1",
    });
    await h.rpc.purgeQueue({ name: "work" });
    await instrumented.send(
      new SendMessageCommand({ QueueUrl: url, MessageBody: "a", MessageSystemAttributes: traced }),
    );
    expect((await receiveOne(["AWSTraceHeader"])).Attributes).toEqual({ AWSTraceHeader: header });
  });

  it("does not count the header toward MaximumMessageSize, as AWS does not", async () => {
    await h.sqs.send(
      new SendMessageCommand({ QueueUrl: url, MessageBody: "x".repeat(1024), MessageSystemAttributes: traced }),
    );
    expect((await receiveOne(["AWSTraceHeader"])).Attributes).toEqual({ AWSTraceHeader: header });
  });

  it("refuses other system attributes, other types and overlong headers, on both APIs, storing nothing", async () => {
    const send = (MessageSystemAttributes: Record<string, { DataType: string; StringValue?: string }>) =>
      h.sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "b", MessageSystemAttributes }));
    await expectSqsError(
      send({ Other: { DataType: "String", StringValue: "v" } }),
      "InvalidParameterValue",
      400,
      /Message system attribute name 'Other' is invalid/,
    );
    await expectSqsError(
      send({ AWSTraceHeader: { DataType: "Number", StringValue: "1" } }),
      "InvalidParameterValue",
      400,
      /must be of type String/,
    );
    await expectSqsError(
      send({ AWSTraceHeader: { DataType: "String", StringValue: "x".repeat(513) } }),
      "InvalidParameterValue",
      400,
      /1 to 512 characters of printable ASCII/,
    );
    await expectRpcError(
      h.rpc.send({ queue: "work", body: Buffer.from("b"), traceHeader: "x".repeat(513) }),
      status.INVALID_ARGUMENT,
      "INVALID_ARGUMENT",
      "trace_header",
    );
    await expectRpcError(
      h.rpc.sendBatch({
        queue: "work",
        entries: [{ body: Buffer.from("b") }, { body: Buffer.from("c"), traceHeader: "\n" }],
      }),
      status.INVALID_ARGUMENT,
      "INVALID_ARGUMENT",
      "entries[1].trace_header",
    );
    expect((await h.rpc.getQueue({ name: "work" })).queue!.stats).toMatchObject({ visible: 0n });
  });

  it("keeps the header through a dead-letter move and a redrive back", async () => {
    await h.sqs.send(new CreateQueueCommand({ QueueName: "dlq" }));
    const source = (
      await h.sqs.send(
        new CreateQueueCommand({
          QueueName: "source",
          Attributes: { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: arnOf("dlq"), maxReceiveCount: 1 }) },
        }),
      )
    ).QueueUrl!;
    await h.sqs.send(new SendMessageCommand({ QueueUrl: source, MessageBody: "d", MessageSystemAttributes: traced }));
    await h.sqs.send(new ReceiveMessageCommand({ QueueUrl: source, VisibilityTimeout: 0 }));
    await h.sqs.send(new ReceiveMessageCommand({ QueueUrl: source }));
    const peeked = await pollUntil(
      () => h.rpc.peekMessages({ queue: "dlq" }),
      ({ messages }) => messages.length === 1,
    );
    expect(peeked.messages[0]!.traceHeader).toBe(header);
    const [dead] = (
      await h.sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: h.urlOf("dlq"),
          VisibilityTimeout: 0,
          MessageSystemAttributeNames: ["AWSTraceHeader", "DeadLetterQueueSourceArn"],
        }),
      )
    ).Messages!;
    expect(dead!.Attributes).toEqual({ AWSTraceHeader: header, DeadLetterQueueSourceArn: arnOf("source") });
    await h.sqs.send(new StartMessageMoveTaskCommand({ SourceArn: arnOf("dlq") }));
    const back = await pollUntil(
      () =>
        h.sqs.send(
          new ReceiveMessageCommand({ QueueUrl: source, VisibilityTimeout: 0, MessageSystemAttributeNames: ["All"] }),
        ),
      ({ Messages }) => Messages !== undefined,
    );
    expect(back.Messages![0]!.Attributes).toMatchObject({ AWSTraceHeader: header });
  });
});
