// Raw request arbitraries for every unary QueueService RPC, field numbers as
// in proto/holdshelf/v1/queue_service.proto.
import fc from "fast-check";
import {
  attributeEntries,
  durationBody,
  fifoIdField,
  traceHeaderField,
  handleBytes,
  handleList,
  int32Value,
  int64Value,
  queueConfigBody,
  textBytes,
  trailingBytes,
  type Damage,
  type RequestFixture,
} from "./rpc-arbitraries.js";
import * as wire from "./wire-encoder.js";

const none = wire.concat();

function optionalDuration(field: number, body: fc.Arbitrary<Uint8Array | undefined>): fc.Arbitrary<Uint8Array> {
  return body.map((b) => (b === undefined ? none : wire.messageField(field, b)));
}

// Receive's wait_time: valid ones stay short so that a long poll on an empty
// queue cannot outlast the call's deadline; the rest are all invalid.
const waitTimeBody: fc.Arbitrary<Uint8Array | undefined> = fc.oneof(
  fc.constant(undefined),
  fc.integer({ min: 0, max: 300 }).map((ms) => wire.duration(0, ms * 1_000_000)),
  fc.bigInt({ min: -(2n ** 63n), max: -1n }).map((s) => wire.duration(s, 0)),
  fc.bigInt({ min: 21n, max: 2n ** 63n - 1n }).map((s) => wire.duration(s, 0)),
  fc.constantFrom(-1, 1_000_000_000, 2 ** 31 - 1, -(2 ** 31)).map((n) => wire.duration(0, n)),
  fc.constant(wire.duration(20, 1_000_000)),
);

const sendBody = fc.oneof(
  fc.uint8Array({ maxLength: 64 }),
  // At and just over the default max_message_bytes.
  fc.constantFrom(1_048_576, 1_048_577).map((n) => new Uint8Array(n)),
);

/**
 * Every unary RPC's method name with an arbitrary of raw request bytes: four
 * in five keep the encoding sound (so that they reach the broker's checks),
 * one in five breaks it.
 */
export function unaryRequests(fixture: RequestFixture): Record<string, fc.Arbitrary<Buffer>> {
  const sound = requestsWith(fixture, "fields");
  const broken = requestsWith(fixture, "bytes");
  return Object.fromEntries(
    Object.keys(sound).map((method) => [
      method,
      fc.oneof({ arbitrary: sound[method]!, weight: 4 }, { arbitrary: broken[method]!, weight: 1 }),
    ]),
  );
}

