import { create } from "@bufbuild/protobuf";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import type { ClientDuplexStream } from "@grpc/grpc-js";
import {
  HeartbeatRequestSchema,
  type HeartbeatRequest,
  type HeartbeatResponse,
  type LeaseState,
} from "../../../gen/holdshelf/v1/queue_service_pb.js";
import type { QueueServiceRpc } from "../../../src/client/rpc-client.js";

/** One Heartbeat stream (release_on_disconnect on) used request by request; expiry notices are kept apart. */
export class HeartbeatRenewer {
  private readonly call: ClientDuplexStream<HeartbeatRequest, HeartbeatResponse>;
  private readonly waiting: { resolve(states: LeaseState[]): void; reject(error: unknown): void }[] = [];
  private broken: unknown;
  private first = true;

  constructor(
    rpc: QueueServiceRpc,
    /** Told of each LEASE_EXPIRED notice, with the time it arrived. */
    private readonly onExpired: (handle: string, at: number) => void,
  ) {
    // No deadline: a passed deadline counts as a break and would release the leases.
    this.call = rpc.heartbeat();
    this.call.on("data", (response: HeartbeatResponse) => {
      const isNotice = response.leases.length > 0 && response.leases.every((state) => state.reason === "LEASE_EXPIRED");
      if (isNotice) {
        const at = Date.now();
        response.leases.forEach((state) => {
          this.onExpired(state.receiptHandle, at);
        });
      } else {
        this.waiting.shift()?.resolve(response.leases);
      }
    });
    const fail = (error: unknown): void => {
      this.broken ??= error;
      for (const waiter of this.waiting.splice(0)) waiter.reject(error);
    };
    this.call.on("error", fail);
    this.call.on("end", () => fail(new Error("the Heartbeat stream ended")));
  }

  /** Sends one request of renewals (visibility 0 releases) and resolves with its answer's states, in order. */
  renew(queue: string, renewals: readonly { handle: string; visibilityMs: number }[]): Promise<LeaseState[]> {
    if (this.broken !== undefined) return Promise.reject(this.broken);
    const request = create(HeartbeatRequestSchema, {
      queue,
      leases: renewals.map((r) => ({ receiptHandle: r.handle, visibilityTimeout: durationFromMs(r.visibilityMs) })),
      releaseOnDisconnect: this.first,
    });
    this.first = false;
    return new Promise((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      this.call.write(request);
    });
  }
}
