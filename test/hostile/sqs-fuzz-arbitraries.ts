import fc from "fast-check";

/** The kinds of value an SQS input member has in the JSON protocol. */
export type MemberKind = "string" | "integer" | "stringList" | "stringMap" | "entries" | "attributeMap";

/** An action's members, by kind; batch entries' members apart. */
export interface ActionMembers {
  readonly members: Readonly<Record<string, MemberKind>>;
  /** The members of each entry of `Entries`. */
  readonly entry?: Readonly<Record<string, MemberKind>>;
}

const sendMembers = {
  MessageBody: "string",
  DelaySeconds: "integer",
  MessageAttributes: "attributeMap",
  MessageSystemAttributes: "attributeMap",
  MessageDeduplicationId: "string",
  MessageGroupId: "string",
} as const;

/** Every action of the endpoint, with every member of its input (botocore's model and client-sqs's schema). */
export const actionMembers: Readonly<Record<string, ActionMembers>> = {
  CreateQueue: { members: { QueueName: "string", Attributes: "stringMap", tags: "stringMap" } },
  GetQueueUrl: { members: { QueueName: "string", QueueOwnerAWSAccountId: "string" } },
  ListQueues: { members: { QueueNamePrefix: "string", NextToken: "string", MaxResults: "integer" } },
  GetQueueAttributes: { members: { QueueUrl: "string", AttributeNames: "stringList" } },
  SetQueueAttributes: { members: { QueueUrl: "string", Attributes: "stringMap" } },
  DeleteQueue: { members: { QueueUrl: "string" } },
  PurgeQueue: { members: { QueueUrl: "string" } },
  ListDeadLetterSourceQueues: { members: { QueueUrl: "string", NextToken: "string", MaxResults: "integer" } },
  TagQueue: { members: { QueueUrl: "string", Tags: "stringMap" } },
  UntagQueue: { members: { QueueUrl: "string", TagKeys: "stringList" } },
  ListQueueTags: { members: { QueueUrl: "string" } },
  SendMessage: { members: { QueueUrl: "string", ...sendMembers } },
  SendMessageBatch: { members: { QueueUrl: "string", Entries: "entries" }, entry: { Id: "string", ...sendMembers } },
  ReceiveMessage: {
    members: {
      QueueUrl: "string",
      AttributeNames: "stringList",
      MessageSystemAttributeNames: "stringList",
      MessageAttributeNames: "stringList",
      MaxNumberOfMessages: "integer",
      VisibilityTimeout: "integer",
      WaitTimeSeconds: "integer",
      ReceiveRequestAttemptId: "string",
    },
  },
  DeleteMessage: { members: { QueueUrl: "string", ReceiptHandle: "string" } },
  DeleteMessageBatch: {
    members: { QueueUrl: "string", Entries: "entries" },
    entry: { Id: "string", ReceiptHandle: "string" },
  },
  ChangeMessageVisibility: { members: { QueueUrl: "string", ReceiptHandle: "string", VisibilityTimeout: "integer" } },
  ChangeMessageVisibilityBatch: {
    members: { QueueUrl: "string", Entries: "entries" },
    entry: { Id: "string", ReceiptHandle: "string", VisibilityTimeout: "integer" },
  },
  AddPermission: {
    members: { QueueUrl: "string", Label: "string", AWSAccountIds: "stringList", Actions: "stringList" },
  },
  RemovePermission: { members: { QueueUrl: "string", Label: "string" } },
  StartMessageMoveTask: {
    members: { SourceArn: "string", DestinationArn: "string", MaxNumberOfMessagesPerSecond: "integer" },
  },
  ListMessageMoveTasks: { members: { SourceArn: "string", MaxResults: "integer" } },
  CancelMessageMoveTask: { members: { TaskHandle: "string" } },
};

/** Every action name the endpoint knows. */
export const actionNames = Object.keys(actionMembers);

/**
 * A well-typed value of each kind, aimed at `queueUrl` (a queue that does
 * not exist, so that no well-typed request changes anything).
 */
export function validValue(
  kind: MemberKind,
  name: string,
  queueUrl: string,
  entry?: Readonly<Record<string, MemberKind>>,
): unknown {
  switch (kind) {
    case "string":
      if (name === "QueueUrl") return queueUrl;
      if (name === "QueueName") return queueUrl.slice(queueUrl.lastIndexOf("/") + 1);
      if (name === "MessageDeduplicationId" || name === "MessageGroupId" || name === "QueueOwnerAWSAccountId")
        return undefined;
      if (name === "SourceArn" || name === "DestinationArn") return "arn:aws:sqs:us-east-1:000000000000:fz-absent";
      return name === "Id" ? "e1" : "text";
    case "integer":
      return name === "MaxResults" || name === "MaxNumberOfMessages" ? 1 : 0;
    case "stringList":
      return name === "TagKeys" ? ["k"] : name.endsWith("AttributeNames") ? ["All"] : ["x"];
    case "stringMap":
      return name === "Attributes" ? { VisibilityTimeout: "5" } : { k: "v" };
    case "entries":
      return [validStructure(entry!, queueUrl)];
    case "attributeMap":
      return name === "MessageAttributes" ? { a: { DataType: "String", StringValue: "v" } } : undefined;
  }
}

