/**
 * The SQS query protocol's translation, proved with the real client's code:
 * request bodies written by Debian's botocore 1.29 (the serializer boto3 and
 * awscli use) decode to the JSON protocol's input, and the XML answers and
 * errors we write read back, through botocore's own query parser, as exactly
 * the output we encoded. Then what no client sends: hostile forms.
 */
import { spawnSync } from "node:child_process";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeQueryRequest, encodeQueryError, encodeQueryResponse } from "../../src/sqs/protocol/query-protocol.js";
import { escapeXmlText } from "../../src/sqs/protocol/xml-writer.js";
import { SqsError, sqsErrors } from "../../src/sqs/sqs-error.js";
import { skipWithout } from "../support/required-tools.js";
import { systemPython } from "../support/python-package.js";

// Debian's python3-botocore, for /usr/bin/python3: PATH's python3 may be a pyenv without it. CI must install it (.ci/run).
const missing = spawnSync(systemPython, ["-c", "import botocore"]).status === 0 ? [] : ["python3-botocore"];

// Reads jobs as JSON on stdin and answers one result per job: a request
// serialized by botocore's query serializer (on 1.29's model, plus what it
// lacks written in its conventions), an answer parsed by its query parser,
// or an error answer met by a whole client call.
const botocoreWire = `
# Drives Debian's botocore (1.29) for test/sqs/query-protocol.test.ts: reads
# jobs as JSON on stdin, answers one JSON result per job on stdout.
import base64, copy, json, sys
import botocore.session
from botocore.awsrequest import AWSResponse, create_request_object, prepare_request_dict
from botocore.config import Config
from botocore.exceptions import ClientError
from botocore.model import ServiceModel
from botocore.parsers import create_parser
from botocore.serialize import create_serializer

session = botocore.session.get_session()
data = copy.deepcopy(session.get_service_data("sqs"))
# What 1.29's model lacks, written in its query conventions from
# @aws-sdk/client-sqs's schema: the move-task operations, and
# MessageSystemAttributeNames, whose wire name is AttributeName.
shapes, operations = data["shapes"], data["operations"]
def operation(name, output):
    operations[name] = {"name": name, "http": {"method": "POST", "requestUri": "/"}, "input": {"shape": name + "Request"}}
    if output:
        operations[name]["output"] = {"shape": name + "Result", "resultWrapper": name + "Result"}
def struct(*members, required=()):
    return {"type": "structure", "required": list(required), "members": {name: {"shape": shape} for name, shape in members}}
shapes["Long"] = {"type": "long"}
shapes["StartMessageMoveTaskRequest"] = struct(
    ("SourceArn", "String"), ("DestinationArn", "String"), ("MaxNumberOfMessagesPerSecond", "BoxedInteger"), required=["SourceArn"])
shapes["StartMessageMoveTaskResult"] = struct(("TaskHandle", "String"))
shapes["CancelMessageMoveTaskRequest"] = struct(("TaskHandle", "String"), required=["TaskHandle"])
shapes["CancelMessageMoveTaskResult"] = struct(("ApproximateNumberOfMessagesMoved", "Long"))
shapes["ListMessageMoveTasksRequest"] = struct(("SourceArn", "String"), ("MaxResults", "BoxedInteger"), required=["SourceArn"])
shapes["ListMessageMoveTasksResult"] = struct(("Results", "ListMessageMoveTasksResultEntryList"))
shapes["ListMessageMoveTasksResultEntryList"] = {
    "type": "list", "flattened": True,
    "member": {"shape": "ListMessageMoveTasksResultEntry", "locationName": "ListMessageMoveTasksResultEntry"}}
shapes["ListMessageMoveTasksResultEntry"] = struct(
    ("TaskHandle", "String"), ("Status", "String"), ("SourceArn", "String"), ("DestinationArn", "String"),
    ("MaxNumberOfMessagesPerSecond", "BoxedInteger"), ("ApproximateNumberOfMessagesMoved", "Long"),
    ("ApproximateNumberOfMessagesToMove", "Long"), ("FailureReason", "String"), ("StartedTimestamp", "Long"))
operation("StartMessageMoveTask", True)
operation("CancelMessageMoveTask", True)
operation("ListMessageMoveTasks", True)
shapes["MessageSystemAttributeList"] = {"type": "list", "flattened": True, "member": {"shape": "String", "locationName": "AttributeName"}}
shapes["ReceiveMessageRequest"]["members"]["MessageSystemAttributeNames"] = {"shape": "MessageSystemAttributeList"}
model = ServiceModel(data, "sqs")

def to_bytes(value):
    """JSON carries blobs as base64; botocore's callers pass bytes."""
    if isinstance(value, dict):
        return {k: base64.b64decode(v) if k == "BinaryValue"
                else [base64.b64decode(b) for b in v] if k == "BinaryListValues"
                else to_bytes(v) for k, v in value.items()}
    if isinstance(value, list):
        return [to_bytes(v) for v in value]
    return value

def to_json(value):
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, dict):
        return {k: to_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [to_json(v) for v in value]
    return value

def request(job):
    # The serializer validates the parameters first, as a client does.
    serialized = create_serializer("query").serialize_to_request(to_bytes(job["params"]), model.operation_model(job["operation"]))
    prepare_request_dict(serialized, endpoint_url="http://localhost")
    return {"body": create_request_object(serialized).prepare().body}

def response(job):
    shape = model.operation_model(job["operation"]).output_shape
    parsed = create_parser("query").parse({"body": job["xml"].encode("utf-8"), "headers": {}, "status_code": 200}, shape)
    metadata = parsed.pop("ResponseMetadata")
    return {"output": to_json(parsed), "requestId": metadata.get("RequestId")}

class Body:
    def __init__(self, data):
        self.data = data
    def stream(self, **kwargs):
        yield self.data

def error(job):
    """A whole client call answered with the error: what boto3 users catch."""
    client = session.create_client("sqs", region_name="us-east-1", endpoint_url="http://localhost:9",
        aws_access_key_id="key", aws_secret_access_key="secret", config=Config(retries={"total_max_attempts": 1}))
    answer = lambda request, **kwargs: AWSResponse(request.url, job["status"], {"Content-Type": "text/xml"}, Body(job["xml"].encode("utf-8")))
    client.meta.events.register("before-send.sqs", answer)
    try:
        client.get_queue_url(QueueName="q")
    except ClientError as e:
        return {"exception": type(e).__name__, "error": e.response["Error"], "requestId": e.response["ResponseMetadata"].get("RequestId"),
                "status": e.response["ResponseMetadata"]["HTTPStatusCode"]}
    return {"exception": None}

jobs = json.loads(sys.stdin.buffer.read().decode("utf-8"))
print(json.dumps([{"request": request, "response": response, "error": error}[job["kind"]](job) for job in jobs]))
`;

