import { RpcError } from "../../../src/client/rpc-error.js";
import { SQS_UNAVAILABLE, sqsErrorReason } from "./sqs-reasons.js";

/** The API a call went through: holdshelf's gRPC service, or its SQS endpoint. */
export type Wire = "grpc" | "sqs";

/**
 * How a call ended, as far as the client can know: "ok" (acknowledged),
 * "rejected" (the broker answered with a holdshelf reason: nothing changed),
 * or "unknown" (the call broke, e.g. UNAVAILABLE at a kill: it may or may not
 * have been applied).
 */
export type Outcome = "ok" | "rejected" | "unknown";

/** One message the client tried to send; times are the client's Date.now() around the call. */
export interface SendRecord {
  readonly uid: string;
  readonly queue: string;
  readonly start: number;
  readonly end: number;
  readonly outcome: Outcome;
  /** The broker's id, known only when the send was acknowledged. */
  readonly messageId: string | undefined;
  readonly wire: Wire;
}

/** One delivery the client saw: a message in an acknowledged Receive answer. */
export interface DeliveryRecord {
  readonly messageId: string;
  readonly uid: string;
  readonly queue: string;
  readonly handle: string;
  /** Date.now() just before the Receive was called: the lease began at or after it. */
  readonly start: number;
  /** Date.now() when the answer arrived: the lease began at or before it. */
  readonly end: number;
  readonly visibilityMs: number;
  readonly receiveCount: number;
  /** True for the final drain's deliveries. */
  readonly drain: boolean;
  readonly wire: Wire;
}

/**
 * A change to one lease: ChangeVisibility(Batch), a Heartbeat or Subscribe
 * renewal, a Delete(Batch) or Subscribe ack ("delete"), or a Subscribe
 * failure ("fail": the lease ends, and the message stays hidden in its queue
 * for visibilityMs, its retry delay); visibility 0 releases.
 */
export interface LeaseOpRecord {
  readonly kind: "change" | "renew" | "delete" | "fail";
  readonly visibilityMs: number;
  readonly start: number;
  readonly end: number;
  readonly outcome: Outcome;
  readonly reason: string;
  /** Over SQS, a Delete of a superseded handle answers OK and deletes nothing (lease-windows.ts). */
  readonly wire: Wire;
}

/** Reasons a lease change may be refused without anything being wrong: the lease may have run out. */
const staleLeaseReasons = new Set(["LEASE_SUPERSEDED", "MESSAGE_NOT_FOUND", "LEASE_LIMIT_EXCEEDED"]);

/** Every operation of a crash run, in the order the client saw them settle. */
export class Ledger {
  readonly sends: SendRecord[] = [];
  readonly deliveries: DeliveryRecord[] = [];
  /** Lease operations by receipt handle, in call order (one lease is only ever changed by one call at a time). */
  readonly leaseOps = new Map<string, LeaseOpRecord[]>();
  /** LEASE_EXPIRED notices of Heartbeat and Subscribe streams, with the time each arrived. */
  readonly notices: { handle: string; at: number }[] = [];
  /** When each broker process started serving and when it was killed (Date.now()). */
  readonly lives: { started: number; killed: number | undefined }[] = [];
  /** Failures nothing in the run explains, e.g. a transport error while the broker was up. */
  readonly unexpected: string[] = [];

  /** Records a lease operation on a receipt handle. */
  leaseOp(handle: string, op: LeaseOpRecord): void {
    const ops = this.leaseOps.get(handle);
    if (ops) ops.push(op);
    else this.leaseOps.set(handle, [op]);
  }

  /**
   * Classifies a failed call; `killing` says whether the broker was being
   * killed when it failed, the only time a broken call is expected.
   */
  failure(error: unknown, what: string, killing: boolean): { outcome: Outcome; reason: string } {
    // An SQS error is judged by the holdshelf reason it stands for; a transport failure has none.
    const reason = error instanceof RpcError ? error.reason : sqsErrorReason(error);
    // A write that failed, or that a cluster's fence refused after the broker's shards moved on, or a
    // call whose queue was moving between brokers (its owner gone mid-call): expected only while a
    // life ends, and unknown, since a commit cut off mid-way may have landed. SQS answers all of
    // these ServiceUnavailable.
    if (reason === "STORAGE_UNAVAILABLE" || reason === "QUEUE_MOVING" || reason === SQS_UNAVAILABLE) {
      if (!killing) this.unexpected.push(`${what}: ${reason} ${errorMessage(error)} while the broker was up`);
      return { outcome: "unknown", reason };
    }
    if (reason !== undefined && reason !== "" && reason !== "INTERNAL") {
      if (!staleLeaseReasons.has(reason)) this.unexpected.push(`${what}: ${reason} ${errorMessage(error)}`);
      return { outcome: "rejected", reason };
    }
    if (!killing) this.unexpected.push(`${what} failed while the broker was up: ${String(error)}`);
    return { outcome: "unknown", reason: error instanceof RpcError ? `code ${error.code}` : String(error) };
  }

  /** Records a refused batch entry (EntryResult code not 0). */
  entryRejected(reason: string, what: string): void {
    if (!staleLeaseReasons.has(reason)) this.unexpected.push(`${what}: entry refused with ${reason}`);
  }
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
