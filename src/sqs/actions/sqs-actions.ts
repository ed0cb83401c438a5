import type { SqsAction } from "./action-context.js";
import {
  changeMessageVisibility,
  changeMessageVisibilityBatch,
  deleteMessage,
  deleteMessageBatch,
  receiveMessage,
} from "./message-actions.js";
import { addPermission, removePermission } from "./permission-actions.js";
import { cancelMessageMoveTask, listMessageMoveTasks, startMessageMoveTask } from "./move-task-actions.js";
import {
  createQueue,
  deleteQueue,
  getQueueAttributes,
  getQueueUrl,
  listDeadLetterSourceQueues,
  listQueues,
  listQueueTags,
  purgeQueue,
  setQueueAttributes,
  tagQueue,
  untagQueue,
} from "./queue-actions.js";
import { sendMessage, sendMessageBatch } from "./send-actions.js";

/** Every SQS action the endpoint knows, by its name on the wire; a name not here is InvalidAction. */
export const sqsActions: Readonly<Record<string, SqsAction>> = Object.freeze(
  Object.assign(Object.create(null) as Record<string, SqsAction>, {
    CreateQueue: createQueue,
    GetQueueUrl: getQueueUrl,
    ListQueues: listQueues,
    GetQueueAttributes: getQueueAttributes,
    SetQueueAttributes: setQueueAttributes,
    DeleteQueue: deleteQueue,
    PurgeQueue: purgeQueue,
    ListDeadLetterSourceQueues: listDeadLetterSourceQueues,
    TagQueue: tagQueue,
    UntagQueue: untagQueue,
    ListQueueTags: listQueueTags,
    SendMessage: sendMessage,
    SendMessageBatch: sendMessageBatch,
    ReceiveMessage: receiveMessage,
    DeleteMessage: deleteMessage,
    DeleteMessageBatch: deleteMessageBatch,
    ChangeMessageVisibility: changeMessageVisibility,
    ChangeMessageVisibilityBatch: changeMessageVisibilityBatch,
    AddPermission: addPermission,
    RemovePermission: removePermission,
    StartMessageMoveTask: startMessageMoveTask,
    ListMessageMoveTasks: listMessageMoveTasks,
    CancelMessageMoveTask: cancelMessageMoveTask,
  }),
);

/** The action names metrics label requests with: the known ones, and "unknown" for the rest (bounded labels). */
export function actionLabel(action: string): string {
  return Object.hasOwn(sqsActions, action) ? action : "unknown";
}
