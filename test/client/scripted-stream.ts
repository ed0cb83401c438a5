import type { HeartbeatChannel } from "../../src/client/heartbeat-lease-channel.js";
import type { HeartbeatRequest, LeaseState } from "../../src/client/types.js";
import { ScriptedCall } from "./scripted-call.js";

/** A Heartbeat stream the test plays the server of: it sees each request and pushes each response. */
export class ScriptedStream extends ScriptedCall<HeartbeatRequest, LeaseState[]> implements HeartbeatChannel {
  /** Delivers a response (an answer or a notice). */
  push(states: LeaseState[]): void {
    this.respond(states);
  }
}

/** A LeaseState saying the lease is held. */
export const held = (receiptHandle: string): LeaseState => ({
  receiptHandle,
  held: true,
  reason: "",
  leaseDeadline: new Date(),
});

/** A LeaseState saying the lease is lost, and why. */
export const lost = (receiptHandle: string, reason: string): LeaseState => ({ receiptHandle, held: false, reason });
