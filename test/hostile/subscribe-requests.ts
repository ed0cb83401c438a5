// Raw SubscribeRequest arbitraries and the scripts of a Subscribe stream,
// field numbers as in proto/holdshelf/v1/queue_service.proto.
import fc from "fast-check";
import {
  durationBody,
  handleBytes,
  int32Value,
  int64Value,
  textBytes,
  trailingBytes,
  type Damage,
  type RequestFixture,
} from "./rpc-arbitraries.js";
import * as wire from "./wire-encoder.js";

const none = wire.concat();

/**
 * One step of a Subscribe stream's script: a request of arbitrary bytes, or
 * one built from what the stream was delivered so far (whose handles no
 * arbitrary can know): an ack of every delivery (each handle twice when
 * `twice`), or a renewal of each with the given duration, checkpoint and
 * failed fields; or a wait for a first delivery (up to 200 ms), so that
 * the half-close does not always come before the stream got anything.
 */
export type SubscribeStep =
  | { readonly kind: "request"; readonly bytes: Buffer }
  | { readonly kind: "wait" }
  | { readonly kind: "ack-delivered"; readonly twice: boolean }
  | {
      readonly kind: "renew-delivered";
      readonly duration: Uint8Array;
      readonly checkpoint: Uint8Array | undefined;
      readonly failed: boolean;
    };

/**
 * A stream's script: a first request, then up to four more steps. Half the requests are sound (their
 * stream-wide fields in range; acks and renewals still of any handle, renewals of any duration), one in six
 * has broken bytes.
 */
export function subscribeScript(fixture: RequestFixture): fc.Arbitrary<SubscribeStep[]> {
  // Sound requests keep the stream going (and so reach its later steps); the rest may end it.
  const request = (first: boolean): fc.Arbitrary<SubscribeStep> =>
    fc
      .oneof(
        { arbitrary: subscribeRequestWith(fixture, "sound", first), weight: 3 },
        { arbitrary: subscribeRequestWith(fixture, "fields", first), weight: 2 },
        { arbitrary: subscribeRequestWith(fixture, "bytes", first), weight: 1 },
      )
      .map((bytes) => ({ kind: "request", bytes }));
  const fromDeliveries: fc.Arbitrary<SubscribeStep> = fc.oneof(
    fc.constant({ kind: "wait" as const }),
    fc.boolean().map((twice) => ({ kind: "ack-delivered" as const, twice })),
    fc
      .tuple(duration(2, "fields"), checkpoint, fc.boolean())
      .map(([d, c, failed]) => ({ kind: "renew-delivered" as const, duration: d, checkpoint: c, failed })),
  );
  const later = fc.oneof({ arbitrary: request(false), weight: 3 }, { arbitrary: fromDeliveries, weight: 2 });
  return fc.tuple(request(true), fc.array(later, { maxLength: 4 })).map(([first, rest]) => [first, ...rest]);
}

/** One renewal of `handle` as a SubscribeRequest's leases field. */
export function renewalField(handle: string, step: Extract<SubscribeStep, { kind: "renew-delivered" }>): Buffer {
  return wire.messageField(
    6,
    wire.stringField(1, handle),
    step.duration,
    step.checkpoint === undefined ? none : wire.bytesField(3, step.checkpoint),
    wire.varintField(4, step.failed),
  );
}

function duration(field: number, damage: Damage): fc.Arbitrary<Uint8Array> {
  return durationBody(damage).map((body) => (body === undefined ? none : wire.messageField(field, body)));
}

// Checkpoints: none, small, and at and past the 64 KiB limit.
const checkpoint = fc.option(
  fc.oneof(
    fc.uint8Array({ maxLength: 32 }),
    fc.constantFrom(65_536, 65_537).map((n) => new Uint8Array(n)),
  ),
  { nil: undefined },
);