type Job =
  | { kind: "request"; operation: string; params: Record<string, unknown> }
  | { kind: "response"; operation: string; xml: string }
  | { kind: "error"; status: number; xml: string };

function botocore<T>(jobs: Job[]): T[] {
  const run = spawnSync(systemPython, ["-c", botocoreWire], { input: JSON.stringify(jobs), encoding: "utf8" });
  expect(run.status, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as T[];
}

/** The body botocore sends for each call, decoded. */
function decodeAsSent(
  calls: [string, Record<string, unknown>][],
): { body: string; decoded: ReturnType<typeof decodeQueryRequest> }[] {
  const sent = botocore<{ body: string }>(calls.map(([operation, params]) => ({ kind: "request", operation, params })));
  return sent.map(({ body }) => ({ body, decoded: decodeQueryRequest(new URLSearchParams(body)) }));
}

/** What botocore reads from each answer we encode. */
function readBack(
  answers: [string, Record<string, unknown>][],
): { output: Record<string, unknown>; requestId: string }[] {
  return botocore<{ output: Record<string, unknown>; requestId: string }>(
    answers.map(([operation, output], index) => ({
      kind: "response",
      operation,
      xml: encodeQueryResponse(operation, output, `req-${index}`),
    })),
  );
}

// Bodies that XML mangles unless escaped: quotes, CR (parsers turn it into LF), markup, and text beyond ASCII.
const awkwardBodies = [
  "say \"hi\" and 'bye'",
  "carriage\rreturn",
  "crlf\r\nline\nlf\r\n",
  "<Body>&amp; &lt; ]]> </Body>",
  "héllo wörld, ñandú, 中文, Ελληνικά",
  "emoji 😀🎉 and 𝄞",
  "  spaces and\ttabs  ",
  "",
];
const tenBytes = Buffer.from([0, 1, 2, 0x7f, 0x80, 0xfe, 0xff, 0x3c, 0x26, 0x22]).toString("base64");

const everyAttributeType = {
  text: { DataType: "String", StringValue: 'a "quoted" <value> & more' },
  count: { DataType: "Number", StringValue: "-12.5e3" },
  blob: { DataType: "Binary", BinaryValue: tenBytes },
  "custom.int": { DataType: "Number.int", StringValue: "42" },
  "custom string": { DataType: "String.custom", StringValue: "ünïcode 😀" },
  png: { DataType: "Binary.png", BinaryValue: Buffer.from("\x89PNG\r\n").toString("base64") },
  lists: { DataType: "String", StringListValues: ["a", "b"], BinaryListValues: [tenBytes] },
};

describe.skipIf(skipWithout(missing))("query requests as botocore 1.29 writes them", () => {
  it("finds Debian's botocore", () => {
    expect(missing, "Debian's python3-botocore is missing (apt-get install python3-botocore)").toEqual([]);
  });

  // Every operation of botocore's model, each with its lists, maps and integers.
  const calls: [string, Record<string, unknown>][] = [
    [
      "CreateQueue",
      {
        QueueName: "orders.fifo",
        Attributes: {
          FifoQueue: "true",
          ContentBasedDeduplication: "true",
          RedrivePolicy: '{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq","maxReceiveCount":"5"}',
        },
        tags: { team: "core", "cost centre": "a&b=c+d%" },
      },
    ],
    ["GetQueueUrl", { QueueName: "orders", QueueOwnerAWSAccountId: "000000000000" }],
    ["ListQueues", { QueueNamePrefix: "ord", NextToken: "tok/en+==", MaxResults: 1000 }],
    [
      "GetQueueAttributes",
      { QueueUrl: "http://localhost:9324/000000000000/q", AttributeNames: ["All", "QueueArn", "VisibilityTimeout"] },
    ],
    [
      "SetQueueAttributes",
      { QueueUrl: "http://localhost/q", Attributes: { VisibilityTimeout: "60", Policy: '{"Version":"2012-10-17"}' } },
    ],
    ["DeleteQueue", { QueueUrl: "http://localhost/q" }],
    ["PurgeQueue", { QueueUrl: "http://localhost/q" }],
    [
      "SendMessage",
      {
        QueueUrl: "http://localhost/q.fifo",
        MessageBody: awkwardBodies.join("|"),
        DelaySeconds: 900,
        MessageAttributes: everyAttributeType,
        MessageSystemAttributes: {
          AWSTraceHeader: { DataType: "String", StringValue: "Root=1-5759e988-bd862e3fe1be46a994272793" },
        },
        MessageDeduplicationId: "dedup-1",
        MessageGroupId: "group-1",
      },
    ],
    [
      "SendMessageBatch",
      {
        QueueUrl: "http://localhost/q",
        // Ten entries: Entry.10 sorts after Entry.9, not after Entry.1.
        Entries: Array.from({ length: 10 }, (_, index) => ({
          Id: `m${index + 1}`,
          MessageBody: awkwardBodies[index % awkwardBodies.length],
          ...(index === 0 ? { DelaySeconds: 0, MessageAttributes: everyAttributeType } : {}),
          ...(index === 1 ? { MessageGroupId: "g", MessageDeduplicationId: "d" } : {}),
          ...(index === 2
            ? {
                MessageSystemAttributes: { AWSTraceHeader: { DataType: "String", StringValue: "Root=1" } },
                DelaySeconds: 7,
              }
            : {}),
        })),
      },
    ],
    [
      "ReceiveMessage",
      {
        QueueUrl: "http://localhost/q",
        AttributeNames: ["SenderId", "ApproximateReceiveCount", "All"],
        MessageAttributeNames: ["text", "custom.*", "All"],
        MaxNumberOfMessages: 10,
        VisibilityTimeout: 0,
        WaitTimeSeconds: 20,
        ReceiveRequestAttemptId: "attempt-1",
      },
    ],
    ["DeleteMessage", { QueueUrl: "http://localhost/q", ReceiptHandle: "AQEB+abc/def==" }],
    [
      "DeleteMessageBatch",
      {
        QueueUrl: "http://localhost/q",
        Entries: [
          { Id: "a", ReceiptHandle: "h1+/=" },
          { Id: "b", ReceiptHandle: "h2" },
        ],
      },
    ],
    ["ChangeMessageVisibility", { QueueUrl: "http://localhost/q", ReceiptHandle: "h", VisibilityTimeout: 43200 }],
    [
      "ChangeMessageVisibilityBatch",
      {
        QueueUrl: "http://localhost/q",
        Entries: [
          { Id: "a", ReceiptHandle: "h1", VisibilityTimeout: 30 },
          { Id: "b", ReceiptHandle: "h2" },
        ],
      },
    ],
    ["ListDeadLetterSourceQueues", { QueueUrl: "http://localhost/dlq", NextToken: "t", MaxResults: 5 }],
    ["TagQueue", { QueueUrl: "http://localhost/q", Tags: { owner: "ops", "": "empty key", blank: "" } }],
    ["UntagQueue", { QueueUrl: "http://localhost/q", TagKeys: ["owner", "blank"] }],
    ["ListQueueTags", { QueueUrl: "http://localhost/q" }],
    [
      "AddPermission",
      {
        QueueUrl: "http://localhost/q",
        Label: "share",
        AWSAccountIds: ["111111111111", "222222222222"],
        Actions: ["SendMessage", "ReceiveMessage"],
      },
    ],
    ["RemovePermission", { QueueUrl: "http://localhost/q", Label: "share" }],
    // Not in botocore 1.29's model: written in its conventions from client-sqs's schema.
    [
      "StartMessageMoveTask",
      {
        SourceArn: "arn:aws:sqs:us-east-1:0:dlq",
        DestinationArn: "arn:aws:sqs:us-east-1:0:q",
        MaxNumberOfMessagesPerSecond: 50,
      },
    ],
    ["CancelMessageMoveTask", { TaskHandle: "eyJ0YXNrIjoiMSJ9" }],
    ["ListMessageMoveTasks", { SourceArn: "arn:aws:sqs:us-east-1:0:dlq", MaxResults: 10 }],
  ];

  it("decodes every action's body to the input a JSON client sends, blobs as base64", () => {
    const sent = decodeAsSent(calls);
    calls.forEach(([operation, params], index) => {
      expect(sent[index]!.decoded, sent[index]!.body).toEqual({ action: operation, input: params });
    });
    // The wire is the flattened one, not JSON's names.
    const body = (operation: string) => sent[calls.findIndex(([name]) => name === operation)]!.body;
    expect(body("CreateQueue")).toContain("Attribute.1.Name=FifoQueue&Attribute.1.Value=true");
    expect(body("CreateQueue")).toContain("Tag.1.Key=team");
    expect(body("TagQueue")).toContain("Tag.1.Key=owner");
    expect(body("SendMessage")).toContain("MessageAttribute.3.Value.BinaryValue=");
    expect(body("SendMessage")).toContain("MessageAttribute.7.Value.StringListValue.2=b");
    expect(body("SendMessageBatch")).toContain("SendMessageBatchRequestEntry.10.Id=m10");
    expect(body("ReceiveMessage")).toContain("AttributeName.3=All&MessageAttributeName.1=text");
    expect(body("UntagQueue")).toContain("TagKey.2=blank");
    expect(body("AddPermission")).toContain("AWSAccountId.2=222222222222&ActionName.1=SendMessage");
    expect(body("ListMessageMoveTasks")).toBe(
      "Action=ListMessageMoveTasks&Version=2012-11-05&SourceArn=arn%3Aaws%3Asqs%3Aus-east-1%3A0%3Adlq&MaxResults=10",
    );
  });

  it("keeps lists and maps in index order past 9", () => {
    const names = Array.from({ length: 12 }, (_, index) => `Name${index + 1}`);
    const tags = Object.fromEntries(names.map((name, index) => [`k${index + 1}`, name]));
    const [attributes, tagged] = decodeAsSent([
      ["GetQueueAttributes", { QueueUrl: "u", AttributeNames: names }],
      ["TagQueue", { QueueUrl: "u", Tags: tags }],
    ]);
    expect(attributes!.decoded.input.AttributeNames).toEqual(names);
    expect(Object.keys(tagged!.decoded.input.Tags as object)).toEqual(Object.keys(tags));
  });

  it("decodes empty lists, which botocore writes as `Member=`, to empty lists for the action to answer", () => {
    const sent = decodeAsSent([
      ["SendMessageBatch", { QueueUrl: "u", Entries: [] }],
      ["GetQueueAttributes", { QueueUrl: "u", AttributeNames: [] }],
      [
        "SendMessage",
        { QueueUrl: "u", MessageBody: "b", MessageAttributes: { a: { DataType: "String", StringListValues: [] } } },
      ],
    ]);
    expect(sent.map(({ body }) => body)).toEqual([
      "Action=SendMessageBatch&Version=2012-11-05&QueueUrl=u&Entries=",
      "Action=GetQueueAttributes&Version=2012-11-05&QueueUrl=u&AttributeNames=",
      "Action=SendMessage&Version=2012-11-05&QueueUrl=u&MessageBody=b" +
        "&MessageAttribute.1.Name=a&MessageAttribute.1.Value.DataType=String&MessageAttribute.1.Value.StringListValue=",
    ]);
    expect(sent.map(({ decoded }) => decoded.input)).toEqual([
      { QueueUrl: "u", Entries: [] },
      { QueueUrl: "u", AttributeNames: [] },
      { QueueUrl: "u", MessageBody: "b", MessageAttributes: { a: { DataType: "String", StringListValues: [] } } },
    ]);
  });

  it("reads MessageSystemAttributeNames, whose wire name is AttributeName, as AttributeNames", () => {
    const [sent] = decodeAsSent([
      ["ReceiveMessage", { QueueUrl: "u", MessageSystemAttributeNames: ["SenderId", "All"] }],
    ]);
    expect(sent!.body).toBe(
      "Action=ReceiveMessage&Version=2012-11-05&QueueUrl=u&AttributeName.1=SenderId&AttributeName.2=All",
    );
    expect(sent!.decoded.input).toEqual({ QueueUrl: "u", AttributeNames: ["SenderId", "All"] });
    // The member's own name is accepted too, from clients that follow it.
    const named = decodeQueryRequest(
      new URLSearchParams("Action=ReceiveMessage&QueueUrl=u&MessageSystemAttributeName.1=SenderId"),
    );
    expect(named.input).toEqual({ QueueUrl: "u", MessageSystemAttributeNames: ["SenderId"] });
  });

  it("keeps a tag or attribute named __proto__ as a plain key", () => {
    const [sent] = decodeAsSent([
      ["TagQueue", { QueueUrl: "u", ...JSON.parse('{"Tags": {"__proto__": "x", "constructor": "y"}}') }],
    ]);
    const tags = sent!.decoded.input.Tags as Record<string, unknown>;
    expect(Object.getPrototypeOf(tags)).toBe(Object.prototype);
    expect(Object.entries(tags)).toEqual([
      ["__proto__", "x"],
      ["constructor", "y"],
    ]);
  });
});

describe.skipIf(skipWithout(missing))("query answers as botocore 1.29 reads them", () => {
  const message = (index: number, body: string) => ({
    MessageId: `5fea7756-0ea4-451a-a703-a558b933e27${index}`,
    ReceiptHandle: `AQEB${index}+/handle==`,
    MD5OfBody: "fafb00f5732ab283681e124bf8747ed1",
    Body: body,
    Attributes: {
      SenderId: "AIDAEXAMPLE",
      SentTimestamp: "1700000000000",
      ApproximateReceiveCount: "1",
      MessageGroupId: "g<&>",
    },
    MD5OfMessageAttributes: "19e27d4e946b072f3f58da80d94fd778",
    MessageAttributes: everyAttributeType,
  });
  const error = { Id: "bad", SenderFault: true, Code: "InvalidParameterValue", Message: 'Value "x" & <y>' };
  const answers: [string, Record<string, unknown>][] = [
    ["CreateQueue", { QueueUrl: "http://localhost:9324/000000000000/orders.fifo" }],
    ["GetQueueUrl", { QueueUrl: "http://localhost:9324/000000000000/a&b" }],
    ["ListQueues", { QueueUrls: ["http://h/0/a", "http://h/0/b", "http://h/0/c"], NextToken: "next+/=" }],
    [
      "GetQueueAttributes",
      {
        Attributes: {
          VisibilityTimeout: "30",
          Policy: '{"Statement":[{"Effect":"Allow"}]}',
          QueueArn: "arn:aws:sqs:us-east-1:0:q",
        },
      },
    ],
    [
      "SendMessage",
      {
        MD5OfMessageBody: "fafb00f5732ab283681e124bf8747ed1",
        MD5OfMessageAttributes: "19e27d4e946b072f3f58da80d94fd778",
        MD5OfMessageSystemAttributes: "5ae4d5d7636402d80f4eb6d213245a88",
        MessageId: "id-1",
        SequenceNumber: "18849496460467696128",
      },
    ],
    [
      "SendMessageBatch",
      {
        Successful: [
          { Id: "a", MessageId: "id-a", MD5OfMessageBody: "m", MD5OfMessageAttributes: "ma", SequenceNumber: "1" },
          { Id: "b", MessageId: "id-b", MD5OfMessageBody: "m", MD5OfMessageSystemAttributes: "ms" },
        ],
        Failed: [error, { Id: "late", SenderFault: false, Code: "InternalError" }],
      },
    ],
    ["ReceiveMessage", { Messages: awkwardBodies.map((body, index) => message(index, body)) }],
    ["DeleteMessageBatch", { Successful: [{ Id: "a" }], Failed: [error] }],
    ["ChangeMessageVisibilityBatch", { Successful: [{ Id: "a" }, { Id: "b" }], Failed: [error] }],
    ["ListDeadLetterSourceQueues", { queueUrls: ["http://h/0/a", "http://h/0/b"], NextToken: "t" }],
    ["ListQueueTags", { Tags: JSON.parse('{"__proto__": "p", "team": "core & ops", "": "empty"}') }],
    ["StartMessageMoveTask", { TaskHandle: "eyJ0YXNrIjoiMSJ9" }],
    ["CancelMessageMoveTask", { ApproximateNumberOfMessagesMoved: 1234567890123 }],
    [
      "ListMessageMoveTasks",
      {
        Results: [
          {
            TaskHandle: "h",
            Status: "RUNNING",
            SourceArn: "arn:s",
            DestinationArn: "arn:d",
            MaxNumberOfMessagesPerSecond: 10,
            ApproximateNumberOfMessagesMoved: 5,
            ApproximateNumberOfMessagesToMove: 100,
            StartedTimestamp: 1700000000000,
          },
          {
            Status: "FAILED",
            SourceArn: "arn:s",
            ApproximateNumberOfMessagesMoved: 0,
            FailureReason: "AccessDenied",
            StartedTimestamp: 1,
          },
        ],
      },
    ],
  ];

  it("reads back exactly the output of every action that has one, bodies and digests intact", () => {
    const read = readBack(answers);
    answers.forEach(([operation, output], index) => {
      expect(read[index], operation).toEqual({ output, requestId: `req-${index}` });
    });
  });

  it("writes CR as a reference and quotes as &quot;, so bodies survive parsing", () => {
    const xml = encodeQueryResponse("ReceiveMessage", { Messages: [{ Body: 'a"\r\nb<&>' }] }, "r");
    expect(xml).toContain("<Body>a&quot;&#xD;\nb&lt;&amp;&gt;</Body>");
  });

  it("writes the Result element even when empty, and leaves empty lists and maps out (as SQS does)", () => {
    const empty: [string, Record<string, unknown>][] = [
      ["ReceiveMessage", { Messages: [] }],
      ["GetQueueAttributes", { Attributes: {} }],
      ["ListQueues", { QueueUrls: [] }],
      ["SendMessageBatch", { Successful: [], Failed: [] }],
    ];
    expect(encodeQueryResponse("ReceiveMessage", { Messages: [] }, "r")).toBe(
      '<?xml version="1.0"?><ReceiveMessageResponse xmlns="http://queue.amazonaws.com/doc/2012-11-05/">' +
        "<ReceiveMessageResult></ReceiveMessageResult><ResponseMetadata><RequestId>r</RequestId></ResponseMetadata></ReceiveMessageResponse>",
    );
    expect(readBack(empty).map(({ output }) => output)).toEqual([{}, {}, {}, {}]);
  });

  it("answers the actions without output with ResponseMetadata alone", () => {
    const actions = ["DeleteQueue", "PurgeQueue", "SetQueueAttributes", "DeleteMessage", "ChangeMessageVisibility"];
    actions.push("TagQueue", "UntagQueue", "AddPermission", "RemovePermission");
    for (const action of actions) {
      expect(encodeQueryResponse(action, {}, "rid-<1>")).toBe(
        `<?xml version="1.0"?><${action}Response xmlns="http://queue.amazonaws.com/doc/2012-11-05/">` +
          `<ResponseMetadata><RequestId>rid-&lt;1&gt;</RequestId></ResponseMetadata></${action}Response>`,
      );
    }
    expect(readBack(actions.map((action) => [action, {}]))).toEqual(
      actions.map((_, index) => ({ output: {}, requestId: `req-${index}` })),
    );
  });

  it("refuses, as the dispatcher's mistake, an action with no shape or an output that does not fit its shape", () => {
    expect(() => encodeQueryResponse("Frobnicate", {}, "r")).toThrow(TypeError);
    expect(() => encodeQueryResponse("ListQueues", { QueueUrls: "not a list" }, "r")).toThrow(
      /ListQueues\.QueueUrls is not an array/,
    );
    expect(() => encodeQueryResponse("CancelMessageMoveTask", { ApproximateNumberOfMessagesMoved: 1.5 }, "r")).toThrow(
      TypeError,
    );
    expect(() => encodeQueryResponse("ReceiveMessage", { Messages: [{ Body: 7 }] }, "r")).toThrow(
      /Messages\[0\]\.Body is not a string/,
    );
  });

  it("writes errors that boto3 reports with their legacy code, message, type and status, as its modeled exceptions", () => {
    const errors: [SqsError, string][] = [
      [sqsErrors.queueDoesNotExist(), "QueueDoesNotExist"],
      [
        sqsErrors.queueNameExists("A queue already exists with the same name and a different value for attribute X"),
        "QueueNameExists",
      ],
      [
        sqsErrors.invalidParameterValue('Value "<x>" & \r\n for parameter VisibilityTimeout is invalid. Reason: 😀'),
        "ClientError",
      ],
      [sqsErrors.missingParameter("The request must contain the parameter QueueUrl."), "ClientError"],
      [
        sqsErrors.receiptHandleIsInvalid('The input receipt handle "AQEB" is not a valid receipt handle.'),
        "ReceiptHandleIsInvalid",
      ],
      [sqsErrors.overLimit("Too many messages in flight."), "OverLimit"],
      [
        sqsErrors.purgeQueueInProgress("Only one PurgeQueue operation on q is allowed every 60 seconds."),
        "PurgeQueueInProgress",
      ],
      [
        sqsErrors.tooManyEntriesInBatchRequest("Maximum number of entries per request are 10."),
        "TooManyEntriesInBatchRequest",
      ],
      [
        sqsErrors.emptyBatchRequest("There should be at least one SendMessageBatchRequestEntry in the request."),
        "EmptyBatchRequest",
      ],
      [sqsErrors.unsupportedOperation("Message move tasks are not supported."), "UnsupportedOperation"],
      [sqsErrors.invalidAction("Frobnicate"), "ClientError"],
      [sqsErrors.internalError(), "ClientError"],
    ];
    const met = botocore<{ exception: string; error: Record<string, unknown>; requestId: string; status: number }>(
      errors.map(([error], index) => ({
        kind: "error",
        status: error.httpStatus,
        xml: encodeQueryError(error, `err-${index}`),
      })),
    );
    errors.forEach(([error, exception], index) => {
      expect(met[index], error.legacyCode).toEqual({
        exception,
        error: { Type: error.fault, Code: error.legacyCode, Message: error.queryMessage, Detail: null },
        requestId: `err-${index}`,
        status: error.httpStatus,
      });
    });
  });
});

describe("query errors and escaping", () => {
  it("writes SQS's ErrorResponse document", () => {
    expect(encodeQueryError(sqsErrors.queueDoesNotExist(), "r-1")).toBe(
      '<?xml version="1.0"?><ErrorResponse xmlns="http://queue.amazonaws.com/doc/2012-11-05/"><Error><Type>Sender</Type>' +
        "<Code>AWS.SimpleQueueService.NonExistentQueue</Code><Message>The specified queue does not exist for this wsdl version.</Message><Detail/></Error>" +
        "<RequestId>r-1</RequestId></ErrorResponse>",
    );
    expect(encodeQueryError(sqsErrors.serviceUnavailable("down"), "r")).toContain(
      "<Type>Receiver</Type><Code>ServiceUnavailable</Code>",
    );
  });

  it("replaces what XML 1.0 cannot carry, even as a reference, with U+FFFD, and keeps tab, LF and astral characters", () => {
    expect(escapeXmlText("a\u0000b\u0008c\u001fd\uFFFEe\uFFFFf")).toBe("a\uFFFDb\uFFFDc\uFFFDd\uFFFDe\uFFFDf");
    expect(escapeXmlText("lone \uD800 and \uDC00")).toBe("lone \uFFFD and \uFFFD");
    expect(escapeXmlText("\t\n😀\uE000\uD7FF")).toBe("\t\n😀\uE000\uD7FF");
  });
});

describe("hostile query requests", () => {
  const decode = (query: string) => decodeQueryRequest(new URLSearchParams(query));
  const sqsErrorOf = (query: string): SqsError => {
    try {
      decode(query);
    } catch (error) {
      expect(error).toBeInstanceOf(SqsError);
      return error as SqsError;
    }
    return expect.fail(`${query} decoded`);
  };

  it("answers a request without Action with MissingAction", () => {
    for (const query of ["", "QueueUrl=u", "Action=", "action=ListQueues"]) {
      const error = sqsErrorOf(query);
      expect([error.legacyCode, error.message]).toEqual([
        "MissingAction",
        "The request must contain the parameter Action.",
      ]);
    }
  });

  it("gives an unknown action an empty input, for the dispatcher's InvalidAction, whatever its name", () => {
    for (const action of ["Frobnicate", "__proto__", "toString", "constructor", "hasOwnProperty", "sendmessage"]) {
      expect(decode(`Action=${action}&QueueUrl=u&Attribute.1.Name=x`)).toEqual({ action, input: {} });
    }
  });

  it("accepts a missing or other Version, and ignores parameters the action does not have", () => {
    expect(decode("Action=DeleteQueue&QueueUrl=u")).toEqual({ action: "DeleteQueue", input: { QueueUrl: "u" } });
    expect(decode("Action=DeleteQueue&Version=2011-10-01&QueueUrl=u&Bogus=1&QueueUrl.x=2&MessageBody=b")).toEqual({
      action: "DeleteQueue",
      input: { QueueUrl: "u" },
    });
  });

  it("reads the first of a repeated parameter, as URLSearchParams.get does", () => {
    expect(decode("Action=DeleteQueue&QueueUrl=first&QueueUrl=second").input).toEqual({ QueueUrl: "first" });
  });

  it("refuses integers that are not 32-bit integers with InvalidParameterValue naming the parameter", () => {
    for (const value of [
      "abc",
      "1.5",
      "1e3",
      " 5",
      "5 ",
      "+5",
      "",
      "0x10",
      "2147483648",
      "-2147483649",
      "99999999999999999999999",
    ]) {
      const error = sqsErrorOf(`Action=ReceiveMessage&QueueUrl=u&MaxNumberOfMessages=${encodeURIComponent(value)}`);
      expect([error.legacyCode, error.httpStatus]).toEqual(["InvalidParameterValue", 400]);
      expect(error.message).toBe(
        `Value ${value} for parameter MaxNumberOfMessages is invalid. Reason: Must be an integer.`,
      );
    }
    const nested = sqsErrorOf(
      "Action=SendMessageBatch&SendMessageBatchRequestEntry.2.Id=a&SendMessageBatchRequestEntry.2.DelaySeconds=soon",
    );
    expect(nested.message).toBe(
      "Value soon for parameter SendMessageBatchRequestEntry.2.DelaySeconds is invalid. Reason: Must be an integer.",
    );
    // In range but out of bounds is the action's to refuse, with SQS's own reason.
    expect(decode("Action=ChangeMessageVisibility&VisibilityTimeout=-1").input).toEqual({ VisibilityTimeout: -1 });
    expect(decode("Action=ListQueues&MaxResults=2147483647").input).toEqual({ MaxResults: 2147483647 });
  });

  it("orders by index numerically, and takes enormous indexes without iterating to them", () => {
    // Iterating to the index would never end: the test's timeout is the proof.
    const decoded = decode(
      "Action=CreateQueue&QueueName=q&Attribute.99999999999999999999999999.Name=Last&Attribute.99999999999999999999999999.Value=3" +
        "&Attribute.10.Name=Ten&Attribute.10.Value=2&Attribute.2.Name=Two&Attribute.2.Value=1&AttributeName.1=ignored",
    );
    expect(Object.entries(decoded.input.Attributes as object)).toEqual([
      ["Two", "1"],
      ["Ten", "2"],
      ["Last", "3"],
    ]);
    const tagKeys = decode("Action=UntagQueue&TagKey.9007199254740993=b&TagKey.9007199254740992=a&TagKey.3=first").input
      .TagKeys;
    expect(tagKeys).toEqual(["first", "a", "b"]);
  });

  it("ignores indexes clients never write (0, leading zeros, names) and entries with nothing known in them", () => {
    expect(
      decode(
        "Action=UntagQueue&TagKey.0=zero&TagKey.01=lead&TagKey.x=name&TagKey.-1=neg&TagKey.1.5=deep&TagKey.2=kept&TagKey..3=dots",
      ).input,
    ).toEqual({ TagKeys: ["kept"] });
    expect(decode("Action=SetQueueAttributes&Attribute.1.Junk=1&Attribute.2.Name=A&Attribute.2.Value=v").input).toEqual(
      {
        Attributes: { A: "v" },
      },
    );
    expect(decode("Action=DeleteMessageBatch&DeleteMessageBatchRequestEntry.1.Bogus=1").input).toEqual({});
    expect(decode("Action=DeleteMessageBatch&Entries=x").input).toEqual({});
  });

  it("answers half a map entry with MissingParameter naming the missing half", () => {
    const cases: [string, string][] = [
      ["Action=CreateQueue&QueueName=q&Attribute.1.Name=DelaySeconds", "Attribute.1.Value"],
      ["Action=TagQueue&Tag.3.Value=v", "Tag.3.Key"],
      ["Action=SendMessage&MessageAttribute.1.Name=a", "MessageAttribute.1.Value"],
      ["Action=SendMessage&MessageAttribute.1.Name=a&MessageAttribute.1.Value.Junk=1", "MessageAttribute.1.Value"],
      ["Action=SendMessage&MessageAttribute.1.Value.DataType=String", "MessageAttribute.1.Name"],
      [
        "Action=SendMessageBatch&SendMessageBatchRequestEntry.4.Id=a" +
          "&SendMessageBatchRequestEntry.4.MessageSystemAttribute.2.Name=AWSTraceHeader",
        "SendMessageBatchRequestEntry.4.MessageSystemAttribute.2.Value",
      ],
    ];
    for (const [query, parameter] of cases) {
      const error = sqsErrorOf(query);
      expect([error.legacyCode, error.message]).toEqual([
        "MissingParameter",
        `The request must contain the parameter ${parameter}.`,
      ]);
    }
  });

  it("keeps a message attribute's value as sent, for the action to judge (DataType missing, no value)", () => {
    expect(decode("Action=SendMessage&MessageAttribute.1.Name=a&MessageAttribute.1.Value.StringValue=s").input).toEqual(
      {
        MessageAttributes: { a: { StringValue: "s" } },
      },
    );
  });

  it("never lets __proto__ or constructor reach a prototype", () => {
    const decoded = decode(
      "Action=SendMessage&__proto__=x&__proto__.polluted=1&constructor.prototype.polluted=1&QueueUrl.__proto__.polluted=1" +
        "&MessageAttribute.1.Name=__proto__&MessageAttribute.1.Value.DataType=String&MessageAttribute.1.Value.StringValue=p" +
        "&MessageAttribute.1.Value.__proto__.polluted=1&MessageAttribute.__proto__.Name=x",
    );
    const attributes = decoded.input.MessageAttributes as Record<string, unknown>;
    expect(Object.keys(decoded.input)).toEqual(["MessageAttributes"]);
    expect(Object.hasOwn(attributes, "__proto__")).toBe(true);
    expect(Object.getPrototypeOf(attributes)).toBe(Object.prototype);
    expect(Object.entries(attributes)).toEqual([["__proto__", { DataType: "String", StringValue: "p" }]]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("takes invalid UTF-8 and broken percent-escapes as URLSearchParams decodes them (U+FFFD), without failing", () => {
    const decoded = decode(
      "Action=SendMessage&MessageBody=%FF%FEa%ED%A0%80b%C3&MessageGroupId=%zz%&Attribute%FF.1.Name=x&%FF=1",
    );
    expect(decoded.input).toEqual({ MessageBody: "\uFFFD\uFFFDa\uFFFD\uFFFD\uFFFDb\uFFFD", MessageGroupId: "%zz%" });
  });

  it("throws nothing but SqsError, whatever the form", () => {
    const segment = fc.constantFrom(
      "Action",
      "SendMessageBatch",
      "SendMessageBatchRequestEntry",
      "MessageAttribute",
      "Attribute",
      "Tag",
      "Name",
      "Value",
      "Key",
      "DataType",
      "StringValue",
      "BinaryValue",
      "StringListValue",
      "DelaySeconds",
      "MaxNumberOfMessages",
      "Id",
      "__proto__",
      "1",
      "2",
      "10",
      "0",
      "99999999999999999999",
      "",
    );
    const name = fc.array(segment, { minLength: 1, maxLength: 6 }).map((segments) => segments.join("."));
    const value = fc.oneof(
      fc.string(),
      fc.constantFrom("SendMessageBatch", "SendMessage", "CreateQueue", "ReceiveMessage", "7", "-1", "x"),
    );
    fc.assert(
      fc.property(fc.array(fc.tuple(name, value), { maxLength: 30 }), (pairs) => {
        const params = new URLSearchParams(pairs);
        try {
          decodeQueryRequest(params);
        } catch (error) {
          expect(error).toBeInstanceOf(SqsError);
        }
      }),
      { numRuns: 500 },
    );
  });
});
