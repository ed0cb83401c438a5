import {
  type MessageAttributeValue,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
} from "@aws-sdk/client-sqs";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { QueueClient } from "../../src/client/queue-client.js";
import type { ReceivedMessage, TypedAttribute } from "../../src/client/types.js";
import { startSqsHarness, type SqsHarness } from "../sqs/sqs-harness.js";
import { text } from "../support/text.js";

// Every kind of typed attribute, as the TypeScript client takes and returns
// them, and as the AWS SDK for JavaScript sends and reads the same ones.
const typed: Record<string, TypedAttribute> = {
  total: { dataType: "Number", value: "12.50" },
  count: { dataType: "Number.int", value: "-7" },
  sig: { dataType: "Binary", value: Uint8Array.of(1, 2, 0, 255) },
  zipped: { dataType: "Binary.gzip", value: Uint8Array.of(31, 139) },
  doc: { dataType: "String.json", value: '{"a":1}' },
};
const asSqs: Record<string, MessageAttributeValue> = {
  kind: { DataType: "String", StringValue: "invoice" },
  total: { DataType: "Number", StringValue: "12.50" },
  count: { DataType: "Number.int", StringValue: "-7" },
  sig: { DataType: "Binary", BinaryValue: Uint8Array.of(1, 2, 0, 255) },
  zipped: { DataType: "Binary.gzip", BinaryValue: Uint8Array.of(31, 139) },
  doc: { DataType: "String.json", StringValue: '{"a":1}' },
};

/** A message's typed attributes with Binary values as plain byte lists, for comparing what two libraries hand back. */
function plain(
  attributes: Readonly<Record<string, TypedAttribute>>,
): Record<string, { dataType: string; value: unknown }> {
  return Object.fromEntries(
    Object.entries(attributes).map(([name, { dataType, value }]) => [
      name,
      { dataType, value: typeof value === "string" ? value : [...value] },
    ]),
  );
}

/** What the SDK read, with Binary values as plain byte lists. */
function plainSqs(attributes: Record<string, MessageAttributeValue> | undefined): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(attributes ?? {}).map(([name, { DataType, StringValue, BinaryValue }]) => [
      name,
      BinaryValue === undefined ? { DataType, StringValue } : { DataType, BinaryValue: [...BinaryValue] },
    ]),
  );
}

describe("typed attributes between the TypeScript client and the SQS endpoint", () => {
  let h: SqsHarness;
  let client: QueueClient;
  let url: string;
  beforeEach(async () => {
    h = await startSqsHarness();
    client = new QueueClient(h.server.address);
    await client.createQueue("typed");
    url = h.urlOf("typed");
  });
  afterEach(async () => {
    await client.close();
    await h.stop();
  });

  /** Receives n messages with the SDK (whose MD5 checks of the attributes are on), by body. */
  async function readWithSdk(n: number): Promise<Map<string, Record<string, unknown>>> {
    const read = new Map<string, Record<string, unknown>>();
    while (read.size < n) {
      const { Messages } = await h.sqs.send(
        new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, MessageAttributeNames: ["All"] }),
      );
      for (const message of Messages ?? []) read.set(message.Body!, plainSqs(message.MessageAttributes));
    }
    return read;
  }

  it("sent by send() (batched and alone) and sendBatch(), read by the AWS SDK with every data type and value as sent", async () => {
    const alone = new QueueClient(h.server.address, { batching: { delayMs: 0 } });
    try {
      const options = { attributes: { kind: "invoice" }, typedAttributes: typed };
      await Promise.all([
        client.send("typed", "batched", options),
        alone.send("typed", "alone", options),
        client.sendBatch("typed", [{ body: "in a batch", ...options }]),
      ]);
    } finally {
      await alone.close();
    }
    const read = await readWithSdk(3);
    const expected = plainSqs(asSqs);
    expect(Object.fromEntries(read)).toEqual({ batched: expected, alone: expected, "in a batch": expected });
  });

  it("sent by the AWS SDK, read by receive(), peekMessages() and a Consumer's deliveries as typedAttributes", async () => {
    await h.sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "single", MessageAttributes: asSqs }));
    await h.sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: url,
        Entries: [{ Id: "1", MessageBody: "batched", MessageAttributes: asSqs }],
      }),
    );
    // A plain String attribute is an attribute; every other type, custom String ones included, is typed.
    const expected = { attributes: { kind: "invoice" }, typedAttributes: plain(typed) };
    const seen = (message: Pick<ReceivedMessage, "body" | "attributes" | "typedAttributes">) => [
      text(message.body),
      { attributes: message.attributes, typedAttributes: plain(message.typedAttributes) },
    ];

    const peeked = (await client.peekMessages("typed")).messages;
    expect(Object.fromEntries(peeked.map(seen))).toEqual({ single: expected, batched: expected });

    const [received] = await client.receive("typed", { maxMessages: 1, visibilityTimeoutMs: 0 });
    expect(seen(received!)[1]).toEqual(expected);
    // Binary values come as bytes, the rest as strings.
    expect(received!.typedAttributes["sig"]!.value).toBeInstanceOf(Uint8Array);

    const delivered: [string, unknown][] = [];
    const consumer = client.consume("typed", (message) => void delivered.push(seen(message) as [string, unknown]), {
      concurrency: 2,
    });
    try {
      await vi.waitFor(() => expect(delivered).toHaveLength(2), { timeout: 10_000 });
    } finally {
      await consumer.stop();
    }
    expect(Object.fromEntries(delivered)).toEqual({ single: expected, batched: expected });
  });
});
