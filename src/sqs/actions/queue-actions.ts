import { create } from "@bufbuild/protobuf";
import { QueueConfigSchema, type Queue } from "../../../gen/holdshelf/v1/queue_pb.js";
import { fifoNameSuffix } from "../../protocol/fifo-name-suffix.js";
import { mapKeyPath } from "../../protocol/update-mask-path.js";
import { maxTagKeyCharacters, maxTagValueCharacters } from "../../protocol/limits.js";
import { queueNamePattern } from "../../protocol/queue-name-pattern.js";
import { brokerFailure } from "../../service/broker-failure.js";
import { requestedFifo } from "../fifo-attributes.js";
import { applyQueueAttributes, attributeFields, conflictingAttribute, queueAttributes } from "../queue-attributes.js";
import { sqsErrors } from "../sqs-error.js";
import { missing, optionalInteger, optionalString, requiredString, stringList, stringMap } from "../sqs-input.js";
import type { SqsAction, SqsActionContext } from "./action-context.js";
import { queueOfRequest } from "./queue-of-request.js";

// Without MaxResults, SQS lists up to 1000 queues and no NextToken.
const listAllLimit = 1000;

/** CreateQueue: a new queue, or the URL of an existing one whose named attributes match. */
export const createQueue: SqsAction = async (input, context) => {
  // An empty name is a bad name to SQS (InvalidParameterValue), not a missing one.
  const name = optionalString(input, "QueueName");
  if (name === undefined) throw missing("QueueName");
  const attributes = stringMap(input, "Attributes");
  const fifo = requestedFifo(attributes);
  checkNewQueueName(name, fifo);
  const tags = stringMap(input, "tags");
  const config = applyQueueAttributes(create(QueueConfigSchema, { fifo }), attributes, context.urls);
  config.tags = Object.fromEntries(tags);
  // CreateQueue first, so the caller needs admin whether or not the queue exists.
  try {
    await context.queues.call("createQueue", { name, config });
    return { QueueUrl: context.urls.urlOf(name) };
  } catch (error) {
    if (brokerFailure(error)?.reason !== "QUEUE_ALREADY_EXISTS") throw tagRefusal(error, name) ?? error;
  }
  // It exists with another configuration: SQS compares only the attributes this request names.
  const queue = await getQueue(name, context);
  const conflict = conflictingAttribute(queue, attributes, context.urls);
  if (conflict !== undefined) {
    throw sqsErrors.queueNameExists(
      `A queue already exists with the same name and a different value for attribute ${conflict}`,
    );
  }
  return { QueueUrl: context.urls.urlOf(name) };
};

/** GetQueueUrl: the URL of an existing queue. */
export const getQueueUrl: SqsAction = async (input, context) => {
  const name = requiredString(input, "QueueName");
  const owner = optionalString(input, "QueueOwnerAWSAccountId");
  if (!queueNamePattern.test(name) || (owner !== undefined && owner !== context.urls.accountId))
    throw sqsErrors.queueDoesNotExist();
  await getQueue(name, context);
  return { QueueUrl: context.urls.urlOf(name) };
};

/** ListQueues: queue URLs by name prefix, paged only when MaxResults is given (as SQS pages). */
export const listQueues: SqsAction = async (input, context) => {
  const prefix = optionalString(input, "QueueNamePrefix") ?? "";
  const maxResults = optionalInteger(input, "MaxResults", 1, 1000);
  const pageToken = optionalString(input, "NextToken") ?? "";
  const page = await context.queues.call("listQueues", { prefix, pageSize: maxResults ?? listAllLimit, pageToken });
  return {
    QueueUrls: page.queues.map((queue) => context.urls.urlOf(queue.name)),
    ...(maxResults !== undefined && page.nextPageToken !== "" ? { NextToken: page.nextPageToken } : {}),
  };
};

/** GetQueueAttributes: the named attributes, or every one for "All". */
export const getQueueAttributes: SqsAction = async (input, context) => {
  const queue = await getQueue(queueOfRequest(input, context), context);
  const attributes = queueAttributes(queue, context.urls, stringList(input, "AttributeNames"));
  // Asked for nothing, SQS answers without the member at all.
  return Object.keys(attributes).length === 0 ? {} : { Attributes: attributes };
};

/** SetQueueAttributes: changes the named attributes and keeps every other setting. */
export const setQueueAttributes: SqsAction = async (input, context) => {
  const name = queueOfRequest(input, context);
  const attributes = stringMap(input, "Attributes");
  // The queue as it is tells its kind, which the FIFO attributes are checked against; it never changes.
  const { config = create(QueueConfigSchema) } = await getQueue(name, context);
  const fields = attributeFields(attributes);
  await context.queues.call("updateQueue", {
    name,
    config: applyQueueAttributes(config, attributes, context.urls),
    // Only FifoThroughputLimit, or nothing, named: "fifo" (which cannot change) keeps every field
    // and still moves LastModifiedTimestamp, where an empty mask would replace the whole configuration.
    updateMask: { paths: fields.length === 0 ? ["fifo"] : fields },
  });
  return {};
};

/** DeleteQueue. */
export const deleteQueue: SqsAction = async (input, context) => {
  const queue = queueOfRequest(input, context);
  await context.queues.call("deleteQueue", { name: queue });
  context.queueKinds.forget(queue);
  return {};
};

/**
 * PurgeQueue. SQS allows one purge a minute, because its purges take up to
 * a minute; holdshelf's is done when it answers, so only a purge of the same
 * queue still running is refused (PurgeQueueInProgress).
 */
