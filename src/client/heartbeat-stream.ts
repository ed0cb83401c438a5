import { create } from "@bufbuild/protobuf";
import type { ClientDuplexStream } from "@grpc/grpc-js";
import {
  HeartbeatRequestSchema,
  type HeartbeatRequest as WireHeartbeatRequest,
  type HeartbeatResponse as WireHeartbeatResponse,
} from "../../gen/holdshelf/v1/queue_service_pb.js";
import { heartbeatRequestToWire, leaseStateFromWire } from "./client-convert.js";
import { PlainStream } from "./plain-stream.js";
import type { HeartbeatRequest, LeaseState } from "./types.js";

/**
 * A Heartbeat stream with plain requests and responses. The server answers
 * each request with one response, in order, after those of earlier
 * requests, and may also push unsolicited responses (leases that expired)
 * at any time; iterating yields both, in arrival order, each as its list of
 * lease states.
 */
export class HeartbeatStream extends PlainStream<
  HeartbeatRequest,
  LeaseState[],
  WireHeartbeatRequest,
  WireHeartbeatResponse
> {
  constructor(call: ClientDuplexStream<WireHeartbeatRequest, WireHeartbeatResponse>) {
    super(
      call,
      (request) => create(HeartbeatRequestSchema, heartbeatRequestToWire(request)),
      (response) => response.leases.map(leaseStateFromWire),
    );
  }
}
