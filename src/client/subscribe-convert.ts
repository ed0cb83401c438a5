import type { MessageInitShape } from "@bufbuild/protobuf";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import type {
  SubscribeRequestSchema,
  SubscribeResponse as WireSubscribeResponse,
} from "../../gen/holdshelf/v1/queue_service_pb.js";
import { heartbeatRequestToWire, leaseStateFromWire, messageFromWire } from "./client-convert.js";
import { deleteOutcomeFromWire } from "./delete-outcome.js";
import type { SubscribeRequest, SubscribeResponse } from "./types.js";

/** A plain Subscribe request as the wire's. */
export function subscribeRequestToWire(request: SubscribeRequest): MessageInitShape<typeof SubscribeRequestSchema> {
  const flowControl = request.flowControl;
  return {
    queue: request.queue ?? "",
    ...(request.visibilityTimeoutMs === undefined
      ? {}
      : { visibilityTimeout: durationFromMs(request.visibilityTimeoutMs) }),
    releaseOnDisconnect: request.releaseOnDisconnect ?? false,
    ...(flowControl === undefined
      ? {}
      : {
          flowControl: {
            maxOutstandingMessages: flowControl.maxOutstandingMessages,
            maxOutstandingBytes: BigInt(flowControl.maxOutstandingBytes ?? 0),
          },
        }),
    ackReceiptHandles: [...(request.acks ?? [])],
    // A renewal reads the same on both streams.
    leases: heartbeatRequestToWire({ queue: "", leases: request.leases ?? [] }).leases ?? [],
  };
}

/** A wire Subscribe response as a plain object. */
export function subscribeResponseFromWire(response: WireSubscribeResponse): SubscribeResponse {
  return {
    messages: response.messages.map(messageFromWire),
    acks: response.acks.map(({ receiptHandle, reason, deleteOutcome }) => ({
      receiptHandle,
      reason,
      ...(reason === "" ? { deleteOutcome: deleteOutcomeFromWire(deleteOutcome) } : {}),
    })),
    leases: response.leases.map(leaseStateFromWire),
  };
}
