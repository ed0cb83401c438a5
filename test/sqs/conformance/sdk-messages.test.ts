/**
 * What AWS answered about messages (aws-messages.ts) through
 * @aws-sdk/client-sqs: MessageAttributeNames filters, MD5s of bodies and
 * attributes on send, batch send and receive, dead-lettered messages'
 * attributes, AWSTraceHeader, and a visibility change after the timeout.
 * Rows with a known difference (the issue's item) are asserted to fail
 * until it is fixed.
 */
import {
  ChangeMessageVisibilityCommand,
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
} from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeClock } from "../../support/fake-clock.js";
import { pollUntil } from "../poll-until.js";
import { startSqsHarness, type SqsHarness } from "../sqs-harness.js";
import { attributeFilters, digestCases, filteredMessage, sendByQueueName, traceHeaders } from "./aws-messages.js";

const knownAs = (item: number | undefined) => (item === undefined ? "" : ` (known difference, #35 item ${item})`);

describe("AWS's recorded message answers over the JSON protocol (@aws-sdk/client-sqs)", () => {
  let h: SqsHarness;
  const clock = new FakeClock();
  let queueCount = 0;
  /** A new standard queue's URL. */
  const newQueue = async (attributes: Record<string, string> = {}) =>
    (await h.sqs.send(new CreateQueueCommand({ QueueName: `aws-m${++queueCount}`, Attributes: attributes }))).QueueUrl!;
  beforeAll(async () => {
    h = await startSqsHarness({ clock });
  });
  afterAll(async () => {
    await h?.stop();
  });

  describe("MessageAttributeNames", () => {
    let QueueUrl: string;
    beforeAll(async () => {
      // Visibility 0: every filter below receives the same message again.
      QueueUrl = await newQueue({ VisibilityTimeout: "0" });
      const sent = await h.sqs.send(
        new SendMessageCommand({
          QueueUrl,
          MessageBody: filteredMessage.body,
          MessageAttributes: filteredMessage.attributes,
        }),
      );
      expect(sent).toMatchObject({
        MD5OfMessageBody: filteredMessage.md5OfBody,
        MD5OfMessageAttributes: filteredMessage.md5OfAttributes,
      });
    });

    for (const { names, returns, md5, item } of attributeFilters) {
      (item === undefined ? it : it.fails)(
        `${JSON.stringify(names)} returns ${JSON.stringify(returns)}${knownAs(item)}`,
        async () => {
          const { Messages } = await h.sqs.send(
            new ReceiveMessageCommand({ QueueUrl, MessageAttributeNames: [...names] }),
          );
          const [message] = Messages!;
          expect(Object.keys(message!.MessageAttributes ?? {}).sort()).toEqual(returns);
          expect(message!.MD5OfMessageAttributes).toBe(md5);
          expect(message!.MD5OfBody).toBe(filteredMessage.md5OfBody);
        },
      );
    }
  });

  it("answers AWS's MD5s on SendMessage, SendMessageBatch and ReceiveMessage", async () => {
    const QueueUrl = await newQueue();
    for (const { body, attributes, md5OfBody, md5OfAttributes } of digestCases) {
      const expected = { MD5OfMessageBody: md5OfBody, MD5OfMessageAttributes: md5OfAttributes };
      const sent = await h.sqs.send(
        new SendMessageCommand({ QueueUrl, MessageBody: body, MessageAttributes: attributes }),
      );
      expect({ MD5OfMessageBody: sent.MD5OfMessageBody, MD5OfMessageAttributes: sent.MD5OfMessageAttributes }).toEqual(
        expected,
      );
      const batch = await h.sqs.send(
        new SendMessageBatchCommand({
          QueueUrl,
          Entries: [{ Id: "1", MessageBody: body, MessageAttributes: attributes }],
        }),
      );
      const [entry] = batch.Successful!;
      expect({
        MD5OfMessageBody: entry!.MD5OfMessageBody,
        MD5OfMessageAttributes: entry!.MD5OfMessageAttributes,
      }).toEqual(expected);
      const received = [];
      while (received.length < 2) {
        const { Messages = [] } = await h.sqs.send(
          new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, MessageAttributeNames: ["All"] }),
        );
        received.push(...Messages);
      }
      for (const message of received) {
        expect({ body: message.Body, md5: message.MD5OfBody, attributesMd5: message.MD5OfMessageAttributes }).toEqual({
          body,
          md5: md5OfBody,
          attributesMd5: md5OfAttributes,
        });
        expect(message.MessageAttributes).toEqual(attributes);
      }
    }
  });

  describe("a dead-lettered message (maxReceiveCount 1, received twice)", () => {
    let sourceArn: string;
    let dead: Awaited<ReturnType<typeof deadLetter>>;
    const deadLetter = async () => {
      const dlqUrl = await newQueue();
      const dlqArn = (
        await h.sqs.send(new GetQueueAttributesCommand({ QueueUrl: dlqUrl, AttributeNames: ["QueueArn"] }))
      ).Attributes!.QueueArn!;
      const QueueUrl = await newQueue({
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: 1 }),
      });
      sourceArn = (await h.sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ["QueueArn"] })))
        .Attributes!.QueueArn!;
      const sent = await h.sqs.send(
        new SendMessageCommand({
          QueueUrl,
          MessageBody: digestCases[1]!.body,
          MessageAttributes: digestCases[1]!.attributes,
          MessageSystemAttributes: {
            AWSTraceHeader: { DataType: "String", StringValue: traceHeaders.systemAttribute },
          },
        }),
      );
      // The first receive delivers it; the second finds it over maxReceiveCount and moves it.
      const first = await h.sqs.send(
        new ReceiveMessageCommand({ QueueUrl, VisibilityTimeout: 0, MessageSystemAttributeNames: ["All"] }),
      );
      await h.sqs.send(new ReceiveMessageCommand({ QueueUrl, VisibilityTimeout: 0 }));
      // The move is the broker's, after the receive that found the message spent.
      const { Messages } = await pollUntil(
        () =>
          h.sqs.send(
            new ReceiveMessageCommand({
              QueueUrl: dlqUrl,
              MessageSystemAttributeNames: ["All"],
              MessageAttributeNames: ["All"],
            }),
          ),
        (answer) => (answer.Messages ?? []).length > 0,
      );
      return { sent, first: first.Messages![0]!, message: Messages![0]! };
    };
    beforeAll(async () => {
      dead = await deadLetter();
    });

    it("keeps its id, body, attributes and MD5s, and names its source queue", () => {
      const { sent, message } = dead;
      expect(message).toMatchObject({
        MessageId: sent.MessageId,
        Body: digestCases[1]!.body,
        MD5OfBody: digestCases[1]!.md5OfBody,
        MD5OfMessageAttributes: digestCases[1]!.md5OfAttributes,
        MessageAttributes: digestCases[1]!.attributes,
      });
      expect(message.Attributes).toMatchObject({ DeadLetterQueueSourceArn: sourceArn });
    });

    it("keeps its receive count: its first receive from the dead-letter queue is its second", () => {
      expect(dead.message.Attributes?.ApproximateReceiveCount).toBe("2");
    });

    it("keeps its first receive: ApproximateFirstReceiveTimestamp is its first delivery's, in the source queue", () => {
      const firstReceive = dead.first.Attributes?.ApproximateFirstReceiveTimestamp;
      expect(firstReceive).toMatch(/^\d+$/);
      expect(dead.message.Attributes?.ApproximateFirstReceiveTimestamp).toBe(firstReceive);
    });

    it("keeps its AWSTraceHeader", () => {
      expect(dead.message.Attributes?.AWSTraceHeader).toBe(traceHeaders.systemAttribute);
    });
  });

  it("takes AWSTraceHeader from the X-Amzn-Trace-Id header of a send", async () => {
    const QueueUrl = await newQueue();
    const traced = h.client();
    traced.middlewareStack.add(
      (next) => async (args) => {
        (args.request as { headers: Record<string, string> }).headers["x-amzn-trace-id"] = traceHeaders.httpHeader;
        return next(args);
      },
      { step: "build" },
    );
    await traced.send(new SendMessageCommand({ QueueUrl, MessageBody: "test" }));
    const { Messages } = await h.sqs.send(
      new ReceiveMessageCommand({ QueueUrl, MessageSystemAttributeNames: ["AWSTraceHeader"] }),
    );
    expect(Messages![0]!.Attributes?.AWSTraceHeader).toBe(traceHeaders.httpHeader);
  });

  it("takes a bare queue name as QueueUrl", async () => {
    await newQueue();
    const sent = await h.sqs.send(
      new SendMessageCommand({ QueueUrl: `aws-m${queueCount}`, MessageBody: sendByQueueName.body }),
    );
    expect(sent.MD5OfMessageBody).toBe(sendByQueueName.md5OfBody);
  });

  it("changes the visibility of a message whose visibility timeout ran out (success, as AWS answers)", async () => {
    const QueueUrl = await newQueue({ VisibilityTimeout: "1" });
    await h.sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: "test" }));
    const { Messages } = await h.sqs.send(new ReceiveMessageCommand({ QueueUrl }));
    clock.advance(1500);
    const answer = await h.sqs.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl,
        ReceiptHandle: Messages![0]!.ReceiptHandle!,
        VisibilityTimeout: 30,
      }),
    );
    expect(answer.$metadata.httpStatusCode).toBe(200);
  });
});
