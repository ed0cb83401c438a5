import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import {
  LeaseStateSchema,
  type LeaseRenewal as WireLeaseRenewal,
  type LeaseState as WireLeaseState,
} from "../../gen/holdshelf/v1/queue_service_pb.js";
import type { LeaseRenewal, LeaseState } from "../broker/types.js";
import { HoldshelfError } from "../errors/holdshelf-error.js";
import { durationToMs } from "./wire-convert.js";

/**
 * Applies a request's renewals (Heartbeat's or Subscribe's): a renewal whose
 * duration cannot be read fails alone, with its state saying INVALID_ARGUMENT;
 * the rest go to `renew`, and the states come back merged in request order.
 */
export async function renewFromWire(
  leases: readonly WireLeaseRenewal[],
  renew: (renewals: LeaseRenewal[]) => Promise<LeaseState[]>,
): Promise<WireLeaseState[]> {
  const states: (LeaseState | undefined)[] = [];
  const renewals: LeaseRenewal[] = [];
  leases.forEach((lease, index) => {
    try {
      renewals.push({
        receiptHandle: lease.receiptHandle,
        visibilityTimeoutMs: durationToMs(lease.visibilityTimeout, `leases[${index}].visibility_timeout`),
        checkpoint: lease.checkpoint,
        failed: lease.failed,
      });
      states.push(undefined);
    } catch (error) {
      if (!(error instanceof HoldshelfError)) throw error;
      states.push({ receiptHandle: lease.receiptHandle, held: false, reason: error.reason });
    }
  });
  const renewed = await renew(renewals);
  let next = 0;
  return states.map((state) => leaseStateToWire(state ?? renewed[next++]!));
}

/** A lease's state as the wire says it. */
export function leaseStateToWire(state: LeaseState): WireLeaseState {
  return create(LeaseStateSchema, {
    receiptHandle: state.receiptHandle,
    held: state.held,
    reason: state.reason ?? "",
    ...(state.leaseDeadline === undefined ? {} : { leaseDeadline: timestampFromMs(state.leaseDeadline) }),
  });
}