/** A well-typed input of `action` (members with no good value left out). */
export function validStructure(
  members: Readonly<Record<string, MemberKind>>,
  queueUrl: string,
  entry?: Readonly<Record<string, MemberKind>>,
): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const [name, kind] of Object.entries(members)) {
    const value = validValue(kind, name, queueUrl, entry);
    if (value !== undefined) input[name] = value;
  }
  return input;
}

/** Property names that are Object.prototype's, or prototype pollution's favourites. */
export const prototypeKeys = [
  "__proto__",
  "constructor",
  "prototype",
  "toString",
  "hasOwnProperty",
  "valueOf",
  "__defineGetter__",
] as const;

// Strings kept clear of what the leak check looks for: an error that echoes them must still pass it.
const safeText = fc.string({
  unit: fc.constantFrom(..."abcXYZ019 -_.:/%+=&?#\u00e9\u4e2d\ud83d\ude00\t"),
  maxLength: 24,
});
const anyKey = fc.oneof(safeText, fc.constantFrom(...prototypeKeys));

/** JSON that nests `depth` levels deep, arrays and objects by turns. */
export function nestedJson(depth: number, leaf = "1"): string {
  let text = leaf;
  for (let level = 0; level < depth; level++)
    text = level % 2 === 0 ? `[${text}]` : `{"${prototypeKeys[level % prototypeKeys.length]}":${text}}`;
  return text;
}

/** Garbage JSON values of every type (never null: null is an absent member, which is legal). */
const garbage: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    safeText,
    fc.array(tie("value"), { maxLength: 3 }),
    fc.dictionary(anyKey, tie("value"), { maxKeys: 3 }),
  ),
})).value;

const notString = garbage.filter((value) => typeof value !== "string");
const notInteger = fc.oneof(
  garbage.filter((value) => typeof value !== "number"),
  // Numbers as strings, fractions, and integers far out of every range.
  fc.constantFrom("5", "0", "1", " 1", "1e1", "0x10"),
  fc.double({ noNaN: true, noDefaultInfinity: true }).filter((value) => !Number.isInteger(value)),
  fc.constantFrom(1e21, -1e21, 2 ** 53 + 2, -(2 ** 31) - 1, 2 ** 31),
);
const notStringList = fc.oneof(
  garbage.filter((value) => !Array.isArray(value)),
  fc.tuple(fc.array(safeText, { maxLength: 2 }), notString).map(([items, bad]) => [...items, bad]),
);
const notStringMap = fc.oneof(
  garbage.filter((value) => typeof value !== "object" || value === null || Array.isArray(value)),
  // Maps whose values are not strings: under prototype keys too.
  fc
    .tuple(anyKey, notString)
    .map(([key, bad]) => JSON.parse(`{${JSON.stringify(key)}:${JSON.stringify(bad)}}`) as unknown),
  fc.constant(["VisibilityTimeout", "5"]),
  fc.constant([{ Name: "VisibilityTimeout", Value: "5" }]),
);
const notStructure = garbage.filter((value) => typeof value !== "object" || value === null || Array.isArray(value));
const notEntries = fc.oneof(
  notStructure,
  fc.dictionary(anyKey, garbage, { minKeys: 1, maxKeys: 3 }),
  fc.array(notStructure, { minLength: 1, maxLength: 3 }),
);
const notAttributeMap = fc.oneof(
  fc.tuple(fc.constant(0), notStructure).map(([, value]) => value),
  fc
    .tuple(anyKey, notStructure)
    .map(([key, bad]) => JSON.parse(`{${JSON.stringify(key)}:${JSON.stringify(bad)}}`) as unknown),
  fc.constant([{ Name: "a", Value: { DataType: "String", StringValue: "v" } }]),
);

/** A value that is not of `kind`: what every reader of that member must refuse. */
export function wrongValue(kind: MemberKind): fc.Arbitrary<unknown> {
  switch (kind) {
    case "string":
      return notString;
    case "integer":
      return notInteger;
    case "stringList":
      return notStringList;
    case "stringMap":
      return notStringMap;
    case "entries":
      return notEntries;
    case "attributeMap":
      return notAttributeMap;
  }
}

/** A JSON request: an action's input with one member (top-level or in the first entry) of the wrong type, and prototype keys mixed in. */
export interface MistypedRequest {
  readonly action: string;
  readonly member: string;
  readonly body: string;
}

