// The hand-written ReceiveResponse encoder (src/service/receive-response-encoding.ts)
// against protobuf-es's own encoding of the same response: byte for byte,
// for generated deliveries with every optional part present and absent.
// Reproduce a failure with HOLDSHELF_FC_SEED=<seed printed by fast-check>.
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ReceivedMessageSchema, type ReceivedMessage } from "../../gen/holdshelf/v1/message_pb.js";
import { ReceiveResponseSchema, SubscribeResponseSchema } from "../../gen/holdshelf/v1/queue_service_pb.js";
import type { Delivery } from "../../src/broker/types.js";
import { ReceivedDeliveries } from "../../src/service/received-deliveries.js";
import { encodeReceiveResponse, encodeSubscribeDeliveries } from "../../src/service/receive-response-encoding.js";
import { WireWriter } from "../../src/service/wire-writer.js";

const seed = Number(process.env["HOLDSHELF_FC_SEED"] ?? 20261203);

/** What the server sent before the hand-written encoder: protobuf-es's message, built from the delivery. */
function referenceMessage(delivery: Delivery): ReceivedMessage {
  return create(ReceivedMessageSchema, {
    messageId: delivery.messageId,
    receiptHandle: delivery.receiptHandle,
    body: delivery.body,
    attributes: { ...delivery.attributes },
    receiveCount: delivery.receiveCount,
    sendTime: timestampFromMs(delivery.sendTime),
    firstReceiveTime: timestampFromMs(delivery.firstReceiveTime),
    leaseDeadline: timestampFromMs(delivery.leaseDeadline),
    ...(delivery.checkpoint === undefined ? {} : { checkpoint: delivery.checkpoint }),
    deadLetterSourceQueue: delivery.deadLetter?.sourceQueue ?? "",
    deadLetterReason: delivery.deadLetter?.reason ?? "",
    typedAttributes: Object.fromEntries(
      Object.entries(delivery.typedAttributes).map(([name, { dataType, value }]) => [
        name,
        {
          dataType,
          value:
            typeof value === "string"
              ? { case: "stringValue" as const, value }
              : { case: "binaryValue" as const, value },
        },
      ]),
    ),
    ...delivery.fifo,
    traceHeader: delivery.traceHeader ?? "",
    ...(delivery.deadLetteredTime === undefined
      ? {}
      : { deadLetteredTime: timestampFromMs(delivery.deadLetteredTime) }),
  });
}

function referenceEncoding(deliveries: Delivery[]): Uint8Array {
  return toBinary(ReceiveResponseSchema, create(ReceiveResponseSchema, { messages: deliveries.map(referenceMessage) }));
}

const epochMs = fc.oneof(
  fc.constant(0),
  fc.integer({ min: 1, max: 999 }),
  fc.integer({ min: 0, max: 4_000_000_000 }).map((seconds) => seconds * 1000),
  fc.integer({ min: 0, max: 4_000_000_000_000 }),
);
const text = fc.oneof(fc.constant(""), fc.string({ maxLength: 40 }), fc.string({ unit: "grapheme", maxLength: 20 }));
const bytes = (maxLength: number): fc.Arbitrary<Uint8Array> =>
  fc.oneof(
    fc.uint8Array({ maxLength: 300 }),
    fc.integer({ min: 0, max: maxLength }).map((length) => new Uint8Array(length).fill(7)),
  );
const attributes = fc
  .array(fc.tuple(fc.oneof(text, fc.constantFrom("__proto__", "1", "10", "constructor")), text), { maxLength: 6 })
  .map((pairs) => Object.fromEntries(pairs));

// Every kind of value, empty ones included, and data types empty (protobuf-es then leaves the field out) or long.
const typedAttribute = fc.record({
  dataType: fc.oneof(
    fc.constantFrom("String", "Number.int", "Binary", "Binary.gzip", ""),
    text,
    fc.string({ minLength: 120, maxLength: 256 }),
  ),
  value: fc.oneof(text, bytes(1000), fc.constant(""), fc.constant(new Uint8Array(0))),
});
const typedAttributes = fc
  .array(fc.tuple(fc.oneof(text, fc.constantFrom("__proto__", "1", "10", "constructor")), typedAttribute), {
    maxLength: 5,
  })
  .map((pairs) => Object.fromEntries(pairs));

