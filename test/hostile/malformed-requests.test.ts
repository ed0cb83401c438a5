// Requests whose bytes are not a valid message, or whose gRPC framing is
// wrong, against a real broker: each is INVALID_ARGUMENT with the field
// violation "request" (never INTERNAL from a failed deserializer, never
// UNIMPLEMENTED for a method that exists), and changes nothing stored.
// Out-of-range Durations are covered here case by case, and at random in
// rpc-properties.test.ts.
import type http2 from "node:http2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGrpcHarness, type GrpcHarness } from "../support/grpc-harness.js";
import { openSubscribeStream } from "../support/subscribe-stream.js";
import { brokerSnapshot } from "./broker-snapshot.js";
import { createRawRpc, type RawRpc } from "./raw-rpc.js";
import { connect, grpcFrame, rawCall } from "./raw-wire.js";
import * as wire from "./wire-encoder.js";

const notUtf8 = Buffer.from([0x61, 0xc3, 0x28]);
const q = "malformed";

let harness: GrpcHarness;
let raw: RawRpc;
let session: http2.ClientHttp2Session;

beforeAll(async () => {
  harness = await startGrpcHarness({ durability: "os" });
  raw = createRawRpc(harness.server.address);
  session = await connect(harness.server.address);
  await harness.rpc.createQueue({ name: q });
  await harness.rpc.send({ queue: q, body: Buffer.from("kept"), attributes: { a: "b" } });
});

afterAll(async () => {
  session.close();
  raw.close();
  await harness.stop();
});

/** Sends raw request bytes and expects INVALID_ARGUMENT naming "request", with `description` in the message and nothing stored changed. */
async function expectMalformed(method: string, request: Buffer, description: string): Promise<void> {
  const before = await brokerSnapshot(harness.server);
  const outcome = await raw.unary(method, request);
  expect(outcome.ok, `${method} accepted a malformed request`).toBe(false);
  if (outcome.ok) return;
  expect({
    code: outcome.error.code,
    reason: outcome.error.reason,
    fields: outcome.error.violations.map((v) => v.field),
  }).toEqual({
    code: 3,
    reason: "INVALID_ARGUMENT",
    fields: ["request"],
  });
  expect(outcome.error.message).toContain(description);
  expect(await brokerSnapshot(harness.server)).toBe(before);
}

// One request per RPC, each with one string field (nested ones included) that is not UTF-8.
const invalidUtf8Requests: [string, string, Buffer][] = [
  ["CreateQueue", "name", wire.stringField(1, notUtf8)],
  [
    "CreateQueue",
    "config.redrive_policy.dead_letter_queue",
    wire.concat(wire.stringField(1, "x"), wire.messageField(2, wire.messageField(8, wire.stringField(1, notUtf8)))),
  ],
  ["GetQueue", "name", wire.stringField(1, notUtf8)],
  ["ListQueues", "prefix", wire.stringField(1, notUtf8)],
  ["ListQueues", "page_token", wire.stringField(3, notUtf8)],
  ["UpdateQueue", "name", wire.stringField(1, notUtf8)],
  ["DeleteQueue", "name", wire.stringField(1, notUtf8)],
  ["PurgeQueue", "name", wire.stringField(1, notUtf8)],
  ["Send", "queue", wire.concat(wire.stringField(1, notUtf8), wire.bytesField(2, Buffer.from("b")))],
  ["Send", "an attribute key", wire.concat(wire.stringField(1, q), wire.mapEntry(3, notUtf8, "v"))],
  ["Send", "an attribute value", wire.concat(wire.stringField(1, q), wire.mapEntry(3, "k", notUtf8))],
  [
    "SendBatch",
    "entries[0].attributes",
    wire.concat(wire.stringField(1, q), wire.messageField(2, wire.mapEntry(2, notUtf8, "v"))),
  ],
  ["Receive", "queue", wire.stringField(1, notUtf8)],
  ["Delete", "receipt_handle", wire.concat(wire.stringField(1, q), wire.stringField(2, notUtf8))],
  [
    "DeleteBatch",
    "receipt_handles[1]",
    wire.concat(wire.stringField(1, q), wire.stringField(2, "x"), wire.stringField(2, notUtf8)),
  ],
  ["ChangeVisibility", "receipt_handle", wire.concat(wire.stringField(1, q), wire.stringField(2, notUtf8))],
  ["ChangeVisibilityBatch", "queue", wire.concat(wire.stringField(1, notUtf8), wire.stringField(2, "x"))],
  ["RedriveMessages", "destination_queue", wire.concat(wire.stringField(1, q), wire.stringField(2, notUtf8))],
];

