// The hand-written HeartbeatResponse encoder (src/grpc/heartbeat-response-encoding.ts)
// against protobuf-es's own encoding of the same response, byte for byte.
// Reproduce a failure with HOLDSHELF_FC_SEED=<seed printed by fast-check>.
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { HeartbeatResponseSchema, LeaseStateSchema } from "../../gen/holdshelf/v1/queue_service_pb.js";
import type { LeaseState } from "../../src/broker/types.js";
import { encodeHeartbeatResponse } from "../../src/grpc/heartbeat-response-encoding.js";
import { reasonCodes } from "../../src/protocol/error-reasons.js";
import { LeaseEnding, type LeaseStateReason } from "../../src/protocol/lease-state-reason.js";

const seed = Number(process.env["HOLDSHELF_FC_SEED"] ?? 20261203);

/** What the server sent before the hand-written encoder. */
function referenceEncoding(states: LeaseState[]): Uint8Array {
  const leases = states.map((state) =>
    create(LeaseStateSchema, {
      receiptHandle: state.receiptHandle,
      held: state.held,
      reason: state.reason ?? "",
      ...(state.leaseDeadline === undefined ? {} : { leaseDeadline: timestampFromMs(state.leaseDeadline) }),
    }),
  );
  return toBinary(HeartbeatResponseSchema, create(HeartbeatResponseSchema, { leases }));
}

const reasons = [...Object.keys(reasonCodes), ...Object.values(LeaseEnding)] as LeaseStateReason[];
const epochMs = fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 999 }), fc.integer({ min: 0, max: 4_000_000_000_000 }));
const state: fc.Arbitrary<LeaseState> = fc.record(
  {
    receiptHandle: fc.oneof(fc.constant(""), fc.base64String({ maxLength: 60 }), fc.string({ maxLength: 30 })),
    held: fc.boolean(),
    leaseDeadline: epochMs,
    reason: fc.constantFrom(...reasons),
  },
  { requiredKeys: ["receiptHandle", "held"] },
);

describe("encodeHeartbeatResponse", () => {
  it("writes exactly the bytes protobuf-es writes for the same response", () => {
    fc.assert(
      fc.property(fc.array(state, { maxLength: 8 }), (states) => {
        const encoded = encodeHeartbeatResponse(states).bytes;
        expect(Buffer.from(encoded).equals(Buffer.from(referenceEncoding(states)))).toBe(true);
      }),
      { numRuns: 300, seed },
    );
  });

  it("encodes states that decode back to what they said", () => {
    const states: LeaseState[] = [
      { receiptHandle: "a", held: true, leaseDeadline: 1_767_225_631_999 },
      { receiptHandle: "b", held: false, reason: "LEASE_EXPIRED" },
    ];
    const decoded = fromBinary(HeartbeatResponseSchema, encodeHeartbeatResponse(states).bytes);
    expect(decoded.leases).toMatchObject([
      { receiptHandle: "a", held: true, leaseDeadline: { seconds: 1_767_225_631n, nanos: 999_000_000 }, reason: "" },
      { receiptHandle: "b", held: false, reason: "LEASE_EXPIRED" },
    ]);
    expect(decoded.leases[1]!.leaseDeadline).toBeUndefined();
  });
});
