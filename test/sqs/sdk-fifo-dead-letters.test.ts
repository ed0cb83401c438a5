import {
  CreateQueueCommand,
  ListMessageMoveTasksCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  StartMessageMoveTaskCommand,
  type Message,
} from "@aws-sdk/client-sqs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { expectSqsError } from "./expect-sqs-error.js";
import { pollUntil } from "./poll-until.js";
import { startSqsHarness, testAccountId, type SqsHarness } from "./sqs-harness.js";

const arnOf = (queue: string): string => `arn:aws:sqs:us-east-1:${testAccountId}:${queue}`;

describe("FIFO dead-letter queues through @aws-sdk/client-sqs", () => {
  let h: SqsHarness;
  beforeEach(async () => {
    // The real clock: dead-letter moves and move tasks run in the background.
    h = await startSqsHarness();
    await h.sqs.send(new CreateQueueCommand({ QueueName: "dlq.fifo", Attributes: { FifoQueue: "true" } }));
    await h.sqs.send(
      new CreateQueueCommand({
        QueueName: "work.fifo",
        Attributes: {
          FifoQueue: "true",
          RedrivePolicy: JSON.stringify({ deadLetterTargetArn: arnOf("dlq.fifo"), maxReceiveCount: 1 }),
        },
      }),
    );
  });
  afterEach(async () => {
    await h.stop();
  });

  const receiveAll = async (queue: string, VisibilityTimeout?: number): Promise<Message[]> =>
    (
      await h.sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: h.urlOf(queue),
          MaxNumberOfMessages: 10,
          MessageSystemAttributeNames: ["All"],
          VisibilityTimeout,
        }),
      )
    ).Messages ?? [];
  const visible = async (queue: string): Promise<bigint> =>
    (await h.rpc.getQueue({ name: queue })).queue!.stats!.visible;
  const groupOrder = (messages: readonly Message[]): Record<string, string[]> => {
    const groups: Record<string, string[]> = {};
    for (const message of messages) (groups[message.Attributes!["MessageGroupId"]!] ??= []).push(message.Body!);
    return groups;
  };

  it("moves spent messages to the FIFO dead-letter queue in group order, and a move task brings them back in order", async () => {
    const sent = new Map<string, string>();
    for (const [body, group] of [
      ["g1", "g"],
      ["h1", "h"],
      ["g2", "g"],
      ["g3", "g"],
      ["h2", "h"],
    ] as const) {
      const { MessageId } = await h.sqs.send(
        new SendMessageCommand({
          QueueUrl: h.urlOf("work.fifo"),
          MessageBody: body,
          MessageGroupId: group,
          MessageDeduplicationId: body,
        }),
      );
      sent.set(body, MessageId!);
    }
    // Each received once and released at once; the next receive dead-letters them instead of delivering them.
    expect(await receiveAll("work.fifo", 0)).toHaveLength(5);
    expect(await receiveAll("work.fifo")).toEqual([]);
    await pollUntil(
      () => visible("dlq.fifo"),
      (count) => count === 5n,
    );

    const dead = await receiveAll("dlq.fifo", 0);
    expect(groupOrder(dead)).toEqual({ g: ["g1", "g2", "g3"], h: ["h1", "h2"] });
    for (const message of dead) {
      // As in SQS: the same message id, and the message id as its deduplication id in the dead-letter queue.
      expect(message.MessageId).toBe(sent.get(message.Body!));
      expect(message.Attributes).toMatchObject({
        MessageDeduplicationId: message.MessageId,
        DeadLetterQueueSourceArn: arnOf("work.fifo"),
        SequenceNumber: expect.stringMatching(/^\d{20}$/),
      });
    }
    const sequences = dead
      .filter((message) => message.Attributes!["MessageGroupId"] === "g")
      .map((message) => BigInt(message.Attributes!["SequenceNumber"]!));
    expect([...sequences].sort((a, b) => (a < b ? -1 : 1))).toEqual(sequences);

    await h.sqs.send(new StartMessageMoveTaskCommand({ SourceArn: arnOf("dlq.fifo") }));
    await pollUntil(
      () => h.sqs.send(new ListMessageMoveTasksCommand({ SourceArn: arnOf("dlq.fifo") })),
      ({ Results }) => Results![0]!.Status === "COMPLETED",
    );
    expect(groupOrder(await receiveAll("work.fifo"))).toEqual({ g: ["g1", "g2", "g3"], h: ["h1", "h2"] });
  });

  it("refuses a move task between a FIFO queue and a standard one", async () => {
    await h.sqs.send(new CreateQueueCommand({ QueueName: "plain" }));
    await expectSqsError(
      h.sqs.send(new StartMessageMoveTaskCommand({ SourceArn: arnOf("dlq.fifo"), DestinationArn: arnOf("plain") })),
      "InvalidParameterValue",
      400,
      /parameter DestinationArn is invalid. Reason: the destination queue must be a FIFO queue/,
    );
    await expectSqsError(
      h.sqs.send(new StartMessageMoveTaskCommand({ SourceArn: arnOf("plain"), DestinationArn: arnOf("dlq.fifo") })),
      "InvalidParameterValue",
      400,
      /must be a standard queue/,
    );
  });
});
