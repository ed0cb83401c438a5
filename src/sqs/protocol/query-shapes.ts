/**
 * The SQS operations' shapes as the query protocol names them, written by
 * hand from botocore's query model (botocore/data/sqs/2012-11-05/service-2.json,
 * 1.29) and, for what that model lacks (the message-move tasks,
 * MessageSystemAttributeNames), from @aws-sdk/client-sqs's schema, whose
 * xmlName and xmlFlattened traits are the same conventions.
 *
 * Members carry the JSON protocol's names (as @aws-sdk/client-sqs's types
 * do) and, apart, the names they have on the query wire. Every list and map
 * of SQS is flattened, so only flattened ones are described: a list's items
 * are `Item.1`, `Item.2` in a request and repeated `<Item>` in an answer; a
 * map's entries are `Entry.1.Key`/`Entry.1.Value` and repeated
 * `<Entry><Key/><Value/></Entry>`.
 */

/** A shape of the model, reduced to what the query wire needs. */
export type QueryShape = ScalarShape | ListShape | MapShape | StructureShape;

/** A value written as text: integers and longs as decimal numbers, booleans as true/false, blobs as base64. */
export interface ScalarShape {
  readonly type: "string" | "integer" | "long" | "boolean" | "blob";
}

/** A flattened list; its items' wire name is the member's `wireName`. */
export interface ListShape {
  readonly type: "list";
  readonly item: QueryShape;
}

/** A flattened map; its keys are strings, as every SQS map's are. */
export interface MapShape {
  readonly type: "map";
  readonly keyName: string;
  readonly valueName: string;
  readonly value: QueryShape;
}

export interface StructureShape {
  readonly type: "structure";
  readonly members: readonly QueryMember[];
}

/** A member of a structure. */
export interface QueryMember {
  /** Its name in the JSON protocol, e.g. "Attributes", "tags", "queueUrls". */
  readonly name: string;
  /** Its name on the query wire: the locationName, or for a flattened list its items' locationName. */
  readonly wireName: string;
  /** For a list: the name botocore sends an empty list under (`Entries=`), its member's own serialized name. */
  readonly emptyListName?: string;
  readonly shape: QueryShape;
}

/** An operation: its input, and its output (absent for the operations whose answer is only ResponseMetadata). */
export interface QueryOperation {
  readonly input: StructureShape;
  readonly output?: StructureShape;
}

const string: ScalarShape = { type: "string" };
const integer: ScalarShape = { type: "integer" };
const long: ScalarShape = { type: "long" };
const boolean: ScalarShape = { type: "boolean" };
const blob: ScalarShape = { type: "blob" };

const structure = (...members: QueryMember[]): StructureShape => ({ type: "structure", members });
const member = (name: string, shape: QueryShape, wireName = name): QueryMember => ({ name, wireName, shape });
const listMember = (name: string, itemName: string, item: QueryShape, emptyListName = name): QueryMember => ({
  name,
  wireName: itemName,
  emptyListName,
  shape: { type: "list", item },
});
const mapMember = (
  name: string,
  wireName: string,
  keyName: string,
  valueName: string,
  value: QueryShape,
): QueryMember => ({
  name,
  wireName,
  shape: { type: "map", keyName, valueName, value },
});

const queueUrl = member("QueueUrl", string);

// MessageAttributeValue and MessageSystemAttributeValue: the same members.
// The list members are flattened on the member itself, and that member has
// a locationName, so botocore sends an empty one as `…Value.StringListValue=`.
const attributeValue = structure(
  member("StringValue", string),
  member("BinaryValue", blob),
  listMember("StringListValues", "StringListValue", string, "StringListValue"),
  listMember("BinaryListValues", "BinaryListValue", blob, "BinaryListValue"),
  member("DataType", string),
);
const queueAttributes = mapMember("Attributes", "Attribute", "Name", "Value", string);
const messageAttributes = mapMember("MessageAttributes", "MessageAttribute", "Name", "Value", attributeValue);
const messageSystemAttributes = mapMember(
  "MessageSystemAttributes",
  "MessageSystemAttribute",
  "Name",
  "Value",
  attributeValue,
);
// TagQueue's Tags has no locationName of its own: the TagMap shape's ("Tag") applies.
const tagMap = (name: string): QueryMember => mapMember(name, "Tag", "Key", "Value", string);

const sendEntryMembers = [
  member("MessageBody", string),
  member("DelaySeconds", integer),
  messageAttributes,
  messageSystemAttributes,
  member("MessageDeduplicationId", string),
  member("MessageGroupId", string),
];
const batchResultErrorEntries = listMember(
  "Failed",
  "BatchResultErrorEntry",
  structure(member("Id", string), member("SenderFault", boolean), member("Code", string), member("Message", string)),
);
const idOnly = structure(member("Id", string));

const message = structure(
  member("MessageId", string),
  member("ReceiptHandle", string),
  member("MD5OfBody", string),
  member("Body", string),
  mapMember("Attributes", "Attribute", "Name", "Value", string),
  member("MD5OfMessageAttributes", string),
  messageAttributes,
);

const moveTask = structure(
  member("TaskHandle", string),
  member("Status", string),
  member("SourceArn", string),
  member("DestinationArn", string),
  member("MaxNumberOfMessagesPerSecond", integer),
  member("ApproximateNumberOfMessagesMoved", long),
  member("ApproximateNumberOfMessagesToMove", long),
  member("FailureReason", string),
  member("StartedTimestamp", long),
);

