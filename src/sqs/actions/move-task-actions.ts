import { timestampMs } from "@bufbuild/protobuf/wkt";
import { MessageMoveTaskStatus, type MessageMoveTask } from "../../../gen/holdshelf/v1/queue_service_pb.js";
import { keptMoveTasks } from "../../protocol/kept-move-tasks.js";
import { maxMoveTaskRate } from "../../protocol/max-move-task-rate.js";
import { brokerFailure } from "../../service/broker-failure.js";
import { sqsErrors } from "../sqs-error.js";
import { optionalInteger, optionalString, requiredString } from "../sqs-input.js";
import type { SqsAction, SqsActionContext, SqsOutput } from "./action-context.js";

// SQS's bounds, which are the broker's own.
const maxMovesPerSecond = maxMoveTaskRate;
const maxListedTasks = keptMoveTasks;

/**
 * StartMessageMoveTask: holdshelf's move task, durable and resumed after a
 * restart. SQS takes only a dead-letter queue as the source; holdshelf takes
 * any queue, as its RedriveMessages does (messages that were never
 * dead-lettered stay without a DestinationArn).
 */
export const startMessageMoveTask: SqsAction = async (input, context) => {
  const sourceQueue = context.urls.queueOfArn(requiredString(input, "SourceArn"), "SourceArn");
  const destinationArn = optionalString(input, "DestinationArn");
  const destinationQueue =
    destinationArn === undefined || destinationArn === ""
      ? ""
      : context.urls.queueOfArn(destinationArn, "DestinationArn");
  const maxPerSecond = optionalInteger(input, "MaxNumberOfMessagesPerSecond", 1, maxMovesPerSecond) ?? 0;
  try {
    const { taskHandle } = await context.queues.call("startMessageMoveTask", {
      sourceQueue,
      destinationQueue,
      maxPerSecond,
    });
    return { TaskHandle: taskHandle };
  } catch (error) {
    if (brokerFailure(error)?.reason === "QUEUE_NOT_FOUND")
      throw sqsErrors.resourceNotFound("The source or destination queue does not exist.");
    throw error;
  }
};

/** ListMessageMoveTasks: a source queue's last tasks, newest first. */
export const listMessageMoveTasks: SqsAction = async (input, context) => {
  const sourceQueue = context.urls.queueOfArn(requiredString(input, "SourceArn"), "SourceArn");
  const maxResults = optionalInteger(input, "MaxResults", 1, maxListedTasks) ?? 1;
  try {
    const { tasks } = await context.queues.call("listMessageMoveTasks", { sourceQueue, maxResults });
    return { Results: tasks.map((task) => taskAnswer(task, context)) };
  } catch (error) {
    if (brokerFailure(error)?.reason === "QUEUE_NOT_FOUND")
      throw sqsErrors.resourceNotFound("The source queue does not exist.");
    throw error;
  }
};

/** CancelMessageMoveTask: stops a running task; the moves made stay. */
export const cancelMessageMoveTask: SqsAction = async (input, context) => {
  const taskHandle = requiredString(input, "TaskHandle");
  try {
    const { movedCount } = await context.queues.call("cancelMessageMoveTask", { taskHandle });
    return { ApproximateNumberOfMessagesMoved: Number(movedCount) };
  } catch (error) {
    const reason = brokerFailure(error)?.reason;
    if (reason === "MOVE_TASK_NOT_FOUND")
      throw sqsErrors.resourceNotFound("The task is not running: it ended, or its source queue is gone.");
    // The caller's text is not quoted back: it could be anything, of any length.
    if (reason === "INVALID_ARGUMENT")
      throw sqsErrors.invalidParameterValue(
        "Value for parameter TaskHandle is invalid: it is no handle StartMessageMoveTask returned.",
      );
    throw error;
  }
};

function taskAnswer(task: MessageMoveTask, context: SqsActionContext): SqsOutput {
  return {
    ...(task.taskHandle === "" ? {} : { TaskHandle: task.taskHandle }),
    Status: MessageMoveTaskStatus[task.status],
    SourceArn: context.urls.arnOf(task.sourceQueue),
    ...(task.destinationQueue === "" ? {} : { DestinationArn: context.urls.arnOf(task.destinationQueue) }),
    ...(task.maxPerSecond === 0 ? {} : { MaxNumberOfMessagesPerSecond: task.maxPerSecond }),
    ApproximateNumberOfMessagesMoved: Number(task.movedCount),
    ApproximateNumberOfMessagesToMove: Number(task.toMoveCount),
    ...(task.failureReason === "" ? {} : { FailureReason: task.failureReason }),
    StartedTimestamp: task.startTime === undefined ? 0 : timestampMs(task.startTime),
  };
}
