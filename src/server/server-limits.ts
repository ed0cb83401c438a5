import { defaultBrokerLimits, type BrokerLimits } from "../broker/broker-limits.js";

/** Every capacity limit of a broker: the broker's own and the gRPC server's. */
export interface HoldshelfLimits extends BrokerLimits {
  /** Largest request message, in bytes; grpc-js refuses larger ones with RESOURCE_EXHAUSTED. */
  readonly maxRequestBytes: number;
  /** Calls open at once on one connection (past it: TOO_MANY_STREAMS). */
  readonly maxStreamsPerConnection: number;
}

/**
 * The defaults. 8 MiB holds the largest SendBatch (4 MiB of bodies and
 * attributes) with room for its framing; below about 4.1 MiB large batches
 * fail in gRPC, without a reason, instead of with MESSAGE_TOO_LARGE. 1,000
 * calls per connection cover a worker process with hundreds of long polls
 * and Heartbeat streams on one channel (each open call costs the broker a
 * few KB).
 */
export const defaultLimits: HoldshelfLimits = {
  ...defaultBrokerLimits,
  maxRequestBytes: 8 * 1024 * 1024,
  maxStreamsPerConnection: 1000,
};

/** The limits with unset ones taking their defaults. Throws a RangeError for one that is not a positive integer. */
export function resolveLimits(limits: Partial<HoldshelfLimits> | undefined): HoldshelfLimits {
  const resolved = { ...defaultLimits, ...limits };
  for (const [name, value] of Object.entries(resolved)) {
    if (!Number.isSafeInteger(value) || value < 1)
      throw new RangeError(`limits.${name} must be a positive integer, not ${value}`);
  }
  return resolved;
}
