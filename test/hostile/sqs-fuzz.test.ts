// Hostile HTTP against the SQS endpoint (src/sqs/sqs-listener.ts), sent as
// raw bytes: malformed JSON and forms, wrong JSON types for every member of
// every action, invalid UTF-8, unknown actions, absurd methods, paths and
// content types, malformed signatures, enormous and cut-off bodies. Each
// must be answered in time with a 4xx SQS error in the request's own
// protocol and no internal detail; the listener and gRPC must keep serving;
// and nothing stored may change (checked over gRPC and byte for byte in
// LevelDB). Reproduce a failure with HOLDSHELF_FC_SEED=<seed>.
import { toJson } from "@bufbuild/protobuf";
import fc from "fast-check";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { QueueSchema } from "../../gen/holdshelf/v1/queue_pb.js";
import { createLogger } from "../../src/logging/logger.js";
import { parseExposition, samplesOf } from "../support/prometheus-text.js";
import { startSqsHarness, testAccountId, type SqsHarness } from "../sqs/sqs-harness.js";
import { brokerSnapshot } from "./broker-snapshot.js";
import {
  actionMembers,
  actionNames,
  brokenJsonBodies,
  hostileFormPieces,
  mistypedRequests,
  nestedJson,
  prototypeKeys,
  validStructure,
} from "./sqs-fuzz-arbitraries.js";
import {
  brokenEncryptionAttributes,
  brokenPolicies,
  brokenSystemAttributes,
  encryptionAttributes,
  policyDocuments,
  traceHeaders,
} from "./sqs-fuzz-new-attributes.js";
import {
  errorProblem,
  exchange,
  openSocket,
  parseAnswer,
  protocolOf,
  readError,
  type RawAnswer,
  type RawRequest,
} from "./sqs-fuzz-wire.js";

const seed = Number(process.env["HOLDSHELF_FC_SEED"] ?? 20260917);
// A few hundred requests per property; the whole file stays well under 30 s on a loaded 2-core machine.
const numRuns = Number(process.env["HOLDSHELF_FC_RUNS"] ?? 250);
const fcOptions = { seed, numRuns, endOnFailure: true } as const;

const jsonType = "application/x-amz-json-1.0";
const formType = "application/x-www-form-urlencoded";
const seeded = ["fz-a", "fz-b"] as const;
const absent = "fz-absent";
// Queue URLs are read by their path alone (src/sqs/queue-urls.ts): this one names fz-absent whatever the port.
const absentUrlAnyHost = `http://127.0.0.1:1/${testAccountId}/${absent}`;
const mib = 1024 * 1024;

let h: SqsHarness;
let absentUrl: string;
/** Receipt handles of fz-a's leased messages: real ones, for requests that must still be refused. */
let handles: string[];
/** Everything stored when the fuzzing starts. */
let baseline: { grpc: string; store: string };
/** Error lines the broker logged: an unexpected error in a request is a bug even when the answer looks right. */
const logged: string[] = [];
const prototypeKeysBefore = Object.getOwnPropertyNames(Object.prototype).sort().join();

beforeAll(async () => {
  h = await startSqsHarness({ logger: createLogger({ level: "error", write: (line) => logged.push(line) }) });
  absentUrl = h.urlOf(absent);
  await h.rpc.createQueue({ name: "fz-a", config: { visibilityTimeout: { seconds: 45n }, tags: { team: "fuzz" } } });
  await h.rpc.createQueue({ name: "fz-b", config: { delay: { seconds: 0n }, maxMessageBytes: 4096 } });
  for (const queue of seeded) {
    for (let i = 0; i < 4; i++) {
      await h.rpc.send({
        queue,
        body: Buffer.from(`${queue} body ${i} \u00e9\u4e2d`),
        attributes: { n: String(i) },
        typedAttributes: { t: { dataType: "Number", value: { case: "stringValue", value: String(i) } } },
      });
    }
  }
  // Two of fz-a's messages leased for an hour: nothing expires while the test runs.
  handles = (
    await h.rpc.receive({ queue: "fz-a", maxMessages: 2, visibilityTimeout: { seconds: 3600n } })
  ).messages.map((m) => m.receiptHandle);
  expect(handles).toHaveLength(2);
  baseline = await stored();
});

afterAll(async () => {
  await h?.stop();
});

afterEach(async () => {
  await expectServing();
  // Judged against the state before this test; the next test is judged against the state after it, so one change is reported once.
  const before = baseline;
  baseline = await stored();
  expect(baseline).toEqual(before);
  expect(Object.getOwnPropertyNames(Object.prototype).sort().join()).toBe(prototypeKeysBefore);
  expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined();
  expect(logged.splice(0)).toEqual([]);
});

/** The queues over gRPC (config, counts, times; not the oldest message's age, which grows by itself) and the store's fingerprint. */
async function stored(): Promise<{ grpc: string; store: string }> {
  const { queues } = await h.rpc.listQueues({});
  const views = [];
  for (const { name } of queues) {
    const { queue } = await h.rpc.getQueue({ name });
    const view = toJson(QueueSchema, queue!) as Record<string, Record<string, unknown>>;
    delete view["stats"]?.["oldestMessageAge"];
    views.push(view);
  }
  return { grpc: JSON.stringify(views), store: await brokerSnapshot(h.server) };
}

/** A valid request in each protocol, and a gRPC call, still answered. */
async function expectServing(): Promise<void> {
  const viaJson = await exchange(h.endpoint, json("GetQueueUrl", JSON.stringify({ QueueName: "fz-a" })));
  expect(viaJson.status).toBe(200);
  expect(JSON.parse(viaJson.text)).toEqual({ QueueUrl: h.urlOf("fz-a") });
  const viaQuery = await exchange(
    h.endpoint,
    form(
      `Action=GetQueueAttributes&QueueUrl=${encodeURIComponent(h.urlOf("fz-b"))}&AttributeName.1=ApproximateNumberOfMessages`,
    ),
  );
  expect(viaQuery.status).toBe(200);
  expect(viaQuery.text).toContain("<Name>ApproximateNumberOfMessages</Name><Value>4</Value>");
  const { queue } = await h.rpc.getQueue({ name: "fz-a" }, { deadline: Date.now() + 5_000 });
  expect(queue?.name).toBe("fz-a");
}

function json(action: string, body: string | Buffer, path = "/", extra: [string, string][] = []): RawRequest {
  return {
    method: "POST",
    path,
    headers: [["Content-Type", jsonType], ["X-Amz-Target", `AmazonSQS.${action}`], ...extra],
    body,
  };
}

