import type { AckResult, LeaseRenewal, LeaseState } from "./types.js";

/** What a LeaseKeeper sends in one request: renewals (with checkpoints, releases, failures) and acks. */
export interface LeaseRequest {
  readonly leases: readonly LeaseRenewal[];
  readonly acks: readonly string[];
}

/** One response of a lease channel, deliveries left out: answers and notices, or nothing (a response of deliveries). */
export interface LeaseResponse {
  readonly acks: readonly AckResult[];
  readonly leases: readonly LeaseState[];
}

/** A response read against the request in flight: the answer to it, if it is one, and notices of lost leases. */
export interface SplitResponse {
  readonly answer: LeaseResponse | undefined;
  readonly notices: readonly LeaseState[];
}

/**
 * One stream a LeaseKeeper holds leases on: a Heartbeat stream, or a
 * Subscribe stream (which also takes acks). The keeper sends at most one
 * request at a time that expects an answer.
 */
export interface LeaseChannel extends AsyncIterable<LeaseResponse> {
  /** The RPC, for messages: "Heartbeat" or "Subscribe". */
  readonly rpc: string;
  /** Sends one request; the first on a channel opens it. */
  send(request: LeaseRequest): void;
  /** Half-closes: the server answers what was sent, then ends the stream. */
  end(): void;
  /** Breaks the stream: the server releases the leases it holds. */
  cancel(): void;
  /** Whether the server answers a request with no renewals and no acks (Heartbeat does, Subscribe does not). */
  readonly answersEmptyRequests: boolean;
  /** Tells the answer to `sent` (the request in flight, if any) from notices. */
  split(sent: LeaseRequest | undefined, response: LeaseResponse): SplitResponse;
}