/** Requests of every action, each with one member of the wrong type, aimed at `queueUrl`. */
export function mistypedRequests(
  queueUrl: string,
  actions: readonly string[] = actionNames,
): fc.Arbitrary<MistypedRequest> {
  return fc.constantFrom(...actions).chain((action) => {
    const { members, entry } = actionMembers[action]!;
    const targets = [
      ...Object.entries(members).map(([name, kind]) => ({ path: [name], kind })),
      ...Object.entries(entry ?? {}).map(([name, kind]) => ({ path: ["Entries", name], kind })),
    ];
    return fc
      .record({
        target: fc.constantFrom(...targets),
        extra: fc.dictionary(fc.constantFrom(...prototypeKeys), garbage, { maxKeys: 2 }),
      })
      .chain(({ target, extra }) =>
        wrongValue(target.kind).map((bad) => {
          const input = validStructure(members, queueUrl, entry);
          if (target.path.length === 1) input[target.path[0]!] = bad;
          else (input["Entries"] as Record<string, unknown>[])[0]![target.path[1]!] = bad;
          // Prototype keys as own members: JSON.parse makes "__proto__" an own key, and so must the reader see it.
          const body = JSON.stringify(input).replace(/^\{/, () => {
            const keys = Object.entries(extra).map(([key, value]) => `${JSON.stringify(key)}:${JSON.stringify(value)}`);
            return keys.length === 0 ? "{" : `{${keys.join(",")},`;
          });
          return { action, member: target.path.join("."), body };
        }),
      );
  });
}

/** Bodies that are not a JSON object at all, or not UTF-8. */
export const brokenJsonBodies: fc.Arbitrary<Buffer> = fc.oneof(
  fc
    .constantFrom(
      "[]",
      "42",
      '"x"',
      "null",
      "true",
      "{",
      '{"QueueUrl":',
      '{"a":1,}',
      "{'a':1}",
      '{"a":1}}',
      "\u0000",
      '{"a":"\\ud800"',
      "NaN",
      '{"a": 01}',
      " ",
    )
    .map((text) => Buffer.from(text)),
  // Invalid UTF-8 inside an otherwise well-formed object.
  fc
    .constantFrom([0xff], [0xc3, 0x28], [0xe2, 0x82], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xc0, 0xaf])
    .map((bytes) => Buffer.concat([Buffer.from('{"QueueName":"'), Buffer.from(bytes), Buffer.from('"}')])),
  // A well-formed body cut anywhere short of its end.
  fc
    .tuple(
      fc.constantFrom(
        '{"QueueUrl":"http://127.0.0.1/000000000000/fz-a","MessageBody":"cut"}',
        '{"Entries":[{"Id":"a","ReceiptHandle":"h"}]}',
      ),
      fc.nat(),
    )
    .map(([text, at]) => Buffer.from(text.slice(0, 1 + (at % (text.length - 1))))),
  fc
    .uint8Array({ minLength: 1, maxLength: 64 })
    .map((bytes) => Buffer.concat([Buffer.from([0x7b, 0xff]), Buffer.from(bytes)])),
  fc.integer({ min: 2, max: 5000 }).map((depth) => Buffer.from(`{"a":${"[".repeat(depth)}`)),
);

/** Query-form pieces that break a form: half map entries, absurd indexes, repeated and empty keys, bad percent escapes. */
export const hostileFormPieces: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    "Attribute.99999999999.Name=VisibilityTimeout",
    "Attribute.99999999999999999999999999.Value=5",
    "Attribute.1.Name=VisibilityTimeout",
    "Attribute.1.Value=5",
    "Attribute.0.Name=VisibilityTimeout&Attribute.0.Value=5",
    "Attribute.01.Name=x&Attribute.01.Value=y",
    "Attribute.-1.Name=x",
    "Attribute.__proto__.Name=x&Attribute.__proto__.Value=y",
    "Attribute.1.__proto__=x",
    "__proto__.polluted=yes",
    "constructor.prototype.polluted=yes",
    "Attribute..Name=x",
    "Attribute.1.Name.Extra=x",
    "...=.",
    "=",
    "==",
    "&&&",
    "a=%",
    "a=%Z",
    "%ZZ=1",
    "a=%C3%28",
    "a=%FF%FE",
    "Tag.1.Key=k",
    "Tag.1.Value=v",
    "MessageAttribute.1.Name=a",
    "MessageAttribute.1.Value.DataType=String",
    "MessageAttribute.1.Name=a&MessageAttribute.1.Value.StringValue=v",
    "MaxNumberOfMessages=ten",
    "MaxNumberOfMessages=99999999999999999999999",
    "VisibilityTimeout=1.5",
    "DelaySeconds=-",
    "WaitTimeSeconds=%00",
    "MaxResults=0x10",
    "AttributeName.1=All&AttributeName.1=Nope",
    "Entries=",
    "DeleteMessageBatchRequestEntry.1.Id=a",
    "SendMessageBatchRequestEntry.99999999999.Id=a",
    "Version=1999-01-01",
  ),
  fc.tuple(safeText, safeText).map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(value)}`),
  fc.nat({ max: 10 ** 9 }).map((index) => `Attribute.${index}.Name=VisibilityTimeout`),
);