/** Flow control: unset, small credits, 0, and unless sound, out-of-range values. */
function flowControl(first: boolean, sound: boolean): fc.Arbitrary<Uint8Array> {
  const messages = sound
    ? fc.integer({ min: 0, max: 5 })
    : fc.oneof(
        { arbitrary: fc.integer({ min: 0, max: 5 }), weight: 3 },
        { arbitrary: fc.constantFrom(10_000, 10_001), weight: 1 },
        { arbitrary: int32Value, weight: 1 },
      );
  const bytes = sound
    ? fc.oneof(fc.constant(0n), fc.bigInt({ min: 1n, max: 2_000n }))
    : fc.oneof(
        { arbitrary: fc.constant(0n), weight: 3 },
        { arbitrary: fc.bigInt({ min: 1n, max: 2_000n }), weight: 1 },
        { arbitrary: int64Value, weight: 1 },
      );
  const set = fc
    .tuple(messages, bytes)
    .map(([m, b]) => wire.messageField(4, wire.varintField(1, m), wire.varintField(2, b)));
  return fc.oneof({ arbitrary: fc.constant(none), weight: first ? 2 : 3 }, { arbitrary: set, weight: 2 });
}

/** How broken a request may be: Damage, or "sound" (see subscribeScript). */
type Soundness = Damage | "sound";

function subscribeRequestWith(fixture: RequestFixture, soundness: Soundness, first: boolean): fc.Arbitrary<Buffer> {
  const sound = soundness === "sound";
  const damage: Damage = sound ? "fields" : soundness;
  const empty = fc.constant(Buffer.from(""));
  // A later request leaves the queue empty, mostly; else it names the stream's queue, another, or anything.
  const queue = sound
    ? first
      ? fc.constantFrom(...fixture.queues).map((name) => Buffer.from(name))
      : empty
    : first
      ? textBytes(damage, fixture.queues)
      : fc.oneof({ arbitrary: empty, weight: 6 }, { arbitrary: textBytes(damage, fixture.queues), weight: 1 });
  const firstOnly = (part: fc.Arbitrary<Uint8Array>): fc.Arbitrary<Uint8Array> =>
    first ? part : fc.oneof({ arbitrary: fc.constant(none), weight: 4 }, { arbitrary: part, weight: 1 });
  const visibility = sound
    ? fc.option(
        fc
          .integer({ min: 1, max: 60_000 })
          .map((ms) => wire.messageField(2, wire.duration(Math.floor(ms / 1000), (ms % 1000) * 1_000_000))),
        { nil: none },
      )
    : duration(2, damage);
  const handle = handleBytes(fixture, damage);
  const oversized = (part: fc.Arbitrary<Uint8Array[]>, many: Uint8Array[]): fc.Arbitrary<Uint8Array[]> =>
    sound ? part : fc.oneof({ arbitrary: part, weight: 6 }, { arbitrary: fc.constant(many), weight: 1 });
  const acks = oversized(
    fc.array(handle, { maxLength: 4 }),
    Array.from({ length: 1_001 }, () => Buffer.from("x")),
  );
  const renewal = fc
    .tuple(handle, duration(2, damage), checkpoint, fc.boolean())
    .map(([h, d, c, failed]) =>
      wire.messageField(
        6,
        wire.stringField(1, h),
        d,
        c === undefined ? none : wire.bytesField(3, c),
        wire.varintField(4, failed),
      ),
    );
  const renewals = oversized(
    fc.array(renewal, { maxLength: 3 }),
    Array.from({ length: 1_001 }, () => wire.messageField(6, wire.stringField(1, "x"))),
  );
  return fc
    .tuple(
      queue,
      firstOnly(visibility),
      firstOnly(fc.boolean().map((release) => wire.varintField(3, release))),
      flowControl(first, sound),
      acks,
      renewals,
      sound ? fc.constant(none) : trailingBytes(damage),
    )
    .map(([q, visibility, release, flow, a, r, trailing]) =>
      wire.concat(
        q.length === 0 ? none : wire.stringField(1, q),
        visibility,
        release,
        flow,
        ...a.map((h) => wire.stringField(5, h)),
        ...r,
        trailing,
      ),
    );
}