describe("a string field that is not UTF-8 (proto3 requires valid UTF-8)", () => {
  it.each(invalidUtf8Requests)("%s with a non-UTF-8 %s: INVALID_ARGUMENT, request", async (method, _field, request) => {
    await expectMalformed(method, request, "request: has a string field that is not valid UTF-8");
  });

  it("Heartbeat with a non-UTF-8 receipt handle ends the stream with INVALID_ARGUMENT, request, after answering the requests before it", async () => {
    const good = wire.stringField(1, q);
    const bad = wire.concat(wire.stringField(1, q), wire.messageField(2, wire.stringField(1, notUtf8)));
    const { responses, error } = await raw.heartbeat([good, bad]);
    expect(responses).toHaveLength(1);
    expect({ code: error?.code, reason: error?.reason, fields: error?.violations.map((v) => v.field) }).toEqual({
      code: 3,
      reason: "INVALID_ARGUMENT",
      fields: ["request"],
    });
    expect(error?.message).toContain("not valid UTF-8");
  });

  it("Subscribe with a non-UTF-8 queue in its first request: INVALID_ARGUMENT, request, and nothing leased", async () => {
    const before = await brokerSnapshot(harness.server);
    const stream = openSubscribeStream(harness.server.address, undefined, { deadlineMs: 10_000 });
    try {
      stream.sendBytes(wire.stringField(1, notUtf8));
      const error = await stream.closed;
      expect({ code: error?.code, reason: error?.reason, fields: error?.violations.map((v) => v.field) }).toEqual({
        code: 3,
        reason: "INVALID_ARGUMENT",
        fields: ["request"],
      });
      expect(error?.message).toContain("not valid UTF-8");
    } finally {
      stream.close();
    }
    expect(await brokerSnapshot(harness.server)).toBe(before);
  });

  it.each([
    ["an ack", "a", wire.stringField(5, notUtf8)],
    ["a renewal", "r", wire.messageField(6, wire.stringField(1, notUtf8))],
  ])(
    "Subscribe with a non-UTF-8 receipt handle in %s ends the stream with INVALID_ARGUMENT, request, after answering the requests before it",
    async (_label, tag, bad) => {
      // A queue of its own, whose message the answered request acks: an answer that waits for a durable write.
      const queue = `${q}-subscribe-${tag}`;
      await harness.rpc.createQueue({ name: queue });
      await harness.rpc.send({ queue, body: Buffer.from("acked") });
      const [leased] = (await harness.rpc.receive({ queue })).messages;
      const stream = openSubscribeStream(harness.server.address, undefined, { deadlineMs: 10_000 });
      try {
        // Credit 0: the stream leases nothing, so only its answers come.
        stream.sendBytes(wire.concat(wire.stringField(1, queue), wire.messageField(4, wire.varintField(1, 0))));
        stream.sendBytes(wire.stringField(5, leased!.receiptHandle));
        stream.sendBytes(bad);
        const error = await stream.closed;
        expect({ code: error?.code, reason: error?.reason, fields: error?.violations.map((v) => v.field) }).toEqual({
          code: 3,
          reason: "INVALID_ARGUMENT",
          fields: ["request"],
        });
        expect(stream.buffered.map((response) => response.acks.map((ack) => ack.reason))).toEqual([[""]]);
      } finally {
        stream.close();
      }
    },
  );
});

describe("bytes that are not a protobuf encoding", () => {
  const cases: [string, Buffer][] = [
    ["a truncated varint", Buffer.from([0x10, 0xff])],
    ["wire type 7", Buffer.from([0x0f])],
    ["an end-group tag without a start", Buffer.from([0x0c])],
    ["a length past the end of the message", wire.concat(wire.key(1, 2), wire.varint(50), Buffer.from("short"))],
    ["a string field sent as a varint", wire.varintField(1, 5)],
    ["field number 0", Buffer.from([0x00, 0x01])],
  ];
  it.each(cases)("GetQueue with %s: INVALID_ARGUMENT naming the request type", async (_label, request) => {
    await expectMalformed(
      "GetQueue",
      request,
      "request: is not a valid protobuf encoding of holdshelf.v1.GetQueueRequest",
    );
  });

  it("a ListQueues whose page_size varint runs past 10 bytes", async () => {
    // protobuf-es skips an unknown field's overlong varint, but refuses one in a known field.
    const request = Buffer.concat([Buffer.from([0x10]), Buffer.alloc(11, 0xff), Buffer.from([0x01])]);
    await expectMalformed("ListQueues", request, "holdshelf.v1.ListQueuesRequest");
  });

  it("a Send whose Duration does not decode", async () => {
    const request = wire.concat(
      wire.stringField(1, q),
      wire.messageField(4, wire.key(1, 2), wire.varint(1), Buffer.from([1])),
    );
    await expectMalformed("Send", request, "holdshelf.v1.SendRequest");
  });

  it("unknown fields are skipped, as proto3 requires: the request is served", async () => {
    const outcome = await raw.unary(
      "GetQueue",
      wire.concat(wire.stringField(1, q), wire.varintField(99, 1), wire.bytesField(100, Buffer.from("x"))),
    );
    expect(outcome.ok).toBe(true);
  });
});

