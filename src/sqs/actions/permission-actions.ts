import { create } from "@bufbuild/protobuf";
import { QueueConfigSchema } from "../../../gen/holdshelf/v1/queue_pb.js";
import { withoutPermission, withPermission } from "../queue-policy.js";
import { sqsErrors } from "../sqs-error.js";
import { requiredString, stringList } from "../sqs-input.js";
import type { SqsAction, SqsActionContext } from "./action-context.js";
import { queueOfRequest } from "./queue-of-request.js";

/**
 * AddPermission: a statement added to the queue's policy, as SQS writes it
 * (queue-policy.ts). The policy is kept and shown, never enforced: the
 * access keys' file decides what a caller may do (docs/sqs.md).
 */
export const addPermission: SqsAction = async (input, context) => {
  const name = queueOfRequest(input, context);
  const label = requiredString(input, "Label");
  const permission = { label, accountIds: stringList(input, "AWSAccountIds"), actions: stringList(input, "Actions") };
  await editPolicy(name, context, (policy, arn) => withPermission(policy, arn, permission));
  return {};
};

/** RemovePermission: the statement with the label removed from the queue's policy. */
export const removePermission: SqsAction = async (input, context) => {
  const name = queueOfRequest(input, context);
  const label = requiredString(input, "Label");
  await editPolicy(name, context, (policy, arn) => withoutPermission(policy, arn, label));
  return {};
};

/**
 * Reads the queue's policy, edits it and writes back only access_policy
 * (an update_mask), so that other settings changed meanwhile stay. Two
 * permission edits of one queue at the same moment may lose one: SQS
 * clients make them from infrastructure code, one at a time.
 */
async function editPolicy(
  name: string,
  context: SqsActionContext,
  edit: (policy: string, queueArn: string) => string,
): Promise<void> {
  const { queue } = await context.queues.call("getQueue", { name });
  if (queue === undefined) throw sqsErrors.queueDoesNotExist();
  const accessPolicy = edit(queue.config?.accessPolicy ?? "", context.urls.arnOf(name));
  await context.queues.call("updateQueue", {
    name,
    config: create(QueueConfigSchema, { accessPolicy }),
    updateMask: { paths: ["access_policy"] },
  });
}