function form(body: string | Buffer, path = "/", extra: [string, string][] = []): RawRequest {
  return { method: "POST", path, headers: [["Content-Type", formType], ...extra], body };
}

/** Sends `request` and fails with the request and answer unless it is refused with a well-formed SQS error in its protocol. */
async function expectRefused(request: RawRequest, allow?: (answer: RawAnswer) => boolean): Promise<RawAnswer> {
  const answer = await exchange(h.endpoint, request);
  if (allow?.(answer) === true) return answer;
  const problem = errorProblem(answer, protocolOf(request), request.method);
  if (problem !== undefined) {
    const body = request.body === undefined ? "" : Buffer.from(request.body).toString("utf8").slice(0, 600);
    throw new Error(
      `${problem}\n  request: ${request.method} ${request.path.slice(0, 300)} ${JSON.stringify(request.headers)} ${JSON.stringify(body)}`,
    );
  }
  return answer;
}

/** A 200 SendMessageBatch answer in which every entry failed: SQS's per-entry refusal (src/sqs/actions/message-actions.ts). */
function allEntriesFailed(answer: RawAnswer): boolean {
  if (answer.status !== 200) return false;
  const output = JSON.parse(answer.text) as { Successful?: unknown[]; Failed?: unknown[] };
  return output.Successful?.length === 0 && (output.Failed?.length ?? 0) > 0;
}

describe("the JSON protocol refuses", () => {
  it("a member of the wrong type, for every member of every action", async () => {
    await fc.assert(
      fc.asyncProperty(mistypedRequests(absentUrl), async ({ action, body }) => {
        await expectRefused(json(action, body), (answer) => action === "SendMessageBatch" && allEntriesFailed(answer));
      }),
      fcOptions,
    );
  });

  it("bodies that are no JSON object or no UTF-8, for every action, on existing queues too", async () => {
    const paths = ["/", `/${testAccountId}/fz-a`, `/${testAccountId}/fz-b`, `/${testAccountId}/${absent}`];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...actionNames),
        fc.constantFrom(...paths),
        brokenJsonBodies,
        async (action, path, body) => {
          await expectRefused(json(action, body, path));
        },
      ),
      fcOptions,
    );
  });

  it("unknown actions and malformed targets", async () => {
    const targets = fc.oneof(
      fc.constantFrom(
        "AmazonSQS.",
        "AmazonSQS",
        "amazonsqs.ListQueues",
        "AmazonSQS.listqueues",
        "AmazonSQS..ListQueues",
        "AmazonSQS.ListQueues.Extra",
        "AmazonSQSv2.ListQueues",
        "SQS.ListQueues",
        "",
        ...prototypeKeys.map((key) => `AmazonSQS.${key}`),
      ),
      fc
        .string({ unit: fc.constantFrom(..."AmazonSQS.ListQueue_-:/ 0"), maxLength: 40 }) // HTTP trims a header value's spaces: what remains must name no action.
        .filter(
          (text) =>
            !actionNames.includes(text.trim().replace(/^AmazonSQS\./, "")) || !text.trim().startsWith("AmazonSQS."),
        ),
    );
    await fc.assert(
      fc.asyncProperty(targets, fc.constantFrom("{}", "", '{"QueueName":"fz-a"}'), async (target, body) => {
        const request: RawRequest = {
          method: "POST",
          path: "/",
          headers: [
            ["Content-Type", jsonType],
            ["X-Amz-Target", target],
          ],
          body,
        };
        await expectRefused(request);
      }),
      { ...fcOptions, numRuns: Math.ceil(numRuns / 2) },
    );
  });
});

describe("the query protocol refuses", () => {
  const queuePieces = fc.constantFrom(
    "",
    `QueueUrl=${encodeURIComponent(absentUrlAnyHost)}`,
    "QueueUrl=http%3A%2F%2F127.0.0.1%3A1%2F999999999999%2Ffz-a",
    "QueueUrl=%2F000000000000%2Ffz%2Fa",
    "QueueUrl=not+a+url",
    "QueueName=fz.fifo",
    "QueueName=",
    "QueueName=fz%20absent",
    `QueueName=${"x".repeat(81)}`,
  );

  it("hostile forms (absurd indexes, half entries, repeated keys, bad escapes) for every action but ListQueues, by POST and GET", async () => {
    const actions = fc.oneof(
      fc.constantFrom(...actionNames.filter((action) => action !== "ListQueues")),
      fc.constantFrom(
        "",
        "Nope",
        "listqueues",
        "__proto__",
        "constructor",
        "toString",
        "ListQueues%00",
        "Send%FFMessage",
      ),
    );
    await fc.assert(
      fc.asyncProperty(
        actions,
        queuePieces,
        fc.array(hostileFormPieces, { minLength: 1, maxLength: 6 }),
        fc.constantFrom("POST", "GET"),
        fc.constantFrom("/", `/${testAccountId}/${absent}`, `/${testAccountId}/${absent}/`),
        async (action, queuePiece, pieces, method, path) => {
          // CreateQueue's only queue pieces are names SQS refuses, and GetQueueUrl's name no queue.
          const queue =
            action === "CreateQueue" && !queuePiece.startsWith("QueueName") ? "QueueName=fz.fifo" : queuePiece;
          const text = [action === "" ? "" : `Action=${action}`, queue, ...pieces]
            .filter((piece) => piece !== "")
            .join("&");
          const request: RawRequest =
            method === "POST" ? form(text, path) : { method: "GET", path: `${path}?${text}`, headers: [] };
          await expectRefused(request);
        },
      ),
      fcOptions,
    );
  });

  it("invalid UTF-8 in a form, raw or percent-encoded", async () => {
    const bad = fc.constantFrom([0xff], [0xc3, 0x28], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0xc0, 0x80]);
    await fc.assert(
      fc.asyncProperty(
        bad,
        fc.boolean(),
        fc.constantFrom("Action", "QueueName", "Attribute.1.Name", "Noise"),
        async (bytes, percent, key) => {
          const encoded = percent
            ? Buffer.from(bytes.map((byte) => `%${byte.toString(16).toUpperCase()}`).join(""))
            : Buffer.from(bytes);
          const body = Buffer.concat([
            Buffer.from(key === "Action" ? "Action=Get" : "Action=GetQueueUrl&QueueName=fz-absent&"),
            Buffer.from(key === "Action" ? "" : `${key}=`),
            encoded,
          ]);
          await expectRefused(form(body));
        },
      ),
      { ...fcOptions, numRuns: 50 },
    );
  });
});