// A FIFO queue's ids are ASCII letters, digits and punctuation, 1 to 128 of
// them (the broker refuses others at send), which the encoder counts on; 128
// makes a two-byte length. Empty ones (protobuf-es leaves them out) too.
const fifoId = fc.oneof(
  fc.constant(""),
  fc.string({
    unit: fc.integer({ min: 0x21, max: 0x7e }).map((code) => String.fromCharCode(code)),
    minLength: 1,
    maxLength: 128,
  }),
  fc.constant("x".repeat(128)),
);
const fifo = fc.record({
  messageGroupId: fifoId,
  sequenceNumber: fc.oneof(
    fc.constant(""),
    fc.bigInt({ min: 0n, max: 10n ** 20n - 1n }).map((n) => n.toString().padStart(20, "0")),
  ),
  // As sent, a body's SHA-256 in hex, or a message id after a dead-letter move.
  deduplicationId: fc.oneof(
    fifoId,
    fc.string({ unit: fc.constantFrom(..."0123456789abcdef"), minLength: 64, maxLength: 64 }),
    fc.uuid(),
  ),
});

// Printable ASCII up to the broker's 512 characters (checked at send), which the encoder counts on; 128 makes a two-byte length.
const traceHeader = fc.oneof(
  fc.constant(""),
  fc.string({
    unit: fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code)),
    minLength: 1,
    maxLength: 512,
  }),
  fc.constant("Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"),
);

const delivery: fc.Arbitrary<Delivery> = fc.record({
  messageId: fc.oneof(fc.uuid(), fc.constant("")),
  receiptHandle: fc.oneof(fc.base64String({ maxLength: 120 }), text),
  body: bytes(200_000),
  attributes,
  typedAttributes,
  receiveCount: fc.oneof(fc.integer({ min: 1, max: 1000 }), fc.constantFrom(0, 127, 128, 2 ** 31 - 1, -1, -(2 ** 31))),
  sendTime: epochMs,
  firstReceiveTime: epochMs,
  leaseDeadline: epochMs,
  checkpoint: fc.option(bytes(70_000), { nil: undefined }),
  deadLetter: fc.option(fc.record({ sourceQueue: text, reason: text }), { nil: undefined }),
  fifo: fc.option(fifo, { nil: undefined }),
  traceHeader: fc.option(traceHeader, { nil: undefined }),
  deadLetteredTime: fc.option(epochMs, { nil: undefined }),
});

