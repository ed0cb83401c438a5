import type { HeartbeatResponse } from "../../gen/holdshelf/v1/queue_service_pb.js";
import type { LeaseState } from "../broker/types.js";
import { PreEncoded } from "./pre-encoded.js";
import { delimitedSize, timestampSize, WireType, WireWriter } from "./wire-writer.js";

// Field numbers of HeartbeatResponse and LeaseState (proto/holdshelf/v1/queue_service.proto).
// test/grpc/heartbeat-response-encoding.test.ts compares every byte with protobuf-es's.
const heartbeatResponse = { leases: 1 } as const;
const leaseState = { receiptHandle: 1, held: 2, leaseDeadline: 3, reason: 4 } as const;

/**
 * A HeartbeatResponse written straight from the lease states into one
 * buffer, byte for byte what protobuf-es would write: as for Receive
 * (receive-response-encoding.ts), its reflective encoder with a message
 * object per state was most of what a renewal's answer cost the broker.
 */
export function encodeHeartbeatResponse(states: readonly LeaseState[]): PreEncoded<HeartbeatResponse> {
  const measured = states.map(measure);
  let size = 0;
  for (const state of measured) size += 1 + delimitedSize(state.size);
  const writer = new WireWriter(size);
  states.forEach((state, index) => {
    const { size: stateSize, handleBytes, reasonBytes } = measured[index]!;
    writer.tag(heartbeatResponse.leases, WireType.lengthDelimited);
    writer.varint(stateSize);
    if (handleBytes > 0) {
      writer.tag(leaseState.receiptHandle, WireType.lengthDelimited);
      writer.string(state.receiptHandle, handleBytes);
    }
    if (state.held) {
      writer.tag(leaseState.held, WireType.varint);
      writer.bool(true);
    }
    if (state.leaseDeadline !== undefined) writer.timestamp(leaseState.leaseDeadline, state.leaseDeadline);
    if (reasonBytes > 0) {
      writer.tag(leaseState.reason, WireType.lengthDelimited);
      writer.string(state.reason!, reasonBytes);
    }
  });
  return new PreEncoded(writer.finish());
}

function measure(state: LeaseState): { size: number; handleBytes: number; reasonBytes: number } {
  const handleBytes = Buffer.byteLength(state.receiptHandle, "utf8");
  const reasonBytes = Buffer.byteLength(state.reason ?? "", "utf8");
  let size = 0;
  if (handleBytes > 0) size += 1 + delimitedSize(handleBytes);
  if (state.held) size += 2;
  if (state.leaseDeadline !== undefined) size += 1 + delimitedSize(timestampSize(state.leaseDeadline));
  if (reasonBytes > 0) size += 1 + delimitedSize(reasonBytes);
  return { size, handleBytes, reasonBytes };
}
