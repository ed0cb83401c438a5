// Typed message attributes (SQS's String, Number and Binary): what Send
// checks, what counts toward the size limits, and that every move of a
// message (receive, restart, dead-lettering, redrive) keeps them exactly.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { OutgoingMessage, TypedAttributeInput } from "../../src/broker/types.js";
import type { TypedAttribute } from "../../src/store/store.js";
import {
  body,
  counts,
  createQueue,
  expectFailure,
  openBrokerHarness,
  receiveOne,
  send,
  sendBatch,
  type BrokerHarness,
} from "./broker-harness.js";

/** One typed attribute of each kind, custom labels and empty values included. */
const everyKind: Record<string, TypedAttribute> = {
  s: { dataType: "String", value: "héllo" },
  labelled: { dataType: "String.ünï", value: "" },
  n: { dataType: "Number", value: "-1.5E+10" },
  int: { dataType: "Number.int", value: "007" },
  b: { dataType: "Binary", value: Uint8Array.of(0, 1, 254, 255) },
  gz: { dataType: "Binary.gzip", value: new Uint8Array(0) },
};

/** Typed attributes as plain values, binary ones as byte arrays, so that Buffers and Uint8Arrays compare equal. */
function plain(
  typed: Readonly<Record<string, TypedAttribute>>,
): Record<string, { dataType: string; value: string | number[] }> {
  return Object.fromEntries(
    Object.entries(typed).map(([name, { dataType, value }]) => [
      name,
      { dataType, value: typeof value === "string" ? value : [...value] },
    ]),
  );
}

/** A message of `size` bytes of body with the given typed attributes. */
function typed(
  size: number,
  typedAttributes: Record<string, TypedAttributeInput>,
  attributes: Record<string, string> = {},
): OutgoingMessage {
  return { body: new Uint8Array(size), attributes, typedAttributes };
}

