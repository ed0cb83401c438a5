import {
  CancelMessageMoveTaskCommand,
  CreateQueueCommand,
  ListMessageMoveTasksCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  StartMessageMoveTaskCommand,
} from "@aws-sdk/client-sqs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { expectSqsError } from "./expect-sqs-error.js";
import { pollUntil } from "./poll-until.js";
import { startSqsHarness, testAccountId, type SqsHarness } from "./sqs-harness.js";

const arnOf = (queue: string): string => `arn:aws:sqs:us-east-1:${testAccountId}:${queue}`;

describe("SQS message move tasks through @aws-sdk/client-sqs", () => {
  let h: SqsHarness;
  beforeEach(async () => {
    // The real clock: tasks run in the background, paced by it.
    h = await startSqsHarness();
    await h.sqs.send(new CreateQueueCommand({ QueueName: "dlq" }));
    await h.sqs.send(
      new CreateQueueCommand({
        QueueName: "work",
        Attributes: { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: arnOf("dlq"), maxReceiveCount: 1 }) },
      }),
    );
    await h.sqs.send(new CreateQueueCommand({ QueueName: "elsewhere" }));
  });
  afterEach(async () => {
    await h.stop();
  });

  const fillDeadLetterQueue = async (count: number): Promise<void> => {
    for (let start = 0; start < count; start += 10) {
      const entries = Array.from({ length: Math.min(10, count - start) }, (_, i) => ({
        Id: `m${start + i}`,
        MessageBody: `body ${start + i}`,
      }));
      await h.sqs.send(new SendMessageBatchCommand({ QueueUrl: h.urlOf("dlq"), Entries: entries }));
    }
  };

  it("moves a dead-letter queue's messages back to their source, and lists the task as it goes and when done", async () => {
    // Real dead letters: received once and released, then dead-lettered on the next receive.
    await h.sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: h.urlOf("work"),
        Entries: [
          { Id: "a", MessageBody: "a" },
          { Id: "b", MessageBody: "b" },
        ],
      }),
    );
    await h.sqs.send(
      new ReceiveMessageCommand({ QueueUrl: h.urlOf("work"), MaxNumberOfMessages: 10, VisibilityTimeout: 0 }),
    );
    await h.sqs.send(new ReceiveMessageCommand({ QueueUrl: h.urlOf("work"), MaxNumberOfMessages: 10 }));
    await pollUntil(
      () => h.rpc.getQueue({ name: "dlq" }),
      ({ queue }) => queue!.stats!.visible === 2n,
    );

    const { TaskHandle } = await h.sqs.send(new StartMessageMoveTaskCommand({ SourceArn: arnOf("dlq") }));
    expect(TaskHandle).toBeTruthy();
    const { Results } = await pollUntil(
      () => h.sqs.send(new ListMessageMoveTasksCommand({ SourceArn: arnOf("dlq"), MaxResults: 10 })),
      ({ Results }) => Results![0]!.Status === "COMPLETED",
    );
    expect(Results).toEqual([
      {
        Status: "COMPLETED",
        SourceArn: arnOf("dlq"),
        ApproximateNumberOfMessagesMoved: 2,
        ApproximateNumberOfMessagesToMove: 2,
        StartedTimestamp: expect.any(Number),
      },
    ]);
    const moved = await h.sqs.send(new ReceiveMessageCommand({ QueueUrl: h.urlOf("work"), MaxNumberOfMessages: 10 }));
    expect(moved.Messages!.map((message) => message.Body).sort()).toEqual(["a", "b"]);
  });

  it("cancels a rate-limited task part way: the moves made stay, and the task says CANCELLED", async () => {
    await fillDeadLetterQueue(30);
    const { TaskHandle } = await h.sqs.send(
      new StartMessageMoveTaskCommand({
        SourceArn: arnOf("dlq"),
        DestinationArn: arnOf("elsewhere"),
        MaxNumberOfMessagesPerSecond: 5,
      }),
    );
    const running = await h.sqs.send(new ListMessageMoveTasksCommand({ SourceArn: arnOf("dlq") }));
    expect(running.Results![0]).toMatchObject({
      TaskHandle,
      Status: "RUNNING",
      DestinationArn: arnOf("elsewhere"),
      MaxNumberOfMessagesPerSecond: 5,
      ApproximateNumberOfMessagesToMove: 30,
    });
    // A second task on the same source while one runs is refused.
    await expectSqsError(
      h.sqs.send(new StartMessageMoveTaskCommand({ SourceArn: arnOf("dlq") })),
      "InvalidParameterValue",
      400,
    );
    await pollUntil(
      () => h.rpc.getQueue({ name: "elsewhere" }),
      ({ queue }) => queue!.stats!.visible >= 1n,
    );
    const { ApproximateNumberOfMessagesMoved } = await h.sqs.send(new CancelMessageMoveTaskCommand({ TaskHandle }));
    expect(ApproximateNumberOfMessagesMoved).toBeGreaterThanOrEqual(1);
    expect(ApproximateNumberOfMessagesMoved).toBeLessThan(30);
    const { Results } = await pollUntil(
      () => h.sqs.send(new ListMessageMoveTasksCommand({ SourceArn: arnOf("dlq") })),
      ({ Results }) => Results![0]!.Status === "CANCELLED",
    );
    expect(Results![0]!.TaskHandle).toBeUndefined();
    const [dlq, elsewhere] = await Promise.all([
      h.rpc.getQueue({ name: "dlq" }),
      h.rpc.getQueue({ name: "elsewhere" }),
    ]);
    expect(Number(dlq.queue!.stats!.visible) + Number(elsewhere.queue!.stats!.visible)).toBe(30);
    expect(Number(elsewhere.queue!.stats!.visible)).toBe(Results![0]!.ApproximateNumberOfMessagesMoved);
    // Cancelling again: the task is no longer running.
    await expectSqsError(
      h.sqs.send(new CancelMessageMoveTaskCommand({ TaskHandle })),
      "ResourceNotFoundException",
      400,
    );
  });

  it("refuses what SQS refuses", async () => {
    await expectSqsError(
      h.sqs.send(new StartMessageMoveTaskCommand({ SourceArn: arnOf("absent") })),
      "ResourceNotFoundException",
      400,
    );
    await expectSqsError(
      h.sqs.send(new StartMessageMoveTaskCommand({ SourceArn: "not an arn" })),
      "InvalidParameterValue",
      400,
    );
    await expectSqsError(
      h.sqs.send(new StartMessageMoveTaskCommand({ SourceArn: arnOf("dlq"), DestinationArn: arnOf("dlq") })),
      "InvalidParameterValue",
      400,
    );
    await expectSqsError(
      h.sqs.send(new StartMessageMoveTaskCommand({ SourceArn: arnOf("dlq"), MaxNumberOfMessagesPerSecond: 501 })),
      "InvalidParameterValue",
      400,
    );
    await expectSqsError(
      h.sqs.send(new ListMessageMoveTasksCommand({ SourceArn: arnOf("dlq"), MaxResults: 11 })),
      "InvalidParameterValue",
      400,
    );
    await expectSqsError(
      h.sqs.send(new ListMessageMoveTasksCommand({ SourceArn: arnOf("absent") })),
      "ResourceNotFoundException",
      400,
    );
    await expectSqsError(
      h.sqs.send(new CancelMessageMoveTaskCommand({ TaskHandle: "garbage" })),
      "InvalidParameterValue",
      400,
    );
    expect((await h.sqs.send(new ListMessageMoveTasksCommand({ SourceArn: arnOf("dlq") }))).Results ?? []).toEqual([]);
  });
});
