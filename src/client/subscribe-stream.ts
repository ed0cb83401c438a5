import { create } from "@bufbuild/protobuf";
import type { ClientDuplexStream } from "@grpc/grpc-js";
import {
  SubscribeRequestSchema,
  type SubscribeRequest as WireSubscribeRequest,
  type SubscribeResponse as WireSubscribeResponse,
} from "../../gen/holdshelf/v1/queue_service_pb.js";
import { PlainStream } from "./plain-stream.js";
import { subscribeRequestToWire, subscribeResponseFromWire } from "./subscribe-convert.js";
import type { SubscribeRequest, SubscribeResponse } from "./types.js";

/**
 * A Subscribe stream with plain requests and responses: one call. The first
 * request opens the subscription; the broker then pushes deliveries up to
 * the stream's credit, answers each request that carries acks or renewals
 * with one response, in order, and pushes notices of expired leases. A
 * half-close (end) stops the deliveries.
 */
export class SubscribeStream extends PlainStream<
  SubscribeRequest,
  SubscribeResponse,
  WireSubscribeRequest,
  WireSubscribeResponse
> {
  constructor(call: ClientDuplexStream<WireSubscribeRequest, WireSubscribeResponse>) {
    super(
      call,
      (request) => create(SubscribeRequestSchema, subscribeRequestToWire(request)),
      subscribeResponseFromWire,
    );
  }
}
