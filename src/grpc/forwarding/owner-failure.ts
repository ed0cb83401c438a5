import type { StatusObject } from "@grpc/grpc-js";
import type { ClusterPeer } from "../../cluster/queue-router.js";
import { HoldshelfError } from "../../errors/holdshelf-error.js";
import { Code, statusDetailsKey } from "../../protocol/error-reasons.js";
import { ForwardedStatus } from "../../service/forwarded-status.js";
import { ownerTrailers } from "./peer-metadata.js";

/**
 * What the caller of a forwarded call gets for its failure: the owner's own
 * status, or QUEUE_MOVING when the owner could not be reached at all (an
 * UNAVAILABLE from the channel, which a broker's own UNAVAILABLE never is:
 * those carry a reason). QUEUE_MOVING rather than the channel's error: the
 * client retries, and by then the shard map names the new owner.
 */
export function ownerFailure(status: Pick<StatusObject, "code" | "details" | "metadata">, owner: ClusterPeer): Error {
  if (status.code === Code.UNAVAILABLE && status.metadata.get(statusDetailsKey).length === 0) {
    return new HoldshelfError(
      "QUEUE_MOVING",
      `broker ${owner.nodeId}, which serves the queue, cannot be reached; retry shortly`,
      {
        cause: new Error(`${owner.address}: ${status.details}`),
      },
    );
  }
  return new ForwardedStatus(status.code, status.details, ownerTrailers(status.metadata));
}