export const purgeQueue: SqsAction = async (input, context) => {
  const name = queueOfRequest(input, context);
  // Looked up first: a caller without permission on the queue learns nothing, not even that a purge runs.
  await getQueue(name, context);
  if (context.purging.has(name)) {
    throw sqsErrors.purgeQueueInProgress(`Only one PurgeQueue operation on ${name} is allowed at a time.`);
  }
  context.purging.add(name);
  try {
    await context.queues.call("purgeQueue", { name });
  } finally {
    context.purging.delete(name);
  }
  return {};
};

/** ListDeadLetterSourceQueues: the queues whose redrive policy names this one (JSON spells the member `queueUrls`). */
export const listDeadLetterSourceQueues: SqsAction = async (input, context) => {
  const queue = await getQueue(queueOfRequest(input, context), context);
  const maxResults = optionalInteger(input, "MaxResults", 1, 1000);
  const after = optionalString(input, "NextToken") ?? "";
  const sources = [...queue.deadLetterSourceQueues].sort().filter((name) => name > after);
  const page = maxResults === undefined ? sources : sources.slice(0, maxResults);
  const more = maxResults !== undefined && sources.length > maxResults;
  return { queueUrls: page.map((name) => context.urls.urlOf(name)), ...(more ? { NextToken: page.at(-1) } : {}) };
};

/** TagQueue: adds or replaces tags. */
export const tagQueue: SqsAction = async (input, context) => {
  const name = queueOfRequest(input, context);
  const tags = stringMap(input, "Tags");
  if (tags.size === 0) throw sqsErrors.invalidParameterValue("The request must contain at least one tag.");
  await updateTags(name, context, Object.fromEntries(tags), [...tags.keys()]);
  return {};
};

/** UntagQueue: removes tags by key; absent keys are no error. */
export const untagQueue: SqsAction = async (input, context) => {
  const name = queueOfRequest(input, context);
  const keys = stringList(input, "TagKeys");
  if (keys.length === 0) throw sqsErrors.invalidParameterValue("The request must contain at least one tag key.");
  // No key SQS could store is that long: refused as a bad key, where the broker would merely find it absent.
  if (keys.some((key) => !tagKeyFits(key))) throw badTagKey();
  // A key named twice is removed once: the mask may name it only once.
  await updateTags(name, context, {}, [...new Set(keys)]);
  return {};
};

/** ListQueueTags. */
export const listQueueTags: SqsAction = async (input, context) => {
  const queue = await getQueue(queueOfRequest(input, context), context);
  const tags = queue.config?.tags ?? {};
  return Object.keys(tags).length === 0 ? {} : { Tags: { ...tags } };
};

/**
 * SQS's rule for a new queue's name: 1 to 80 characters of [A-Za-z0-9_-],
 * and a FIFO queue's (FifoQueue=true) ends in ".fifo", which no standard
 * queue's may.
 */
function checkNewQueueName(name: string, fifo: boolean): void {
  const wellFormed = queueNamePattern.test(name) && name.endsWith(fifoNameSuffix) === fifo;
  if (wellFormed) return;
  // AWS's wording is not recorded: these are LocalStack's and moto's words, which end without a period.
  throw sqsErrors.invalidParameterValue(
    fifo
      ? "The name of a FIFO queue can only include alphanumeric characters, hyphens, or underscores, must end with .fifo suffix and be 1 to 80 in length"
      : "Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length",
  );
}

/** Whether a tag key has SQS's 1 to 128 characters (code points, as the broker counts them). */
function tagKeyFits(key: string): boolean {
  const length = [...key].length;
  return length >= 1 && length <= maxTagKeyCharacters;
}

// moto's wording (AWS's has no record).
const badTagKey = () =>
  sqsErrors.invalidParameterValue(`Tag keys must be between 1 and ${maxTagKeyCharacters} characters in length.`);

/**
 * The SQS answer to the broker's refusal of a queue's tags, worded as SQS
 * clients read it rather than with the broker's field path
 * (`config.tags: …`); undefined for any other failure.
 */
function tagRefusal(error: unknown, queue: string): Error | undefined {
  const failure = brokerFailure(error);
  const field = failure?.reason === "INVALID_ARGUMENT" ? failure.violations[0]?.field : undefined;
  if (field === "config.tags") return sqsErrors.invalidParameterValue(`Too many tags added for queue ${queue}.`);
  if (field?.startsWith("config.tags[")) {
    return failure!.violations[0]!.description.startsWith("keys")
      ? badTagKey()
      : sqsErrors.invalidParameterValue(`Tag values must be at most ${maxTagValueCharacters} characters in length.`);
  }
  return undefined;
}

async function getQueue(name: string, context: SqsActionContext): Promise<Queue> {
  const { queue } = await context.queues.call("getQueue", { name });
  if (queue === undefined) throw sqsErrors.queueDoesNotExist();
  return queue;
}

/**
 * Sets the named tags to their values in `tags` and removes those it lacks,
 * with one update_mask path per key (tags.<key>, AIP-161), and without
 * reading the tags first: the broker merges each key into the tags as they
 * stand when it takes the change, so tag changes of other keys and changes
 * of other settings made meanwhile all stay. The 50-tag limit is checked on
 * the merged tags.
 */
async function updateTags(
  name: string,
  context: SqsActionContext,
  tags: Record<string, string>,
  keys: readonly string[],
): Promise<void> {
  try {
    await context.queues.call("updateQueue", {
      name,
      config: create(QueueConfigSchema, { tags }),
      updateMask: { paths: keys.map((key) => mapKeyPath("tags", key)) },
    });
  } catch (error) {
    throw tagRefusal(error, name) ?? error;
  }
}