/** Every SQS operation by its action name; a Map, so that no name finds an Object.prototype property. */
export const queryOperations: ReadonlyMap<string, QueryOperation> = new Map<string, QueryOperation>([
  [
    "AddPermission",
    {
      input: structure(
        queueUrl,
        member("Label", string),
        listMember("AWSAccountIds", "AWSAccountId", string),
        listMember("Actions", "ActionName", string),
      ),
    },
  ],
  [
    "ChangeMessageVisibility",
    { input: structure(queueUrl, member("ReceiptHandle", string), member("VisibilityTimeout", integer)) },
  ],
  [
    "ChangeMessageVisibilityBatch",
    {
      input: structure(
        queueUrl,
        listMember(
          "Entries",
          "ChangeMessageVisibilityBatchRequestEntry",
          structure(member("Id", string), member("ReceiptHandle", string), member("VisibilityTimeout", integer)),
        ),
      ),
      output: structure(
        listMember("Successful", "ChangeMessageVisibilityBatchResultEntry", idOnly),
        batchResultErrorEntries,
      ),
    },
  ],
  [
    "CreateQueue",
    { input: structure(member("QueueName", string), queueAttributes, tagMap("tags")), output: structure(queueUrl) },
  ],
  ["DeleteMessage", { input: structure(queueUrl, member("ReceiptHandle", string)) }],
  [
    "DeleteMessageBatch",
    {
      input: structure(
        queueUrl,
        listMember(
          "Entries",
          "DeleteMessageBatchRequestEntry",
          structure(member("Id", string), member("ReceiptHandle", string)),
        ),
      ),
      output: structure(listMember("Successful", "DeleteMessageBatchResultEntry", idOnly), batchResultErrorEntries),
    },
  ],
  ["DeleteQueue", { input: structure(queueUrl) }],
  [
    "GetQueueAttributes",
    {
      input: structure(queueUrl, listMember("AttributeNames", "AttributeName", string)),
      output: structure(queueAttributes),
    },
  ],
  [
    "GetQueueUrl",
    {
      input: structure(member("QueueName", string), member("QueueOwnerAWSAccountId", string)),
      output: structure(queueUrl),
    },
  ],
  [
    "ListDeadLetterSourceQueues",
    {
      input: structure(queueUrl, member("NextToken", string), member("MaxResults", integer)),
      output: structure(listMember("queueUrls", "QueueUrl", string), member("NextToken", string)),
    },
  ],
  ["ListQueueTags", { input: structure(queueUrl), output: structure(tagMap("Tags")) }],
  [
    "ListQueues",
    {
      input: structure(member("QueueNamePrefix", string), member("NextToken", string), member("MaxResults", integer)),
      output: structure(listMember("QueueUrls", "QueueUrl", string), member("NextToken", string)),
    },
  ],
  ["PurgeQueue", { input: structure(queueUrl) }],
  [
    "ReceiveMessage",
    {
      input: structure(
        queueUrl,
        listMember("AttributeNames", "AttributeName", string),
        // The model's wire name for MessageSystemAttributeNames is AttributeName too
        // (client-sqs's schema), so query clients' AttributeName.N decode as
        // AttributeNames; MessageSystemAttributeName.N is accepted for clients that
        // follow the member's name instead.
        listMember("MessageSystemAttributeNames", "MessageSystemAttributeName", string),
        listMember("MessageAttributeNames", "MessageAttributeName", string),
        member("MaxNumberOfMessages", integer),
        member("VisibilityTimeout", integer),
        member("WaitTimeSeconds", integer),
        member("ReceiveRequestAttemptId", string),
      ),
      output: structure(listMember("Messages", "Message", message)),
    },
  ],
  ["RemovePermission", { input: structure(queueUrl, member("Label", string)) }],
  [
    "SendMessage",
    {
      input: structure(queueUrl, ...sendEntryMembers),
      output: structure(
        member("MD5OfMessageBody", string),
        member("MD5OfMessageAttributes", string),
        member("MD5OfMessageSystemAttributes", string),
        member("MessageId", string),
        member("SequenceNumber", string),
      ),
    },
  ],
  [
    "SendMessageBatch",
    {
      input: structure(
        queueUrl,
        listMember("Entries", "SendMessageBatchRequestEntry", structure(member("Id", string), ...sendEntryMembers)),
      ),
      output: structure(
        listMember(
          "Successful",
          "SendMessageBatchResultEntry",
          structure(
            member("Id", string),
            member("MessageId", string),
            member("MD5OfMessageBody", string),
            member("MD5OfMessageAttributes", string),
            member("MD5OfMessageSystemAttributes", string),
            member("SequenceNumber", string),
          ),
        ),
        batchResultErrorEntries,
      ),
    },
  ],
  ["SetQueueAttributes", { input: structure(queueUrl, queueAttributes) }],
  ["TagQueue", { input: structure(queueUrl, tagMap("Tags")) }],
  ["UntagQueue", { input: structure(queueUrl, listMember("TagKeys", "TagKey", string)) }],
  // Not in botocore 1.29's query model: from client-sqs's schema.
  [
    "StartMessageMoveTask",
    {
      input: structure(
        member("SourceArn", string),
        member("DestinationArn", string),
        member("MaxNumberOfMessagesPerSecond", integer),
      ),
      output: structure(member("TaskHandle", string)),
    },
  ],
  [
    "CancelMessageMoveTask",
    {
      input: structure(member("TaskHandle", string)),
      output: structure(member("ApproximateNumberOfMessagesMoved", long)),
    },
  ],
  [
    "ListMessageMoveTasks",
    {
      input: structure(member("SourceArn", string), member("MaxResults", integer)),
      output: structure(listMember("Results", "ListMessageMoveTasksResultEntry", moveTask)),
    },
  ],
]);
