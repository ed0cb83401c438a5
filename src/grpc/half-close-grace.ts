import type { ServerDuplexStream } from "@grpc/grpc-js";
import { deadlinePassed } from "../protocol/deadline-passed.js";

// A client that cancels (grpc-js, over Node's http2) half-closes and then
// resets the stream, and the reset can come more than a turn of the event
// loop after the half-close (0.1 to 1 ms on loopback): a single turn read
// such cancels as clean ends, and their leases were not released. So a
// stream that holds leases waits this long, then lets pending socket reads
// run, before taking a half-close as clean (a poll waiting when a consumer
// cancels: test/grpc/forwarding-heartbeat.test.ts).
const resetGraceMs = 50;

/** Runs `then` once a half-close had time to turn out a cancel. */
export function afterResetGrace(then: () => void): void {
  setTimeout(() => setImmediate(then), resetGraceMs);
}

/**
 * Whether a half-closed call ended by its client's choice: not cancelled,
 * and its deadline not passed (a deadline that passed is reported by grpc-js
 * itself, not cancelled).
 */
export function endedCleanly(call: Pick<ServerDuplexStream<unknown, unknown>, "cancelled" | "getDeadline">): boolean {
  return !call.cancelled && !deadlinePassed(call.getDeadline());
}