describe("requests that must be refused leave existing queues as they are", () => {
  const fzA = () => h.urlOf("fz-a");
  const tamper = (handle: string, at: number): string => {
    const index = at % handle.length;
    const replacement = handle[index] === "A" ? "B" : "A";
    return handle.slice(0, index) + replacement + handle.slice(index + 1);
  };
  const poisonedJson = fc.oneof(
    fc
      .constantFrom<Record<string, unknown>>(
        { MessageBody: "" },
        { MessageBody: "nul \u0000" },
        { MessageBody: "bad \uffff" },
        { MessageBody: "lone \ud800" },
        { MessageBody: "bell \u0007" },
        { MessageBody: 42 },
        { MessageBody: ["x"] },
        { MessageBody: "ok", DelaySeconds: -1 },
        { MessageBody: "ok", DelaySeconds: 901 },
        { MessageBody: "ok", DelaySeconds: 1.5 },
        { MessageBody: "ok", DelaySeconds: "5" },
        // A group alone is a fair queue's send (accepted, dropped); with a deduplication id it is refused.
        { MessageBody: "ok", MessageGroupId: "g", MessageDeduplicationId: "d" },
        { MessageBody: "ok", MessageDeduplicationId: "d" },
        {
          MessageBody: "ok",
          MessageAttributes: Object.fromEntries(
            Array.from({ length: 11 }, (_, i) => [`a${i}`, { DataType: "String", StringValue: "v" }]),
          ),
        },
        { MessageBody: "ok", MessageAttributes: { "bad name": { DataType: "String", StringValue: "v" } } },
        { MessageBody: "ok", MessageAttributes: { a: { DataType: "Strin", StringValue: "v" } } },
        { MessageBody: "ok", MessageAttributes: { a: { DataType: "Number", StringValue: "abc" } } },
        { MessageBody: "ok", MessageAttributes: { a: { DataType: "Binary", StringValue: "v" } } },
        { MessageBody: "ok", MessageAttributes: { a: { DataType: "Binary", BinaryValue: "!!!" } } },
        { MessageBody: "ok", MessageAttributes: { a: { DataType: "String", StringValue: "\u0000" } } },
        { MessageBody: "ok", MessageAttributes: { a: { DataType: "String" } } },
        { MessageBody: "ok", MessageAttributes: { a: "v" } },
        { MessageBody: "ok", MessageAttributes: [{ Name: "a" }] },
      )
      .map((input) => ({ action: "SendMessage", input })),
    fc
      .tuple(
        fc.constantFrom(
          '"VisibilityTimeout":"-1"',
          '"VisibilityTimeout":"43201"',
          '"VisibilityTimeout":"abc"',
          '"VisibilityTimeout":"1.5"',
          '"VisibilityTimeout":""',
          '"VisibilityTimeout":5',
          '"MaximumMessageSize":"1023"',
          '"MessageRetentionPeriod":"59"',
          '"Policy":"{}"',
          '"QueueArn":"arn:aws:sqs:us-east-1:000000000000:x"',
          '"FifoQueue":"true"',
          '"Nope":"1"',
          '"__proto__":"5"',
          '"__proto__":{"VisibilityTimeout":"5"}',
          '"constructor":"5"',
          '"RedrivePolicy":"{"',
          `"RedrivePolicy":${JSON.stringify(JSON.stringify({ deadLetterTargetArn: `arn:aws:sqs:us-east-1:000000000000:${absent}`, maxReceiveCount: "5" }))}`,
          `"RedrivePolicy":${JSON.stringify(JSON.stringify({ deadLetterTargetArn: "arn:aws:sqs:us-east-1:111111111111:fz-b", maxReceiveCount: "5" }))}`,
          `"RedrivePolicy":${JSON.stringify(JSON.stringify({ deadLetterTargetArn: "arn:aws:sqs:us-east-1:000000000000:fz-b", maxReceiveCount: "0" }))}`,
        ),
        fc.boolean(),
      )
      // A valid change mixed in, before or after: all or nothing.
      .map(([poison, first]) => ({
        action: "SetQueueAttributes",
        input: {
          Attributes: JSON.parse(
            first ? `{"DelaySeconds":"7",${poison}}` : `{${poison},"DelaySeconds":"7"}`,
          ) as unknown,
        },
      })),
    fc
      .constantFrom<Record<string, unknown>>({ Tags: {} }, { Tags: { k: 1 } }, { Tags: [["k", "v"]] }, { Tags: "k=v" })
      .map((input) => ({ action: "TagQueue", input })),
    fc
      .constantFrom<Record<string, unknown>>(
        { TagKeys: [] },
        { TagKeys: "team" },
        { TagKeys: [1] },
        { TagKeys: { team: "" } },
      )
      .map((input) => ({ action: "UntagQueue", input })),
    fc
      .constantFrom<Record<string, unknown>>(
        { MaxNumberOfMessages: 0 },
        { MaxNumberOfMessages: 11 },
        { MaxNumberOfMessages: "1" },
        { VisibilityTimeout: -1 },
        { VisibilityTimeout: 43201 },
        { WaitTimeSeconds: 21 },
        { WaitTimeSeconds: 0.5 },
        { AttributeNames: ["Nope"] },
        { AttributeNames: "All" },
        { MessageAttributeNames: [1] },
        { MessageSystemAttributeNames: ["__proto__"] },
        { ReceiveRequestAttemptId: 5 },
      )
      .map((input) => ({ action: "ReceiveMessage", input })),
    fc
      .tuple(fc.nat(), fc.nat({ max: 1 }))
      .map(([at, which]) => ({ action: "DeleteMessage", input: { ReceiptHandle: tamper(handles[which]!, at) } })),
    fc
      .constantFrom("", "x", "AAAA", "%00", "\u0000")
      .map((ReceiptHandle) => ({ action: "DeleteMessage", input: { ReceiptHandle } })),
    fc.constantFrom<unknown>(-1, 43201, "5", 1.5, null).map((VisibilityTimeout) => ({
      action: "ChangeMessageVisibility",
      input: { ReceiptHandle: handles[0], VisibilityTimeout },
    })),
    fc.tuple(fc.nat(), fc.nat({ max: 1 })).map(([at, which]) => ({
      action: "ChangeMessageVisibility",
      input: { ReceiptHandle: tamper(handles[which]!, at), VisibilityTimeout: 0 },
    })),
    fc
      .constantFrom<(handle: string) => unknown>(
        (handle) => [
          { Id: "a", ReceiptHandle: handle },
          { Id: "a", ReceiptHandle: handle },
        ],
        (handle) => [
          { Id: "a", ReceiptHandle: handle },
          { Id: "bad id", ReceiptHandle: handle },
        ],
        (handle) => [
          { Id: "a", ReceiptHandle: handle },
          { Id: "b", ReceiptHandle: 5 },
        ],
        (handle) => [{ Id: "a", ReceiptHandle: handle }, { Id: "b" }],
        (handle) => Array.from({ length: 11 }, (_, i) => ({ Id: `e${i}`, ReceiptHandle: handle })),
        (handle) => [{ Id: "a", ReceiptHandle: handle }, "b"],
        (handle) => ({ a: { Id: "a", ReceiptHandle: handle } }),
        () => [],
      )
      .map((entries) => ({ action: "DeleteMessageBatch", input: { Entries: entries(handles[0]!) } })),
    fc
      .constantFrom<(handle: string) => unknown>(
        (handle) => [
          { Id: "a", ReceiptHandle: handle, VisibilityTimeout: 0 },
          { Id: "b", ReceiptHandle: handle, VisibilityTimeout: -1 },
        ],
        (handle) => [
          { Id: "a", ReceiptHandle: handle, VisibilityTimeout: 0 },
          { Id: "b", ReceiptHandle: handle },
        ],
        (handle) => [
          { Id: "a", ReceiptHandle: handle, VisibilityTimeout: 0 },
          { Id: "a", ReceiptHandle: handle, VisibilityTimeout: 0 },
        ],
      )
      .map((entries) => ({ action: "ChangeMessageVisibilityBatch", input: { Entries: entries(handles[0]!) } })),
    fc
      .constantFrom<unknown>(
        [
          { Id: "a", MessageBody: "ok" },
          { Id: "a", MessageBody: "ok" },
        ],
        Array.from({ length: 11 }, (_, i) => ({ Id: `e${i}`, MessageBody: "ok" })),
        [
          { Id: "a", MessageBody: "ok" },
          { Id: "", MessageBody: "ok" },
        ],
        [
          { Id: "a", MessageBody: "x".repeat(600_000) },
          { Id: "b", MessageBody: "y".repeat(600_000) },
        ],
        [],
        "entries",
      )
      .map((Entries) => ({ action: "SendMessageBatch", input: { Entries } })),
    fc
      .tuple(fc.constantFrom("PurgeQueue", "DeleteQueue"), fc.constantFrom<unknown>(5, [], {}, true))
      .map(([action, QueueUrl]) => ({ action, input: { QueueUrl } })),
    fc
      .constantFrom<Record<string, unknown>>(
        { VisibilityTimeout: "46" },
        { DelaySeconds: "3" },
        { VisibilityTimeout: "-1" },
        { Nope: "x" },
      )
      .map((Attributes) => ({ action: "CreateQueue", input: { QueueName: "fz-a", Attributes } })),
  );

  it("over JSON: every poisoned mutation of fz-a, by its QueueUrl or its path", async () => {
    await fc.assert(
      fc.asyncProperty(poisonedJson, fc.boolean(), async ({ action, input }, byPath) => {
        // By its path the request names no QueueUrl (PurgeQueue's and DeleteQueue's is a wrong-typed one, which must win).
        const body = action === "CreateQueue" || byPath || "QueueUrl" in input ? input : { QueueUrl: fzA(), ...input };
        const path = byPath && action !== "CreateQueue" ? `/${testAccountId}/fz-a` : "/";
        await expectRefused(json(action, JSON.stringify(body), path));
      }),
      fcOptions,
    );
  });

  it("over the query protocol: half entries, bad integers and bad text aimed at fz-a", async () => {
    const poisoned = fc.constantFrom(
      "Action=SetQueueAttributes&Attribute.1.Name=VisibilityTimeout",
      "Action=SetQueueAttributes&Attribute.1.Value=5",
      "Action=SetQueueAttributes&Attribute.1.Name=DelaySeconds&Attribute.1.Value=7&Attribute.99999999999.Name=VisibilityTimeout",
      "Action=SetQueueAttributes&Attribute.1.Name=DelaySeconds&Attribute.1.Value=7&Attribute.2.Name=Nope&Attribute.2.Value=1",
      "Action=SetQueueAttributes&Attribute.1.Name=__proto__&Attribute.1.Value=7",
      "Action=SendMessage&MessageBody=%00",
      "Action=SendMessage&MessageBody=",
      "Action=SendMessage&MessageBody=ok&DelaySeconds=abc",
      "Action=SendMessage&MessageBody=ok&DelaySeconds=99999999999999999999999",
      "Action=SendMessage&MessageBody=ok&MessageAttribute.1.Name=a",
      "Action=SendMessage&MessageBody=ok&MessageAttribute.1.Value.DataType=String",
      "Action=SendMessage&MessageBody=ok&MessageAttribute.1.Name=a&MessageAttribute.1.Value.DataType=Number&MessageAttribute.1.Value.StringValue=x",
      "Action=SendMessage&MessageBody=ok&MessageGroupId=g&MessageDeduplicationId=d",
      "Action=SendMessageBatch&SendMessageBatchRequestEntry.1.Id=a&SendMessageBatchRequestEntry.1.MessageBody=ok&SendMessageBatchRequestEntry.2.Id=a&SendMessageBatchRequestEntry.2.MessageBody=ok",
      "Action=SendMessageBatch&Entries=",
      "Action=ReceiveMessage&MaxNumberOfMessages=ten",
      "Action=ReceiveMessage&MaxNumberOfMessages=0",
      "Action=ReceiveMessage&VisibilityTimeout=1.5",
      "Action=ReceiveMessage&WaitTimeSeconds=-1",
      "Action=ReceiveMessage&AttributeName.1=All&AttributeName.99999999999=Nope",
      "Action=ChangeMessageVisibility&ReceiptHandle=x&VisibilityTimeout=0",
      "Action=DeleteMessage&ReceiptHandle=x",
      "Action=DeleteMessage&ReceiptHandle=",
      "Action=TagQueue&Tag.1.Key=k",
      "Action=TagQueue&Tag.1.Value=v",
      "Action=TagQueue",
      "Action=UntagQueue",
      "Action=CreateQueue&QueueName=fz-a&Attribute.1.Name=VisibilityTimeout&Attribute.1.Value=46",
      "Action=DeleteQueue&QueueUrl=not+a+url",
      "Action=PurgeQueue&QueueUrl=%2F999999999999%2Ffz-a",
    );
    await fc.assert(
      fc.asyncProperty(poisoned, fc.boolean(), fc.constantFrom("POST", "GET"), async (text, byPath, method) => {
        const withQueue =
          byPath || text.includes("QueueUrl=") || text.includes("QueueName=")
            ? text
            : `${text}&QueueUrl=${encodeURIComponent(fzA())}`;
        const path = byPath ? `/${testAccountId}/fz-a` : "/";
        await expectRefused(
          method === "POST" ? form(withQueue, path) : { method, path: `${path}?${withQueue}`, headers: [] },
        );
      }),
      fcOptions,
    );
  });

  it("wrong JSON types in every member read by a mutating action, on an existing queue", async () => {
    // A broker of its own: a member accepted here shows as a defect without disturbing the seeded broker's checks.
    const own = await startSqsHarness();
    const mutating = [
      "SendMessage",
      "SendMessageBatch",
      "SetQueueAttributes",
      "TagQueue",
      "UntagQueue",
      "ReceiveMessage",
      "ChangeMessageVisibility",
      "DeleteMessage",
    ];
    const accepted = new Map<string, string>();
    try {
      await own.rpc.createQueue({ name: "fz-types" });
      const before = toJson(QueueSchema, (await own.rpc.getQueue({ name: "fz-types" })).queue!);
      await fc.assert(
        fc.asyncProperty(mistypedRequests(own.urlOf("fz-types"), mutating), async ({ action, member, body }) => {
          const request = json(action, body);
          const answer = await exchange(own.endpoint, request);
          const error = readError(answer, "json");
          if (typeof error !== "string" || (action === "SendMessageBatch" && allEntriesFailed(answer))) return;
          if (answer.status !== 200) throw new Error(error);
          if (!accepted.has(`${action}.${member}`))
            accepted.set(
              `${action}.${member}`,
              `${body.slice(0, 200)} -> ${answer.status} ${answer.text.slice(0, 200)}`,
            );
        }),
        fcOptions,
      );
      const after = toJson(QueueSchema, (await own.rpc.getQueue({ name: "fz-types" })).queue!);
      expect(Object.fromEntries(accepted)).toEqual({});
      expect(after).toEqual(before);
    } finally {
      await own.stop();
    }
  });
});

