// Typed message attributes over gRPC: sent with Send and SendBatch, received
// back exactly (data type, oneof case and value), refused with the field
// violations the proto documents, and kept across a dead-letter move and a
// redrive (in the cluster run, across brokers: the inbox carries them).
import type { MessageInitShape } from "@bufbuild/protobuf";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { status } from "@grpc/grpc-js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { TypedAttributeValue, TypedAttributeValueSchema } from "../../gen/holdshelf/v1/message_pb.js";
import { expectRpcError } from "../support/expect-rpc-error.js";
import { FakeClock } from "../support/fake-clock.js";
import { startGrpcHarness, type GrpcHarness } from "../support/grpc-harness.js";

type TypedInit = MessageInitShape<typeof TypedAttributeValueSchema>;

/** One typed attribute of each kind, custom labels and empty values included. */
const everyKind: Record<string, TypedInit> = {
  s: { dataType: "String", value: { case: "stringValue", value: "héllo ✓" } },
  empty: { dataType: "String.note", value: { case: "stringValue", value: "" } },
  n: { dataType: "Number", value: { case: "stringValue", value: "-1.50E+10" } },
  int: { dataType: "Number.int", value: { case: "stringValue", value: "42" } },
  b: { dataType: "Binary", value: { case: "binaryValue", value: Uint8Array.of(0, 1, 127, 128, 255) } },
  gz: { dataType: "Binary.gzip", value: { case: "binaryValue", value: new Uint8Array(0) } },
};

/** Received typed attributes as plain values, binary ones as byte arrays. */
function plain(typed: Readonly<Record<string, TypedAttributeValue | TypedInit>>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(typed).map(([name, { dataType, value }]) => [
      name,
      { dataType, case: value?.case, value: value?.value instanceof Uint8Array ? [...value.value] : value?.value },
    ]),
  );
}

describe("typed attributes over gRPC", () => {
  let h: GrpcHarness;
  const clock = new FakeClock();
  beforeEach(async () => {
    h = await startGrpcHarness({ clock });
    await h.rpc.createQueue({ name: "work", config: { maxMessageBytes: 1024 } });
  });
  afterEach(async () => {
    await h.stop();
  });

  it("receives what Send and SendBatch sent, each value in its own oneof case, beside the plain attributes", async () => {
    await h.rpc.send({
      queue: "work",
      body: Buffer.from("one"),
      attributes: { plain: "p" },
      typedAttributes: everyKind,
    });
    await h.rpc.sendBatch({
      queue: "work",
      entries: [
        { body: Buffer.from("two"), typedAttributes: { int: everyKind["int"]! } },
        { body: Buffer.from("three") },
      ],
    });
    const [one, two, three] = (await h.rpc.receive({ queue: "work", maxMessages: 3 })).messages;
    expect(one!.attributes).toEqual({ plain: "p" });
    expect(Object.keys(one!.typedAttributes)).toEqual(Object.keys(everyKind));
    expect(plain(one!.typedAttributes)).toEqual(plain(everyKind));
    expect(plain(two!.typedAttributes)).toEqual({ int: { dataType: "Number.int", case: "stringValue", value: "42" } });
    expect(three!.typedAttributes).toEqual({});
  });

  it("refuses bad typed attributes with INVALID_ARGUMENT naming the attribute's field", async () => {
    const send = (typedAttributes: Record<string, TypedInit>, attributes: Record<string, string> = {}) =>
      h.rpc.send({ queue: "work", body: Buffer.from("x"), attributes, typedAttributes });
    const invalid = status.INVALID_ARGUMENT;
    await expectRpcError(
      send({ x: { dataType: "Integer", value: { case: "stringValue", value: "1" } } }),
      invalid,
      "INVALID_ARGUMENT",
      'typed_attributes["x"].data_type',
    );
    await expectRpcError(
      send({ x: { dataType: "Number.", value: { case: "stringValue", value: "1" } } }),
      invalid,
      "INVALID_ARGUMENT",
      'typed_attributes["x"].data_type',
    );
    await expectRpcError(
      send({ x: { dataType: "String" } }),
      invalid,
      "INVALID_ARGUMENT",
      'typed_attributes["x"].string_value',
    );
    await expectRpcError(
      send({ x: { dataType: "Number", value: { case: "binaryValue", value: Uint8Array.of(1) } } }),
      invalid,
      "INVALID_ARGUMENT",
      'typed_attributes["x"].string_value',
    );
    await expectRpcError(
      send({ x: { dataType: "Binary.gzip", value: { case: "stringValue", value: "AAE=" } } }),
      invalid,
      "INVALID_ARGUMENT",
      'typed_attributes["x"].binary_value',
    );
    await expectRpcError(
      send({ k: everyKind["s"]! }, { k: "v" }),
      invalid,
      "INVALID_ARGUMENT",
      'typed_attributes["k"]',
    );
    await expectRpcError(send({ "": everyKind["s"]! }), invalid, "INVALID_ARGUMENT", "typed_attributes");
    await expectRpcError(
      h.rpc.sendBatch({
        queue: "work",
        entries: [{ body: Buffer.from("ok") }, { typedAttributes: { y: { dataType: "Binary" } } }],
      }),
      invalid,
      "INVALID_ARGUMENT",
      'entries[1].typed_attributes["y"].binary_value',
    );
    // 1024 bytes in all: body 1014, name "b" 1, data type "Binary" 6, value 3; one more value byte is too many.
    const sized = (valueBytes: number) =>
      h.rpc.send({
        queue: "work",
        body: new Uint8Array(1014),
        typedAttributes: {
          b: { dataType: "Binary", value: { case: "binaryValue", value: new Uint8Array(valueBytes) } },
        },
      });
    await sized(3);
    await expectRpcError(sized(4), invalid, "MESSAGE_TOO_LARGE", "body");
    expect((await h.rpc.getQueue({ name: "work" })).queue!.stats!.visible).toBe(1n);
  });

  it("keeps them through a dead-letter move and a redrive", async () => {
    await h.rpc.createQueue({ name: "dlq" });
    await h.rpc.createQueue({
      name: "once",
      config: { redrivePolicy: { deadLetterQueue: "dlq", maxReceiveCount: 1 } },
    });
    const { messageId } = await h.rpc.send({ queue: "once", body: Buffer.from("poison"), typedAttributes: everyKind });
    // A visibility timeout of 0 on the last allowed delivery moves the message right after the answer.
    await h.rpc.receive({ queue: "once", visibilityTimeout: durationFromMs(0) });
    await h.settled();
    const [dead] = (
      await h.rpc.receive({ queue: "dlq", visibilityTimeout: durationFromMs(0), waitTime: durationFromMs(5000) })
    ).messages;
    expect(dead).toMatchObject({ messageId, deadLetterSourceQueue: "once" });
    expect(plain(dead!.typedAttributes)).toEqual(plain(everyKind));
    expect((await h.rpc.redriveMessages({ deadLetterQueue: "dlq" })).movedCount).toBe(1n);
    const [back] = (await h.rpc.receive({ queue: "once", waitTime: durationFromMs(5000) })).messages;
    expect(back).toMatchObject({ messageId, deadLetterSourceQueue: "" });
    expect(plain(back!.typedAttributes)).toEqual(plain(everyKind));
  });
});
