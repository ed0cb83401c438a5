// fast-check arbitraries for hostile QueueService requests, built as raw
// bytes with the hand-written encoder so that they can hold what no valid
// message can: invalid UTF-8, out-of-range Durations, 64-bit varints in
// int32 fields, unknown fields.
import fc from "fast-check";
import * as wire from "./wire-encoder.js";

/** Queues and receipt handles of a fixture that the arbitraries draw from. */
export interface RequestFixture {
  /** Queues that exist. */
  readonly queues: readonly string[];
  /** Handles of messages leased from queues[0]. */
  readonly handles: readonly string[];
  /** Handles of messages leased from queues[1]: valid, but of another queue when sent with queues[0]. */
  readonly otherQueueHandles: readonly string[];
}

/** Byte sequences that are not UTF-8: a lone continuation byte, a truncated sequence, a surrogate, an overlong NUL, 0xFF. */
const invalidUtf8 = fc.constantFrom(
  [0x80],
  [0xc3],
  [0xe2, 0x82],
  [0xed, 0xa0, 0x80],
  [0xc0, 0x80],
  [0xff, 0xfe],
  [0xf4, 0x90, 0x80, 0x80],
);

/**
 * How much of a request may be broken: "fields" keeps every string valid
 * UTF-8 and the encoding sound, so that the request reaches the broker's own
 * checks; "bytes" also breaks the encoding (non-UTF-8 strings, garbage).
 */
export type Damage = "fields" | "bytes";

/** Text for a string field: known names (mostly), random, empty or huge text, and with "bytes" damage, bytes that are not UTF-8. */
export function textBytes(damage: Damage, known: readonly string[] = []): fc.Arbitrary<Uint8Array> {
  const utf8 = (text: string): Uint8Array => Buffer.from(text, "utf8");
  const options: fc.WeightedArbitrary<Uint8Array>[] = [
    { arbitrary: fc.string({ maxLength: 100, unit: "grapheme" }).map(utf8), weight: 1 },
    {
      arbitrary: fc.constantFrom("", " ", "a".repeat(81), "a".repeat(80), "q\u0000", "ünï", "../etc", "%00").map(utf8),
      weight: 1,
    },
    { arbitrary: fc.integer({ min: 1_000, max: 300_000 }).map((n) => utf8("x".repeat(n))), weight: 1 },
  ];
  if (damage === "bytes") {
    options.push({
      arbitrary: fc
        .tuple(fc.string({ maxLength: 10 }), invalidUtf8, fc.string({ maxLength: 10 }))
        .map(([a, bad, b]) => wire.concat(utf8(a), Uint8Array.from(bad), utf8(b))),
      weight: 2,
    });
  }
  if (known.length > 0) options.push({ arbitrary: fc.constantFrom(...known).map(utf8), weight: 6 });
  return fc.oneof(...options);
}

/** Seconds of a Duration: ordinary, boundary (timer limit, safe-integer limit) and overflowing int64 values. */
const durationSeconds = fc.oneof(
  fc.bigInt({ min: 0n, max: 3_600n }),
  fc.constantFrom(0n, 1n, 20n, 2_147_483n, 2_147_484n, 9_007_199_254_740n, 10_000_000_000n, 10_000_000_001n),
  fc.constantFrom(-1n, -(2n ** 63n), 2n ** 63n - 1n, 2n ** 64n - 1n),
  fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
);

/** Nanos of a Duration: in range, out of range, negative, and int32 overflow. */
const durationNanos = fc.oneof(
  fc.integer({ min: 0, max: 999_999_999 }),
  fc.constantFrom(0, -1, 999_999_999, 1_000_000_000, -1_000_000_000, 2 ** 31 - 1, -(2 ** 31)),
  fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
);

/** A Duration field's body, or undefined for unset: unset, short valid ones, and boundary or out-of-range ones. */
export function durationBody(damage: Damage): fc.Arbitrary<Uint8Array | undefined> {
  const options: fc.WeightedArbitrary<Uint8Array | undefined>[] = [
    { arbitrary: fc.constant(undefined), weight: 2 },
    { arbitrary: fc.integer({ min: 0, max: 1_000 }).map((ms) => wire.duration(0, ms * 1_000_000)), weight: 3 },
    { arbitrary: fc.tuple(durationSeconds, durationNanos).map(([s, n]) => wire.duration(s, n)), weight: 4 },
  ];
  // A Duration whose own bytes do not decode (seconds sent length-delimited): the whole request is malformed.
  if (damage === "bytes")
    options.push({ arbitrary: fc.constant(wire.concat(wire.key(1, 2), wire.varint(1), Buffer.from([1]))), weight: 1 });
  return fc.oneof(...options);
}

/** An int32 field's value, including values only a 64-bit varint holds. */
export const int32Value = fc.oneof(
  fc.integer({ min: -5, max: 2_000 }),
  fc.constantFrom(0, -1, 1, 100, 101, 1_000, 1_001, 2 ** 31 - 1, -(2 ** 31)),
  fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
);