describe("typed attributes", () => {
  let h: BrokerHarness;
  beforeEach(async () => {
    h = await openBrokerHarness();
    await createQueue(h, "q");
  });
  afterEach(async () => {
    expect(h.backgroundErrors).toEqual([]);
    await h.dispose();
  });

  it("delivers every kind exactly as sent, in the order sent, beside the plain attributes, also after a restart", async () => {
    await send(h.broker, "q", { body: body("m"), attributes: { plain: "p" }, typedAttributes: everyKind });
    const first = await receiveOne(h, "q", { visibilityTimeoutMs: 0 });
    expect(first.attributes).toEqual({ plain: "p" });
    expect(Object.keys(first.typedAttributes)).toEqual(Object.keys(everyKind));
    expect(plain(first.typedAttributes)).toEqual(plain(everyKind));
    expect(first.typedAttributes["b"]!.value).toBeInstanceOf(Uint8Array);
    expect(first.typedAttributes["gz"]!.value).toBeInstanceOf(Uint8Array);
    await h.restart();
    expect(plain((await receiveOne(h, "q")).typedAttributes)).toEqual(plain(everyKind));
  });

  it("delivers none on a message sent without them", async () => {
    await send(h.broker, "q", { body: body("m") });
    expect((await receiveOne(h, "q")).typedAttributes).toEqual({});
  });

  it("keeps a typed attribute named __proto__ as an attribute", async () => {
    const named = Object.fromEntries([["__proto__", { dataType: "Number", value: "1" }]]) as Record<
      string,
      TypedAttribute
    >;
    await send(h.broker, "q", typed(1, named));
    expect(Object.entries((await receiveOne(h, "q")).typedAttributes)).toEqual([
      ["__proto__", { dataType: "Number", value: "1" }],
    ]);
  });

  describe("checks", () => {
    it("accepts the three base types, each with or without a label, and a data type of 256 characters", async () => {
      await send(h.broker, "q", typed(1, everyKind));
      await send(h.broker, "q", typed(1, { x: { dataType: `Number.${"é".repeat(249)}`, value: "1" } }));
      await send(h.broker, "q", typed(1, { x: { dataType: "Binary.\n.", value: new Uint8Array(1) } }));
      expect(counts(h, "q").visible).toBe(3);
    });

    it.each([
      ["an empty one", ""],
      ["an unknown base type", "Text"],
      ["a lower-case base type", "string"],
      ["a dot with no label", "String."],
      ["a label without its dot", "Numberint"],
      ["one over 256 characters", `String.${"x".repeat(250)}`],
    ])("refuses %s as INVALID_ARGUMENT on the attribute's data_type", async (_, dataType) => {
      await expectFailure(
        () => send(h.broker, "q", typed(1, { x: { dataType, value: "v" } })),
        "INVALID_ARGUMENT",
        'typed_attributes["x"].data_type',
      );
    });

    it("refuses a String or Number type without a string value, naming string_value", async () => {
      for (const dataType of ["String", "Number.int"]) {
        await expectFailure(
          () => send(h.broker, "q", typed(1, { x: { dataType, value: new Uint8Array(1) } })),
          "INVALID_ARGUMENT",
          'typed_attributes["x"].string_value',
        );
        await expectFailure(
          () => send(h.broker, "q", typed(1, { x: { dataType, value: undefined } })),
          "INVALID_ARGUMENT",
          'typed_attributes["x"].string_value',
        );
      }
    });

    it("refuses a Binary type without a binary value, naming binary_value", async () => {
      for (const value of ["text", undefined]) {
        await expectFailure(
          () => send(h.broker, "q", typed(1, { 'a "quoted" name': { dataType: "Binary.gzip", value } })),
          "INVALID_ARGUMENT",
          'typed_attributes["a \\"quoted\\" name"].binary_value',
        );
      }
    });

    it("refuses a name that is also a plain attribute, naming the typed attribute", async () => {
      await expectFailure(
        () => send(h.broker, "q", typed(1, { k: { dataType: "Number", value: "1" } }, { k: "1" })),
        "INVALID_ARGUMENT",
        'typed_attributes["k"]',
      );
      // Names are compared exactly: another case is another name.
      await send(h.broker, "q", typed(1, { K: { dataType: "Number", value: "1" } }, { k: "1" }));
    });

    it("refuses an empty name, or one over 256 bytes, as INVALID_ARGUMENT on typed_attributes", async () => {
      const value = { dataType: "String", value: "v" };
      await expectFailure(() => send(h.broker, "q", typed(1, { "": value })), "INVALID_ARGUMENT", "typed_attributes");
      await expectFailure(
        () => send(h.broker, "q", typed(1, { ["é".repeat(129)]: value })),
        "INVALID_ARGUMENT",
        "typed_attributes",
      );
      await send(h.broker, "q", typed(1, { ["é".repeat(128)]: value }));
    });

    it("names the entry in a batch, and stores none of it", async () => {
      const good = typed(1, { x: { dataType: "String", value: "v" } });
      await expectFailure(
        () => sendBatch(h.broker, "q", [good, good, typed(1, { y: { dataType: "Binary", value: "v" } })]),
        "INVALID_ARGUMENT",
        'entries[2].typed_attributes["y"].binary_value',
      );
      await expectFailure(
        () => sendBatch(h.broker, "q", [typed(1, { y: { dataType: "Str", value: "v" } })]),
        "INVALID_ARGUMENT",
        'entries[0].typed_attributes["y"].data_type',
      );
      await expectFailure(
        () => sendBatch(h.broker, "q", [good, typed(1, { x: { dataType: "String", value: "v" } }, { x: "" })]),
        "INVALID_ARGUMENT",
        'entries[1].typed_attributes["x"]',
      );
      expect(counts(h, "q").visible).toBe(0);
    });
  });

  describe("sizes", () => {
    beforeEach(async () => {
      await createQueue(h, "small", { maxMessageBytes: 1024 });
    });

    // Name "é" (2 bytes) + data type "Binary.gz" (9) + 3 value bytes = 14.
    const binary = { é: { dataType: "Binary.gz", value: new Uint8Array(3) } };
    // Name "n" (1) + data type "Number" (6) + value "ü1" (3 bytes in UTF-8) = 10.
    const number = { n: { dataType: "Number", value: "ü1" } };

    it("counts each name, data type and value toward max_message_bytes, in UTF-8 bytes", async () => {
      await send(h.broker, "small", typed(1024 - 14, binary));
      await expectFailure(() => send(h.broker, "small", typed(1024 - 13, binary)), "MESSAGE_TOO_LARGE", "body");
      await send(h.broker, "small", typed(1024 - 10, number));
      await expectFailure(() => send(h.broker, "small", typed(1024 - 9, number)), "MESSAGE_TOO_LARGE", "body");
      // Together with plain attributes: k + v = 2 more bytes.
      await send(h.broker, "small", typed(1024 - 24 - 2, { ...binary, ...number }, { k: "v" }));
      await expectFailure(
        () => send(h.broker, "small", typed(1024 - 24 - 1, { ...binary, ...number }, { k: "v" })),
        "MESSAGE_TOO_LARGE",
        "body",
      );
      expect(counts(h, "small").visible).toBe(3);
    });

    it("counts them toward a SendBatch's 4 MiB", async () => {
      const mib = 1024 * 1024;
      await createQueue(h, "big", { maxMessageBytes: mib });
      const full = (bytes: number): OutgoingMessage => typed(bytes, {});
      await expectFailure(
        () => sendBatch(h.broker, "big", [full(mib), full(mib), full(mib), full(mib - 14), typed(1, binary)]),
        "MESSAGE_TOO_LARGE",
        "entries",
      );
      expect(counts(h, "big").visible).toBe(0);
      await sendBatch(h.broker, "big", [full(mib), full(mib), full(mib), full(mib - 14), typed(0, binary)]);
      expect(counts(h, "big").visible).toBe(5);
    });
  });

  describe("dead letters", () => {
    const vt = 1000;
    beforeEach(async () => {
      await createQueue(h, "dlq");
      await createQueue(h, "work", {
        visibilityTimeoutMs: vt,
        redrivePolicy: { deadLetterQueue: "dlq", maxReceiveCount: 1 },
      });
    });

    it("keeps them when a message is dead-lettered and when it is redriven back", async () => {
      await send(h.broker, "work", { body: body("poison"), attributes: { plain: "p" }, typedAttributes: everyKind });
      await receiveOne(h, "work");
      h.clock.advance(vt);
      await h.broker.runMaintenance();
      await h.broker.settled();
      const dead = await receiveOne(h, "dlq", { visibilityTimeoutMs: 0 });
      expect(dead.deadLetter).toEqual({ sourceQueue: "work", reason: "MAX_RECEIVE_COUNT_EXCEEDED" });
      expect(dead.attributes).toEqual({ plain: "p" });
      expect(plain(dead.typedAttributes)).toEqual(plain(everyKind));
      await h.broker.settled();
      expect(await h.broker.redriveMessages("dlq", "", 0, 0)).toBe(1);
      const back = await receiveOne(h, "work");
      expect(back.deadLetter).toBeUndefined();
      expect(plain(back.typedAttributes)).toEqual(plain(everyKind));
    });
  });
});
