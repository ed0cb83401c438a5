import type { SubscribeRequest } from "../../gen/holdshelf/v1/queue_service_pb.js";

/** Where a Subscribe call's requests go once its first one is read: a session here, or the queue's owner. */
export interface SubscribeStreamTarget {
  request(request: SubscribeRequest): void;
  /** Bytes that were not a SubscribeRequest: the stream ends with INVALID_ARGUMENT. */
  malformed(description: string): void;
  halfClose(): void;
  drained(): void;
  broken(): void;
}