/** An int64 field's value, around 0, 2^53 and the int64 limits. */
export const int64Value = fc.oneof(
  fc.bigInt({ min: -5n, max: 5n }),
  fc.constantFrom(2n ** 53n - 1n, 2n ** 53n, -(2n ** 63n), 2n ** 63n - 1n),
  fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
);

/** Receipt handles: valid ones of the queue, of another queue, garbled, forged and random. */
export function handleBytes(fixture: RequestFixture, damage: Damage): fc.Arbitrary<Uint8Array> {
  const utf8 = (text: string): Uint8Array => Buffer.from(text, "utf8");
  const options: fc.Arbitrary<Uint8Array>[] = [textBytes(damage)];
  if (fixture.handles.length > 0) {
    const handle = fc.constantFrom(...fixture.handles);
    options.push(
      handle.map(utf8),
      // One character changed: the tag no longer matches (or the base64url is not canonical).
      fc.tuple(handle, fc.nat(), fc.constantFrom("A", "B", "_", "-", "0", "=", "+", "/")).map(([h, at, c]) => {
        const i = at % h.length;
        return utf8(h.slice(0, i) + c + h.slice(i + 1));
      }),
      handle.map((h) => utf8(h.slice(0, -2))),
      handle.map((h) => utf8(`${h}AA`)),
      // The same handle with its tag bytes zeroed: a forgery of the right length.
      handle.map((h) => {
        const bytes = Buffer.from(h, "base64url");
        return utf8(Buffer.concat([bytes.subarray(0, 25), Buffer.alloc(bytes.length - 25)]).toString("base64url"));
      }),
    );
  }
  if (fixture.otherQueueHandles.length > 0) options.push(fc.constantFrom(...fixture.otherQueueHandles).map(utf8));
  return fc.oneof(...options);
}

/** A list of handles for a batch: empty, normal, with duplicates, or oversized. */
export function handleList(fixture: RequestFixture, damage: Damage): fc.Arbitrary<Uint8Array[]> {
  const handle = handleBytes(fixture, damage);
  return fc.oneof(
    fc.array(handle, { maxLength: 5 }),
    fc.tuple(handle, fc.integer({ min: 2, max: 5 })).map(([h, n]) => Array.from({ length: n }, () => h)),
    fc.integer({ min: 100, max: 101 }).chain((n) => fc.array(handle, { minLength: n, maxLength: n })),
    fc.integer({ min: 102, max: 2_000 }).map((n) => Array.from({ length: n }, () => Buffer.from("x"))),
  );
}

/** Attribute map entries (field `field`): none, a few, many, huge keys or values, empty or non-UTF-8 keys. */
export function attributeEntries(field: number, damage: Damage): fc.Arbitrary<Uint8Array[]> {
  const entry = fc.tuple(textBytes(damage), textBytes(damage)).map(([k, v]) => wire.mapEntry(field, k, v));
  return fc.oneof(
    fc.array(entry, { maxLength: 4 }),
    fc
      .integer({ min: 100, max: 5_000 })
      .map((n) => Array.from({ length: n }, (_, i) => wire.mapEntry(field, `k${i}`, "v"))),
    fc.integer({ min: 255, max: 300 }).map((n) => [wire.mapEntry(field, "k".repeat(n), "v")]),
    fc.constant<Uint8Array[]>([wire.mapEntry(field, "", "v")]),
    fc.constant<Uint8Array[]>([wire.mapEntry(field, "k", "v".repeat(2_000_000))]),
  );
}

/**
 * A FIFO id field (message_group_id, deduplication_id): unset mostly, else
 * a usual id, or any text (spaces, non-ASCII, past 128 characters), which
 * the broker must refuse naming the field.
 */
export function fifoIdField(field: number, damage: Damage): fc.Arbitrary<Uint8Array> {
  return fc.oneof(
    { arbitrary: fc.constant(wire.concat()), weight: 3 },
    {
      arbitrary: textBytes(damage, ["g", "h", "order-1", "x".repeat(128), "x".repeat(129)]).map((id) =>
        wire.stringField(field, id),
      ),
      weight: 2,
    },
  );
}

/** A trace_header field, mostly absent; else a header, one at the 512-character bound or past it, or one the broker refuses. */
export function traceHeaderField(field: number, damage: Damage): fc.Arbitrary<Uint8Array> {
  return fc.oneof(
    { arbitrary: fc.constant(wire.concat()), weight: 3 },
    {
      arbitrary: textBytes(damage, [
        "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1",
        "x".repeat(512),
        "x".repeat(513),
        "tab\there",
        "ünïcode",
      ]).map((header) => wire.stringField(field, header)),
      weight: 2,
    },
  );
}

