import type { HeartbeatChannel } from "../../src/client/heartbeat-lease-channel.js";
import type { HeartbeatRequest, LeaseState } from "../../src/client/types.js";

/** A Heartbeat stream the test plays the server of: it sees each request and pushes each response. */
export class ScriptedStream implements HeartbeatChannel {
  readonly sent: HeartbeatRequest[] = [];
  halfClosed = false;
  cancelled = false;
  private readonly responses: LeaseState[][] = [];
  private failure: unknown;
  private done = false;
  private wake: (() => void) | undefined;

  send(request: HeartbeatRequest): void {
    this.sent.push(request);
  }

  end(): void {
    this.halfClosed = true;
  }

  cancel(): void {
    this.cancelled = true;
  }

  /** Delivers a response (an answer or a notice). */
  push(states: LeaseState[]): void {
    this.responses.push(states);
    this.poke();
  }

  /** Ends the stream as the server would after a half-close. */
  finish(): void {
    this.done = true;
    this.poke();
  }

  /** Breaks the stream with an error. */
  fail(error: unknown): void {
    this.failure = error;
    this.poke();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<LeaseState[], void, undefined> {
    for (;;) {
      const next = this.responses.shift();
      if (next !== undefined) yield next;
      else if (this.failure !== undefined) throw this.failure;
      else if (this.done) return;
      else await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  private poke(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
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
