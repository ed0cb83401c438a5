import { monotonicMs } from "./proc-stats.js";

/** The size of every message body the benchmarks send, unless a scenario says otherwise. */
export const bodyBytes = 1024;

/**
 * A body (1 KiB unless told) carrying the monotonic time it was made at, so
 * that the consumer, in the same client process, can tell how long it took to arrive.
 */
export function timedBody(bytes = bodyBytes): Buffer {
  const body = Buffer.alloc(bytes, 0x61);
  body.writeDoubleLE(monotonicMs(), 0);
  return body;
}

/** Milliseconds since a timedBody was made. */
export function ageOf(body: Uint8Array): number {
  return monotonicMs() - Buffer.from(body.buffer, body.byteOffset, body.byteLength).readDoubleLE(0);
}