describe("the attributes issue #35 adds, where every version must refuse the request", () => {
  // Refused whether or not the endpoint supports them yet (sqs-fuzz-new-attributes.ts): afterEach checks that nothing changed.
  const poisons = fc.constantFrom<[string, string]>(
    ["VisibilityTimeout", "-1"],
    ["MaximumMessageSize", "1023"],
    ["Nope", "1"],
    ["QueueArn", "arn:aws:sqs:us-east-1:000000000000:x"],
    ["RedrivePolicy", "{"],
  );
  /** Attributes with a poison before or after them: the whole call is refused. */
  const poisoned = (attributes: fc.Arbitrary<Record<string, string>>) =>
    fc
      .tuple(attributes, poisons, fc.boolean())
      .map(([good, [name, value], first]) => (first ? { [name]: value, ...good } : { ...good, [name]: value }));
  /** SetQueueAttributes of fz-a, or CreateQueue of a queue that must not come to exist. */
  const queueCall = (Attributes: Record<string, string>, create: boolean) =>
    create
      ? json("CreateQueue", JSON.stringify({ QueueName: "fz-new", Attributes }))
      : json("SetQueueAttributes", JSON.stringify({ QueueUrl: h.urlOf("fz-a"), Attributes }));

  it("a policy document or encryption settings beside a poisoned attribute, in SetQueueAttributes and CreateQueue", async () => {
    const attributes = fc.oneof(
      policyDocuments.map((Policy) => ({ Policy })),
      encryptionAttributes,
    );
    await fc.assert(
      fc.asyncProperty(poisoned(attributes), fc.boolean(), async (Attributes, create) => {
        await expectRefused(queueCall(Attributes, create));
      }),
      fcOptions,
    );
  });

  it("policies and encryption settings no version may take, in SetQueueAttributes and CreateQueue", async () => {
    const attributes = fc.oneof(
      brokenPolicies.map((Policy) => ({ Policy })),
      brokenEncryptionAttributes,
      // A valid change mixed in: all or nothing.
      brokenEncryptionAttributes.map((broken) => ({ DelaySeconds: "7", ...broken })),
    );
    await fc.assert(
      fc.asyncProperty(attributes, fc.boolean(), async (Attributes, create) => {
        await expectRefused(queueCall(Attributes, create));
      }),
      fcOptions,
    );
  });

  it("an AWSTraceHeader beside a poisoned member, and MessageSystemAttributes no version may take", async () => {
    const trace = (StringValue: string) => ({ AWSTraceHeader: { DataType: "String", StringValue } });
    const sends = fc.oneof(
      fc
        .tuple(
          traceHeaders,
          fc.constantFrom<Record<string, unknown>>(
            { MessageBody: "" },
            { MessageBody: "ok", DelaySeconds: 901 },
            { MessageBody: "ok", MessageDeduplicationId: "d" },
            { MessageBody: "ok", MessageAttributes: { "bad name": { DataType: "String", StringValue: "v" } } },
          ),
        )
        .map(([value, poison]) => ({ ...poison, MessageSystemAttributes: trace(value) })),
      brokenSystemAttributes.map((MessageSystemAttributes) => ({ MessageBody: "ok", MessageSystemAttributes })),
    );
    await fc.assert(
      fc.asyncProperty(sends, fc.boolean(), async (send, batch) => {
        const request = batch
          ? json("SendMessageBatch", JSON.stringify({ QueueUrl: h.urlOf("fz-a"), Entries: [{ Id: "e1", ...send }] }))
          : json("SendMessage", JSON.stringify({ QueueUrl: h.urlOf("fz-a"), ...send }));
        await expectRefused(request, (answer) => batch && allEntriesFailed(answer));
      }),
      fcOptions,
    );
  });
});