/** A QueueConfig body with random limits, durations, policies and FIFO settings. */
export function queueConfigBody(known: readonly string[], damage: Damage): fc.Arbitrary<Uint8Array> {
  const optionalDuration = (field: number): fc.Arbitrary<Uint8Array> =>
    durationBody(damage).map((body) => (body === undefined ? wire.concat() : wire.messageField(field, body)));
  const optionalInt = (field: number): fc.Arbitrary<Uint8Array> =>
    fc
      .option(int32Value, { nil: undefined })
      .map((v) => (v === undefined ? wire.concat() : wire.varintField(field, v)));
  const redrive = fc.option(
    fc
      .tuple(textBytes(damage, known), int32Value)
      .map(([dlq, max]) => wire.messageField(8, wire.stringField(1, dlq), wire.varintField(2, max))),
    { nil: wire.concat() },
  );
  const retry = fc.option(
    fc.tuple(optionalDuration(1), optionalDuration(2)).map(([min, max]) => wire.messageField(9, min, max)),
    { nil: wire.concat() },
  );
  return fc
    .tuple(
      optionalDuration(1),
      optionalDuration(2),
      optionalDuration(3),
      optionalInt(4),
      optionalDuration(5),
      optionalInt(6),
      optionalDuration(7),
      redrive,
      retry,
      fifoSettings,
      sqsSettings(damage),
    )
    .map((parts) => wire.concat(...parts));
}

// QueueConfig's fifo, content_based_deduplication and deduplication_scope:
// none mostly; else any of them, the scope possibly a number DeduplicationScope lacks.
const fifoSettings: fc.Arbitrary<Uint8Array> = fc.oneof(
  { arbitrary: fc.constant(wire.concat()), weight: 3 },
  {
    arbitrary: fc
      .tuple(fc.boolean(), fc.boolean(), fc.oneof(fc.constantFrom(0, 1, 2), int32Value))
      .map(([fifo, contentBased, scope]) =>
        wire.concat(wire.varintField(11, fifo), wire.varintField(12, contentBased), wire.varintField(13, scope)),
      ),
    weight: 1,
  },
);

// QueueConfig's access_policy and sqs_encryption: none mostly; else a policy
// that is JSON, near the 8192-byte limit or any text, and encryption settings
// with any key, reuse period and flag (a key beside the flag is refused).
function sqsSettings(damage: Damage): fc.Arbitrary<Uint8Array> {
  const utf8 = (text: string): Uint8Array => Buffer.from(text, "utf8");
  const policy = fc.oneof(
    fc
      .constantFrom(
        '{"Statement":[]}',
        "{}",
        "[]",
        "null",
        `{"Id":"${"x".repeat(8182)}"}`,
        `{"Id":"${"x".repeat(8183)}"}`,
      )
      .map(utf8),
    textBytes(damage),
  );
  const encryption = fc
    .tuple(textBytes(damage), durationBody(damage), fc.boolean())
    .map(([key, reuse, managed]) =>
      wire.messageField(
        15,
        wire.stringField(1, key),
        reuse === undefined ? wire.concat() : wire.messageField(2, reuse),
        wire.varintField(3, managed),
      ),
    );
  return fc.oneof(
    { arbitrary: fc.constant(wire.concat()), weight: 3 },
    {
      arbitrary: fc
        .tuple(fc.option(policy, { nil: undefined }), fc.option(encryption, { nil: undefined }))
        .map(([text, settings]) =>
          wire.concat(text === undefined ? wire.concat() : wire.stringField(14, text), settings ?? wire.concat()),
        ),
      weight: 1,
    },
  );
}

/** Bytes appended to a request: nothing or an unknown field (skipped), and with "bytes" damage, bytes that break the encoding. */
export function trailingBytes(damage: Damage): fc.Arbitrary<Uint8Array> {
  const harmless = fc.oneof(
    { arbitrary: fc.constant(wire.concat()), weight: 6 },
    { arbitrary: fc.constant(wire.varintField(99, 7)), weight: 1 },
  );
  return damage === "fields"
    ? harmless
    : fc.oneof({ arbitrary: harmless, weight: 1 }, { arbitrary: brokenBytes, weight: 2 });
}

const brokenBytes: fc.Arbitrary<Uint8Array> = fc.oneof(
  { arbitrary: fc.uint8Array({ maxLength: 16 }), weight: 2 },
  // A field key whose varint never ends.
  { arbitrary: fc.constant(Uint8Array.from([0x80, 0x80, 0x80])), weight: 1 },
  // A length-delimited field that promises more bytes than the message has.
  { arbitrary: fc.constant(wire.concat(wire.key(1, 2), wire.varint(1_000))), weight: 1 },
  // Wire types 3, 4 (deprecated groups) and 7 (never defined).
  { arbitrary: fc.constantFrom(Uint8Array.from([0x0b]), Uint8Array.from([0x0c]), Uint8Array.from([0x0f])), weight: 1 },
);