function requestsWith(fixture: RequestFixture, damage: Damage): Record<string, fc.Arbitrary<Buffer>> {
  const queue = textBytes(damage, fixture.queues);
  const duration = (field: number): fc.Arbitrary<Uint8Array> => optionalDuration(field, durationBody(damage));
  const message = (...parts: fc.Arbitrary<Uint8Array>[]): fc.Arbitrary<Buffer> =>
    fc.tuple(...parts, trailingBytes(damage)).map((all) => wire.concat(...all));
  const nameOnly = message(queue.map((q) => wire.stringField(1, q)));
  const messageId = fc.oneof(
    textBytes(damage),
    fc.uuid().map((id) => Buffer.from(id)),
  );
  const config = fc.option(
    queueConfigBody(fixture.queues, damage).map((c) => wire.messageField(2, c)),
    { nil: none },
  );
  const handles = (field: number): fc.Arbitrary<Uint8Array> =>
    handleList(fixture, damage).map((list) => wire.concat(...list.map((h) => wire.stringField(field, h))));
  const sendEntry = fc
    .tuple(
      sendBody,
      attributeEntries(2, damage),
      duration(3),
      fifoIdField(5, damage),
      fifoIdField(6, damage),
      traceHeaderField(7, damage),
    )
    .map(([body, attributes, delay, group, deduplicationId, traceHeader]) =>
      wire.messageField(2, wire.bytesField(1, body), ...attributes, delay, group, deduplicationId, traceHeader),
    );
  return {
    CreateQueue: message(
      fc
        .oneof(
          queue,
          fc.nat({ max: 20 }).map((n) => Buffer.from(`made-${n}`)),
        )
        .map((q) => wire.stringField(1, q)),
      config,
    ),
    GetQueue: nameOnly,
    ListQueues: message(
      textBytes(damage, fixture.queues).map((p) => wire.stringField(1, p)),
      int32Value.map((n) => wire.varintField(2, n)),
      fc
        .oneof(
          textBytes(damage, fixture.queues),
          fc.constant(Buffer.from("")),
          // A page token as the service issues them, and one of a name that does not exist.
          fc
            .constantFrom(...fixture.queues, "zzz", "")
            .map((name) => Buffer.from(Buffer.from(`after:${name}`).toString("base64url"))),
        )
        .map((t) => wire.stringField(3, t)),
    ),
    UpdateQueue: message(
      queue.map((q) => wire.stringField(1, q)),
      config,
    ),
    DeleteQueue: nameOnly,
    PurgeQueue: nameOnly,
    Send: message(
      queue.map((q) => wire.stringField(1, q)),
      sendBody.map((b) => wire.bytesField(2, b)),
      attributeEntries(3, damage).map((entries) => wire.concat(...entries)),
      duration(4),
      fifoIdField(6, damage),
      fifoIdField(7, damage),
      traceHeaderField(8, damage),
    ),
    SendBatch: message(
      queue.map((q) => wire.stringField(1, q)),
      fc
        .oneof(
          fc.array(sendEntry, { maxLength: 4 }),
          fc
            .integer({ min: 100, max: 101 })
            .map((n) => Array.from({ length: n }, () => wire.messageField(2, wire.bytesField(1, Buffer.from("b"))))),
          // Each entry within max_message_bytes, the batch over 4 MiB.
          fc.constant(
            Array.from({ length: 17 }, () => wire.messageField(2, wire.bytesField(1, new Uint8Array(250_000)))),
          ),
        )
        .map((entries) => wire.concat(...entries)),
    ),
    Receive: message(
      queue.map((q) => wire.stringField(1, q)),
      int32Value.map((n) => wire.varintField(2, n)),
      duration(3),
      optionalDuration(4, waitTimeBody),
    ),
    Delete: message(
      queue.map((q) => wire.stringField(1, q)),
      handleBytes(fixture, damage).map((h) => wire.stringField(2, h)),
    ),
    DeleteBatch: message(
      queue.map((q) => wire.stringField(1, q)),
      handles(2),
    ),
    ChangeVisibility: message(
      queue.map((q) => wire.stringField(1, q)),
      handleBytes(fixture, damage).map((h) => wire.stringField(2, h)),
      duration(3),
    ),
    ChangeVisibilityBatch: message(
      queue.map((q) => wire.stringField(1, q)),
      handles(2),
      duration(3),
    ),
    RedriveMessages: message(
      queue.map((q) => wire.stringField(1, q)),
      fc.oneof(
        fc.constant(none),
        queue.map((q) => wire.stringField(2, q)),
      ),
      int64Value.map((n) => wire.varintField(3, n)),
      int32Value.map((n) => wire.varintField(4, n)),
    ),
    // A message id: noise, or well formed (naming no message the fixture holds).
    DiscardMessage: message(
      queue.map((q) => wire.stringField(1, q)),
      messageId.map((id) => wire.stringField(2, id)),
    ),
    MoveMessage: message(
      queue.map((q) => wire.stringField(1, q)),
      messageId.map((id) => wire.stringField(2, id)),
      fc.oneof(
        fc.constant(none),
        queue.map((q) => wire.stringField(3, q)),
      ),
    ),
    // A page token: none, noise, or a well-formed cursor of any time and id (which may name no message).
    PeekMessages: message(
      queue.map((q) => wire.stringField(1, q)),
      int32Value.map((n) => wire.varintField(2, n)),
      fc.oneof(
        fc.constant(none),
        fc.string({ maxLength: 40 }).map((token) => wire.stringField(3, token)),
        fc
          .tuple(fc.nat(), fc.uint8Array({ minLength: 16, maxLength: 16 }))
          .map(([at, id]) =>
            wire.stringField(
              3,
              Buffer.from(`peek-after:${at}:${Buffer.from(id).toString("hex")}`).toString("base64url"),
            ),
          ),
      ),
    ),
  };
}

/** Raw HeartbeatRequest bytes: queue, renewals (handles, durations, checkpoints up to past 64 KiB), release flag; one in five broken. */
export function heartbeatRequest(fixture: RequestFixture): fc.Arbitrary<Buffer> {
  return fc.oneof(
    { arbitrary: heartbeatRequestWith(fixture, "fields"), weight: 4 },
    { arbitrary: heartbeatRequestWith(fixture, "bytes"), weight: 1 },
  );
}

function heartbeatRequestWith(fixture: RequestFixture, damage: Damage): fc.Arbitrary<Buffer> {
  const duration = (field: number): fc.Arbitrary<Uint8Array> => optionalDuration(field, durationBody(damage));
  const checkpoint = fc.option(
    fc.oneof(
      fc.uint8Array({ maxLength: 32 }),
      fc.constantFrom(65_536, 65_537).map((n) => new Uint8Array(n)),
    ),
    { nil: undefined },
  );
  const renewal = fc
    .tuple(handleBytes(fixture, damage), duration(2), checkpoint)
    .map(([h, d, c]) =>
      wire.messageField(2, wire.stringField(1, h), d, c === undefined ? none : wire.bytesField(3, c)),
    );
  const renewals = fc.oneof(
    fc.array(renewal, { maxLength: 4 }),
    fc.constant(Array.from({ length: 1_001 }, () => wire.messageField(2, wire.stringField(1, "x")))),
  );
  return fc
    .tuple(textBytes(damage, fixture.queues), renewals, fc.boolean(), trailingBytes(damage))
    .map(([q, r, release, trailing]) =>
      wire.concat(wire.stringField(1, q), ...r, wire.varintField(3, release), trailing),
    );
}