describe("absurd methods, paths, content types and signatures", () => {
  const malformedAuthorization = fc.oneof(
    fc.constantFrom(
      "",
      "AWS4-HMAC-SHA256",
      "AWS4-HMAC-SHA256 ",
      "AWS4-HMAC-SHA256 Credential=",
      "AWS4-HMAC-SHA256 Credential=AKID/20250101/us-east-1/sqs/aws4_request, SignedHeaders=host, Signature=zz",
      "AWS4-HMAC-SHA256 Credential=AKID/2025/xx/sqs/aws4_request,SignedHeaders=;;;,Signature=",
      `AWS4-HMAC-SHA256 Credential=////////, SignedHeaders=, Signature=${"0".repeat(64)}`,
      `AWS4-HMAC-SHA256 Credential=AKID/20250101/us-east-1/sqs/aws4_request, SignedHeaders=host;x-amz-date, Signature=${"f".repeat(6000)}`,
      "AWS AKID:c2ln",
      "AWS4-HMAC-SHA512 Credential=a",
      "Bearer abc.def.ghi",
      "Basic ==",
      `Basic ${Buffer.from("user:pass").toString("base64")}`,
      "Credential=__proto__/constructor",
      "AWS4-HMAC-SHA256 Credential=a,Credential=b,Credential=c",
      "\u00e9\u00e9\u00e9",
    ),
    fc.string({
      unit: fc.constantFrom(..."AWS4-HMACS256 Credential=/,;:SignedHeaders=Signature=0af\t"),
      maxLength: 120,
    }),
  );
  const extraAuthHeaders = fc.subarray([
    ["X-Amz-Date", "not-a-date"],
    ["X-Amz-Date", "99991399T256161Z"],
    ["X-Amz-Security-Token", "\u00ff\u00fe"],
    ["X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD-NOT"],
    ["X-Amz-Algorithm", "none"],
  ] as [string, string][]);

  it("a valid request with a malformed signature is served: a broker without credentials ignores Authorization", async () => {
    await fc.assert(
      fc.asyncProperty(
        malformedAuthorization,
        extraAuthHeaders,
        fc.boolean(),
        async (authorization, extra, viaJson) => {
          const headers: [string, string][] = [["Authorization", authorization], ...extra];
          const answer = viaJson
            ? await exchange(h.endpoint, json("GetQueueUrl", JSON.stringify({ QueueName: "fz-a" }), "/", headers))
            : await exchange(h.endpoint, form("Action=GetQueueUrl&QueueName=fz-a", "/", headers));
          expect(answer.status, answer.text).toBe(200);
          expect(answer.text).toContain(h.urlOf("fz-a"));
          // And a refused request is refused as it would be unsigned.
          const refused = await expectRefused(json("GetQueueUrl", JSON.stringify({ QueueName: absent }), "/", headers));
          expect(refused.headers["x-amzn-query-error"]).toBe("AWS.SimpleQueueService.NonExistentQueue;Sender");
        },
      ),
      { ...fcOptions, numRuns: Math.ceil(numRuns / 2) },
    );
  });

  it("any method, path, content type (absent, repeated, conflicting) and signature: a 4xx in the protocol the headers choose", async () => {
    const methods = fc.constantFrom("GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "PATCH");
    const paths = fc.constantFrom(
      "/",
      `/${testAccountId}/${absent}`,
      "/999999999999/fz-a",
      `/${testAccountId}/fz-a/extra`,
      `/${testAccountId}/`,
      "//",
      "/../../../etc/passwd",
      "/%00",
      "/%ZZ",
      "/%2e%2e/%2e%2e/",
      `/${"a/".repeat(3000)}`,
      "/?",
      "/?&&&=",
      `/?Action=GetQueueUrl&QueueName=${absent}`,
      "/?Action=__proto__",
      "/#fragment",
      "http://evil.example/",
      "*",
    );
    const contentTypes = fc.subarray(
      [
        ["Content-Type", jsonType],
        ["Content-Type", formType],
        ["Content-Type", "application/x-amz-json-1.1"],
        ["Content-Type", "application/json"],
        ["Content-Type", "text/xml"],
        ["Content-Type", "multipart/form-data; boundary=x"],
        ["Content-Type", ";;;=="],
        ["Content-Type", "application/x-www-form-urlencoded; charset=utf-16"],
      ] as [string, string][],
      { maxLength: 2 },
    );
    const targets = fc.constantFrom<[string, string][]>(
      [],
      [["X-Amz-Target", "AmazonSQS.GetQueueUrl"]],
      [["X-Amz-Target", "AmazonSQS.DeleteQueue"]],
      [["X-Amz-Target", "AmazonSQS.PurgeQueue"]],
      [["X-Amz-Target", "AmazonSQS.Nope"]],
      [["X-Amz-Target", "AmazonSQS.__proto__"]],
      [["X-Amz-Target", ""]],
      [
        ["X-Amz-Target", "AmazonSQS.GetQueueUrl"],
        ["X-Amz-Target", "AmazonSQS.ListQueues"],
      ],
    );
    const bodies = fc.constantFrom<string | undefined>(
      undefined,
      "",
      `{"QueueName":"${absent}"}`,
      `{"QueueUrl":"${absentUrlAnyHost}"}`,
      `Action=GetQueueUrl&QueueName=${absent}`,
      "Action=DeleteQueue",
      "Action=PurgeQueue&QueueUrl=x",
      "{",
      "<xml/>",
      "\u0000\u0001",
    );
    await fc.assert(
      fc.asyncProperty(
        methods,
        paths,
        contentTypes,
        targets,
        bodies,
        fc.option(malformedAuthorization, { nil: undefined }),
        async (method, path, types, target, body, authorization) => {
          const headers: [string, string][] = [
            ...types,
            ...target,
            ...(authorization === undefined ? [] : [["Authorization", authorization] as [string, string]]),
          ];
          await expectRefused({ method, path, headers, ...(body === undefined ? {} : { body }) });
        },
      ),
      fcOptions,
    );
  });
});

describe("enormous, deep and cut-off requests", () => {
  it("enormous strings, deep nesting and huge forms just under the limit are refused, in time", async () => {
    const big = (size: number, unit = "x") => unit.repeat(Math.ceil(size / unit.length)).slice(0, size);
    const cases: RawRequest[] = [
      json("SendMessage", JSON.stringify({ QueueUrl: absentUrl, MessageBody: big(7 * mib) })),
      json("SendMessage", JSON.stringify({ QueueUrl: big(7 * mib, "/a"), MessageBody: "x" })),
      json("GetQueueUrl", JSON.stringify({ QueueName: big(3 * mib, "\u4e2d") })),
      json(
        "CreateQueue",
        JSON.stringify({
          QueueName: "fz.fifo",
          Attributes: Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`k${i}`, "v"])),
        }),
      ),
      json(
        "SetQueueAttributes",
        JSON.stringify({ QueueUrl: h.urlOf("fz-a"), Attributes: { VisibilityTimeout: big(4 * mib, "9") } }),
      ),
      json("TagQueue", JSON.stringify({ QueueUrl: h.urlOf("fz-a"), Tags: { [big(1 * mib)]: big(1 * mib) } })),
      // 1e400 reads as Infinity: no integer.
      json("ReceiveMessage", `{"QueueUrl":"${h.urlOf("fz-a")}","MaxNumberOfMessages":${big(400, "9")}}`),
      json("SendMessage", `{"QueueUrl":"${h.urlOf("fz-a")}","MessageBody":${nestedJson(200_000, '"x"')}}`),
      json(
        "SendMessage",
        `{"QueueUrl":"${h.urlOf("fz-a")}","MessageBody":"ok","MessageAttributes":${nestedJson(100_001, "{}")}}`,
      ),
      json("ListQueues", Buffer.from(`{"MaxResults":${"[".repeat(4 * mib)}`)),
      json(
        "SendMessageBatch",
        JSON.stringify({
          QueueUrl: h.urlOf("fz-a"),
          Entries: Array.from({ length: 50_000 }, (_, i) => ({ Id: `e${i}`, MessageBody: "x" })),
        }),
      ),
      form(
        `Action=SetQueueAttributes&QueueUrl=${encodeURIComponent(h.urlOf("fz-a"))}&${Array.from({ length: 200_000 }, (_, i) => `Attribute.${i + 1}.Name=VisibilityTimeout`).join("&")}`,
      ),
      form(`Action=SendMessage&QueueUrl=${encodeURIComponent(h.urlOf("fz-a"))}&MessageBody=${big(4 * mib, "%00")}`),
      form(`Action=CreateQueue&QueueName=${big(4 * mib, "a")}`),
      form(`Action=GetQueueUrl&QueueName=fz-absent&${big(4 * mib, "&")}`),
      form(`Action=GetQueueUrl&QueueName=fz-absent&${"a.".repeat(20_000)}=1`),
      { method: "GET", path: `/?Action=GetQueueUrl&QueueName=${big(15_000)}`, headers: [] },
    ];
    for (const request of cases) {
      const started = Date.now();
      await expectRefused(request);
      expect(Date.now() - started, `${request.method} ${request.path.slice(0, 80)}`).toBeLessThan(5_000);
    }
  });

  it("a form under the limit made of nothing but name segments is refused in time, and gRPC keeps answering meanwhile", async () => {
    // fieldTree (src/sqs/protocol/query-request.ts) makes one Map per dot-separated segment of a name: 2 MiB of dots are 2 million nodes.
    const request = form(`Action=GetQueueUrl&QueueName=${absent}&${".".repeat(2 * mib)}=1`);
    const started = Date.now();
    let answerMs = 0;
    const answering = exchange(h.endpoint, request, 20_000).finally(() => (answerMs = Date.now() - started));
    // gRPC calls one after another while the request is being served: the slowest shows how long the event loop was held.
    let grpcMs = 0;
    while (answerMs === 0) {
      const grpcStarted = Date.now();
      await h.rpc.getQueue({ name: "fz-a" }, { deadline: Date.now() + 20_000 });
      grpcMs = Math.max(grpcMs, Date.now() - grpcStarted);
    }
    const answer = await answering;
    expect(errorProblem(answer, "query")).toBeUndefined();
    // Reading 2 MiB of form takes milliseconds; these bounds leave a loaded machine ample room.
    expect(
      { answerMs: answerMs < 500, grpcMs: grpcMs < 250 },
      `answered in ${answerMs} ms, gRPC meanwhile in ${grpcMs} ms`,
    ).toEqual({ answerMs: true, grpcMs: true });
  });

  it("a 9 MiB body is refused with 413 as soon as it passes the limit, announced or chunked, and its connection closed", async () => {
    // The SQS endpoint's own limit: 4 MiB + 64 KiB, below gRPC's 8 MiB (src/server/holdshelf-server.ts).
    const limit = 4 * mib + 64 * 1024;
    const cases = [
      {
        protocol: "json" as const,
        headers: [`Content-Type: ${jsonType}`, "X-Amz-Target: AmazonSQS.SendMessage"],
        chunked: false,
      },
      {
        protocol: "json" as const,
        headers: [`Content-Type: ${jsonType}`, "X-Amz-Target: AmazonSQS.SendMessage"],
        chunked: true,
      },
      { protocol: "query" as const, headers: [`Content-Type: ${formType}`], chunked: false },
      { protocol: "query" as const, headers: [`Content-Type: ${formType}`], chunked: true },
    ];
    for (const { protocol, headers, chunked } of cases) {
      const socket = await openSocket(h.endpoint);
      const received: Buffer[] = [];
      let written = 0;
      const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
      socket.on("data", (chunk: Buffer) => received.push(chunk));
      socket.on("error", () => undefined);
      const framing = chunked ? "Transfer-Encoding: chunked" : `Content-Length: ${9 * mib}`;
      socket.write(["POST / HTTP/1.1", "Host: x", ...headers, framing, "", ""].join("\r\n"));
      // Write the body in 64 KiB pieces, each once the last has drained; stop at 9 MiB or once answered.
      const piece = Buffer.alloc(64 * 1024, 0x61);
      const answered = () => parseAnswer(Buffer.concat(received)) !== undefined;
      while (written < 9 * mib && !answered() && !socket.destroyed) {
        const frame = chunked
          ? Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from("\r\n")])
          : piece;
        written += piece.length;
        if (!socket.write(frame))
          await Promise.race([new Promise((resolve) => socket.once("drain", resolve)), closed, sleep(200)]);
      }
      // The chunked body is never ended: a 413 cannot wait for its end.
      const deadline = Date.now() + 5_000;
      while (!answered() && Date.now() < deadline) await sleep(10);
      const answer = parseAnswer(Buffer.concat(received));
      expect(answer, `${protocol} chunked=${chunked}: no answer after ${written} bytes`).toBeDefined();
      const error = readError(answer!, protocol);
      expect(error, `${protocol} chunked=${chunked}`).toEqual({
        status: 413,
        code: "RequestEntityTooLarge",
        message: `The request body is over ${limit} bytes.`,
      });
      expect(answer!.headers["connection"]).toBe("close");
      // Not left hanging: the broker closes the connection itself.
      const hung = await Promise.race([closed.then(() => false), sleep(5_000).then(() => true)]);
      socket.destroy();
      expect(hung, `${protocol} chunked=${chunked}: the connection was left open`).toBe(false);
    }
  });

  it("bodies cut off mid-way, held open or abandoned, never block other requests nor crash the listener", async () => {
    const requestHead = (length: number | "chunked") =>
      [
        "POST / HTTP/1.1",
        "Host: x",
        `Content-Type: ${jsonType}`,
        "X-Amz-Target: AmazonSQS.SendMessage",
        length === "chunked" ? "Transfer-Encoding: chunked" : `Content-Length: ${length}`,
        "",
        "",
      ].join("\r\n");
    const body = Buffer.from(
      JSON.stringify({ QueueUrl: h.urlOf("fz-a"), MessageBody: "never complete \u4e2d\ud83d\ude00" }),
    );
    const cuts: (Buffer | string)[] = [
      "POST / HT",
      "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: applic",
      Buffer.concat([Buffer.from(requestHead(body.length)), body.subarray(0, 10)]),
      Buffer.concat([Buffer.from(requestHead(body.length)), body.subarray(0, body.length - 1)]),
      // Cut in the middle of a multi-byte character.
      Buffer.concat([Buffer.from(requestHead(body.length)), body.subarray(0, body.indexOf(Buffer.from("\u4e2d")) + 1)]),
      Buffer.concat([
        Buffer.from(requestHead("chunked")),
        Buffer.from(`${body.length.toString(16)}\r\n`),
        body.subarray(0, 20),
      ]),
      Buffer.concat([
        Buffer.from(requestHead("chunked")),
        Buffer.from(`${body.length.toString(16)}\r\n`),
        body,
        Buffer.from("\r\n"),
      ]),
      Buffer.concat([Buffer.from(requestHead("chunked")), Buffer.from("ff")]),
    ];
    const held = [];
    for (let round = 0; round < 5; round++) {
      for (const cut of cuts) {
        const socket = await openSocket(h.endpoint);
        socket.on("error", () => undefined);
        socket.write(cut);
        held.push(socket);
      }
    }
    await sleep(100);
    // While 40 requests hang half-sent, others are served at once.
    for (let i = 0; i < 5; i++) {
      const started = Date.now();
      await expectServing();
      expect(Date.now() - started).toBeLessThan(2_000);
    }
    // A valid request trickled a few bytes at a time, split inside its multi-byte characters, is read whole.
    const trickled = Buffer.from(JSON.stringify({ QueueName: "fz-a", Noise: "\u00e9\u4e2d\ud83d\ude00".repeat(3) }));
    const slow = await openSocket(h.endpoint);
    const slowAnswer: Buffer[] = [];
    const slowClosed = new Promise<void>((resolve) => slow.once("close", () => resolve()));
    slow.on("data", (chunk: Buffer) => slowAnswer.push(chunk));
    slow.write(
      [
        "POST / HTTP/1.1",
        "Host: x",
        "Connection: close",
        `Content-Type: ${jsonType}`,
        "X-Amz-Target: AmazonSQS.GetQueueUrl",
        `Content-Length: ${trickled.length}`,
        "",
        "",
      ].join("\r\n"),
    );
    for (let at = 0; at < trickled.length; at += 3) {
      slow.write(trickled.subarray(at, at + 3));
      await sleep(2);
    }
    await Promise.race([slowClosed, sleep(5_000)]);
    const answer = parseAnswer(Buffer.concat(slowAnswer));
    expect(answer?.status).toBe(200);
    expect(JSON.parse(answer!.text)).toEqual({ QueueUrl: h.urlOf("fz-a") });
    // Now every half-sent request is abandoned at once, mid-way.
    const internalErrorsBefore = await internalErrors();
    for (const socket of held) socket.destroy();
    await sleep(200);
    await expectServing();
    // A client that hangs up is no fault of the broker's: neither an InternalError counted nor an unexpected error logged.
    const unexpected = logged.splice(0).filter((line) => line.includes("unexpected error"));
    expect({
      internalErrors: (await internalErrors()) - internalErrorsBefore,
      unexpectedLogged: unexpected.length,
      first: unexpected[0]?.slice(0, 160),
    }).toEqual({
      internalErrors: 0,
      unexpectedLogged: 0,
      first: undefined,
    });
  });

  it("bytes that are no HTTP request are answered 4xx or hung up on, and the listener carries on", async () => {
    const garbage: (string | Buffer)[] = [
      "FOO / HTTP/1.1\r\nHost: x\r\n\r\n",
      "GET / HTTP/9.9\r\nHost: x\r\n\r\n",
      "GET /\r\n\r\n",
      "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello",
      "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
      "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n",
      "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
      "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: x\r\nX-Amz-Target: AmazonSQS.\u0000\r\n\r\n",
      `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(40_000)}\r\n\r\n`,
      Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03]),
      Buffer.from([0x00, 0xff, 0xfe, 0x0d, 0x0a, 0x0d, 0x0a]),
      "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
    ];
    for (const bytes of garbage) {
      const socket = await openSocket(h.endpoint);
      const received: Buffer[] = [];
      const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
      socket.on("data", (chunk: Buffer) => received.push(chunk));
      socket.on("error", () => undefined);
      socket.write(bytes);
      // Answered or hung up on, within 5 s.
      let isClosed = false;
      void closed.then(() => (isClosed = true));
      const deadline = Date.now() + 5_000;
      while (!isClosed && parseAnswer(Buffer.concat(received)) === undefined && Date.now() < deadline) await sleep(10);
      const hung = !isClosed && parseAnswer(Buffer.concat(received)) === undefined;
      socket.destroy();
      const answer = parseAnswer(Buffer.concat(received));
      const shown = JSON.stringify(Buffer.from(bytes).toString("latin1").slice(0, 80));
      expect(hung, `no answer and no hang-up for ${shown}`).toBe(false);
      if (answer !== undefined) {
        expect(answer.status, shown).toBeGreaterThanOrEqual(400);
        expect(answer.status, shown).toBeLessThan(500);
      }
    }
  });
});

/** sqs_server_handled_total's InternalError answers, over every action. */
async function internalErrors(): Promise<number> {
  const samples = samplesOf(parseExposition(await h.server.metrics.metrics()), "sqs_server_handled_total", {
    sqs_code: "InternalError",
  });
  return samples.reduce((sum, sample) => sum + sample.value, 0);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// The table of actions must cover every action the endpoint knows.
it("the fuzzers know every action the endpoint has", async () => {
  const { sqsActions } = await import("../../src/sqs/actions/sqs-actions.js");
  expect(Object.keys(sqsActions).sort()).toEqual([...actionNames].sort());
  expect(Object.keys(validStructure(actionMembers["SendMessage"]!.members, absentUrl))).toContain("MessageAttributes");
});