describe("gRPC framing of a unary request", () => {
  const unaryMethods = [
    "CreateQueue",
    "GetQueue",
    "ListQueues",
    "UpdateQueue",
    "DeleteQueue",
    "PurgeQueue",
    "Send",
    "SendBatch",
    "Receive",
    "Delete",
    "DeleteBatch",
    "ChangeVisibility",
    "ChangeVisibilityBatch",
    "RedriveMessages",
  ];
  const get = wire.stringField(1, q);
  const framings: [string, Buffer][] = [
    ["no message", Buffer.alloc(0)],
    ["two messages", Buffer.concat([grpcFrame(get), grpcFrame(get)])],
    ["a length prefix promising more bytes than come before END_STREAM", grpcFrame(get, { length: get.length + 100 })],
    ["half a length prefix", Buffer.from([0, 0, 0])],
  ];

  it.each(framings)(
    "%s: INVALID_ARGUMENT with ErrorInfo and the violation request (grpc-js says UNIMPLEMENTED)",
    async (_label, body) => {
      const before = await brokerSnapshot(harness.server);
      const status = await rawCall(session, "GetQueue", body);
      expect(status).toMatchObject({ code: 3, reason: "INVALID_ARGUMENT", fields: ["request"] });
      expect(status.message).toContain("exactly one complete message");
      expect(await brokerSnapshot(harness.server)).toBe(before);
    },
  );

  it.each(unaryMethods)("%s without a message: INVALID_ARGUMENT, request", async (method) => {
    expect(await rawCall(session, method, Buffer.alloc(0))).toMatchObject({
      code: 3,
      reason: "INVALID_ARGUMENT",
      fields: ["request"],
    });
  });

  it("an unknown method is still UNIMPLEMENTED", async () => {
    expect(await rawCall(session, "NoSuchMethod", grpcFrame(get))).toMatchObject({ code: 12, reason: "" });
  });
});

describe("Durations out of range (each case, by field)", () => {
  // seconds: int64 limits; past what fits a millisecond count exactly
  // (2^53 / 1000); past a Node timer (2^31 - 1 ms); and nanos out of range or
  // of the wrong sign. Every accepted duration is at most 14 days (retention),
  // so no accepted value reaches a timer's 2^31 - 1 ms limit either.
  const durations: [string, bigint, number, string][] = [
    ["int64 max seconds", 2n ** 63n - 1n, 0, "is too long"],
    ["int64 min seconds", -(2n ** 63n), 0, "must not be negative"],
    ["seconds past 2^53 ms", 9_007_199_254_741n, 0, "is too long"],
    ["one second", -1n, 0, "must not be negative"],
    ["nanos of 1e9", 0n, 1_000_000_000, "is not a valid duration"],
    ["negative nanos with positive seconds", 5n, -1, "is not a valid duration"],
    ["int32 min nanos", 0n, -(2 ** 31), "is not a valid duration"],
    ["2^31 ms", 2_147_483n, 648_000_000, "must be between"],
  ];
  const fields: [string, string, (d: Buffer) => Buffer][] = [
    ["Receive", "visibility_timeout", (d) => wire.concat(wire.stringField(1, q), wire.messageField(3, d))],
    ["Receive", "wait_time", (d) => wire.concat(wire.stringField(1, q), wire.messageField(4, d))],
    ["Send", "delay", (d) => wire.concat(wire.stringField(1, q), wire.messageField(4, d))],
    [
      "SendBatch",
      "entries[0].delay",
      (d) => wire.concat(wire.stringField(1, q), wire.messageField(2, wire.messageField(3, d))),
    ],
    [
      "ChangeVisibilityBatch",
      "visibility_timeout",
      (d) => wire.concat(wire.stringField(1, q), wire.stringField(2, "x"), wire.messageField(3, d)),
    ],
    [
      "CreateQueue",
      "config.retention",
      (d) => wire.concat(wire.stringField(1, "made"), wire.messageField(2, wire.messageField(3, d))),
    ],
    [
      "UpdateQueue",
      "config.retry_policy.min_backoff",
      (d) => wire.concat(wire.stringField(1, q), wire.messageField(2, wire.messageField(9, wire.messageField(1, d)))),
    ],
  ];
  const cases = fields.flatMap(([method, field, build]) =>
    durations.map(
      ([label, seconds, nanos, why]) => [method, field, label, build(wire.duration(seconds, nanos)), why] as const,
    ),
  );

  it.each(cases)("%s %s of %s: INVALID_ARGUMENT naming the field", async (method, field, _label, request, why) => {
    const before = await brokerSnapshot(harness.server);
    const outcome = await raw.unary(method, request);
    if (outcome.ok) throw new Error(`${method} accepted ${field}`);
    expect({ code: outcome.error.code, reason: outcome.error.reason }).toEqual({ code: 3, reason: "INVALID_ARGUMENT" });
    expect(outcome.error.violations.map((v) => v.field)).toEqual([field]);
    // "is too long" and "must be between" both say the value is out of bounds.
    expect(outcome.error.message).toMatch(why === "must be between" ? /must be between|is too long/ : why);
    expect(await brokerSnapshot(harness.server)).toBe(before);
  });
});