describe("encodeReceiveResponse", () => {
  it("writes exactly the bytes protobuf-es writes for the same response", () => {
    fc.assert(
      fc.property(fc.array(delivery, { maxLength: 5 }), (deliveries) => {
        const encoded = encodeReceiveResponse(deliveries).bytes;
        expect(Buffer.from(encoded).equals(Buffer.from(referenceEncoding(deliveries)))).toBe(true);
      }),
      { numRuns: 300, seed },
    );
  });

  it("writes a Subscribe stream's deliveries as the bytes protobuf-es writes for a SubscribeResponse of them", () => {
    fc.assert(
      fc.property(fc.array(delivery, { minLength: 1, maxLength: 5 }), (deliveries) => {
        const encoded = encodeSubscribeDeliveries(deliveries).bytes;
        const reference = toBinary(
          SubscribeResponseSchema,
          create(SubscribeResponseSchema, { messages: deliveries.map(referenceMessage) }),
        );
        expect(Buffer.from(encoded).equals(Buffer.from(reference))).toBe(true);
      }),
      { numRuns: 100, seed },
    );
  });

  it("encodes a response that decodes back to the deliveries' fields", () => {
    const sent: Delivery = {
      messageId: "0190a6b2-0000-7000-8000-000000000001",
      receiptHandle: "handle-1",
      body: Buffer.from("héllo"),
      attributes: { kind: "ünïcode", "": "" },
      typedAttributes: {
        count: { dataType: "Number.int", value: "42" },
        note: { dataType: "String.ünï", value: "" },
        blob: { dataType: "Binary.gzip", value: Uint8Array.of(0, 1, 255) },
        nothing: { dataType: "Binary", value: new Uint8Array(0) },
      },
      receiveCount: 3,
      sendTime: 1_767_225_600_123,
      firstReceiveTime: 1_767_225_601_000,
      leaseDeadline: 1_767_225_631_999,
      checkpoint: new Uint8Array(0),
      deadLetter: { sourceQueue: "orders", reason: "MAX_RECEIVE_COUNT_EXCEEDED" },
      fifo: { messageGroupId: "customer-7", sequenceNumber: "00000000000000000042", deduplicationId: "order-9" },
      traceHeader: "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1",
    };
    const [message] = fromBinary(ReceiveResponseSchema, encodeReceiveResponse([sent]).bytes).messages;
    expect(message).toMatchObject({
      messageId: sent.messageId,
      receiptHandle: sent.receiptHandle,
      attributes: sent.attributes,
      receiveCount: 3,
      sendTime: { seconds: 1_767_225_600n, nanos: 123_000_000 },
      firstReceiveTime: { seconds: 1_767_225_601n, nanos: 0 },
      leaseDeadline: { seconds: 1_767_225_631n, nanos: 999_000_000 },
      deadLetterSourceQueue: "orders",
      deadLetterReason: "MAX_RECEIVE_COUNT_EXCEEDED",
      messageGroupId: "customer-7",
      sequenceNumber: "00000000000000000042",
      deduplicationId: "order-9",
      traceHeader: sent.traceHeader,
    });
    expect(Buffer.from(message!.body).toString()).toBe("héllo");
    // Each value in its own oneof case, empty ones too: "" is a string_value, not unset.
    const typed = message!.typedAttributes;
    expect(Object.keys(typed)).toEqual(["count", "note", "blob", "nothing"]);
    expect(typed["count"]).toMatchObject({ dataType: "Number.int", value: { case: "stringValue", value: "42" } });
    expect(typed["note"]).toMatchObject({ dataType: "String.ünï", value: { case: "stringValue", value: "" } });
    expect(typed["blob"]!.dataType).toBe("Binary.gzip");
    expect(typed["blob"]!.value.case).toBe("binaryValue");
    expect([...(typed["blob"]!.value.value as Uint8Array)]).toEqual([0, 1, 255]);
    expect(typed["nothing"]!.value).toMatchObject({ case: "binaryValue" });
    expect((typed["nothing"]!.value.value as Uint8Array).length).toBe(0);
    // An empty checkpoint is present, not absent: it was saved, and is empty.
    expect(message!.checkpoint).toBeDefined();
    expect(message!.checkpoint!.length).toBe(0);
  });

  it("answers no deliveries with an empty response", () => {
    expect(encodeReceiveResponse([]).bytes.length).toBe(0);
  });
});

describe("ReceivedDeliveries", () => {
  it("sends encodeReceiveResponse's bytes, and gives in-process callers the very message those bytes encode", () => {
    fc.assert(
      fc.property(fc.array(delivery, { maxLength: 5 }), (deliveries) => {
        const answer = new ReceivedDeliveries(deliveries);
        const encoded = Buffer.from(encodeReceiveResponse(deliveries).bytes);
        expect(Buffer.from(toBinary(ReceiveResponseSchema, answer.message())).equals(encoded)).toBe(true);
        expect(Buffer.from(answer.bytes).equals(encoded)).toBe(true);
      }),
      { numRuns: 300, seed },
    );
  });
});

describe("WireWriter", () => {
  it("refuses to finish when an encoder measured a size it did not write", () => {
    const writer = new WireWriter(3);
    writer.varint(300);
    expect(() => writer.finish()).toThrow(/measured 3 bytes but wrote 2/);
  });

  it("writes negative int32 values sign-extended to ten bytes, as protobuf does", () => {
    const writer = new WireWriter(10);
    writer.int32(-1);
    expect([...writer.finish()]).toEqual([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]);
  });
});
