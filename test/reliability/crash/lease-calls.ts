import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { callOptions, type Epoch } from "./crash-epoch.js";
import type { DeliveryRecord, Ledger, Outcome, Wire } from "./ledger.js";
import { parseBody } from "./message-bodies.js";

/** A delivery the client holds: the lease it may still change or delete. */
export interface Lease {
  readonly delivery: DeliveryRecord;
  readonly poison: boolean;
}

/** What a Receive asks for, in ms (the SQS calls round to whole seconds). */
export interface ReceiveRequest {
  readonly maxMessages: number;
  readonly visibilityMs: number;
  readonly waitMs: number;
}

/** A consumer's lease calls over one wire; each records what the client saw in the ledger. */
export interface LeaseCalls {
  /** Receives up to maxMessages (at most 10) and records each delivery; [] when the call fails. */
  receive(epoch: Epoch, ledger: Ledger, queue: string, request: ReceiveRequest): Promise<Lease[]>;
  /** Deletes leases, all of one queue, and records each outcome. */
  delete(epoch: Epoch, ledger: Ledger, leases: readonly Lease[]): Promise<void>;
  /** Sets leases, all of one queue, to a visibility timeout (0 releases); returns the leases the broker confirmed. */
  change(epoch: Epoch, ledger: Ledger, leases: readonly Lease[], visibilityMs: number): Promise<Lease[]>;
}

/** The lease calls over gRPC. */
export const grpcLeaseCalls: LeaseCalls = {
  receive: (epoch, ledger, queue, request) => receiveLeases(epoch, ledger, queue, request),
  delete: deleteLeases,
  change: changeLeases,
};

/** Receives and records each delivery; returns [] when the call fails. */
export async function receiveLeases(
  epoch: Epoch,
  ledger: Ledger,
  queue: string,
  request: ReceiveRequest,
  drain = false,
): Promise<Lease[]> {
  const start = Date.now();
  try {
    const { messages } = await epoch.rpc.receive(
      {
        queue,
        maxMessages: request.maxMessages,
        visibilityTimeout: durationFromMs(request.visibilityMs),
        waitTime: durationFromMs(request.waitMs),
      },
      callOptions(),
    );
    const end = Date.now();
    return messages.map((message) => {
      const { uid, poison } = parseBody(message.body);
      const delivery: DeliveryRecord = {
        messageId: message.messageId,
        uid,
        queue,
        handle: message.receiptHandle,
        start,
        end,
        visibilityMs: request.visibilityMs,
        receiveCount: message.receiveCount,
        drain,
        wire: "grpc",
      };
      ledger.deliveries.push(delivery);
      return { delivery, poison };
    });
  } catch (error) {
    ledger.failure(error, `Receive from ${queue}`, epoch.killing);
    return [];
  }
}

/** Deletes leases (one Delete, or a DeleteBatch for several) and records each outcome. */
export async function deleteLeases(epoch: Epoch, ledger: Ledger, leases: readonly Lease[]): Promise<void> {
  await recordLeaseCall(
    epoch,
    ledger,
    leases,
    { kind: "delete", visibilityMs: 0, name: "Delete", wire: "grpc" },
    {
      one: (queue, receiptHandle) => epoch.rpc.delete({ queue, receiptHandle }, callOptions()),
      batch: (queue, receiptHandles) => epoch.rpc.deleteBatch({ queue, receiptHandles }, callOptions()),
    },
  );
}

/**
 * Sets leases to a visibility timeout (0 releases) with ChangeVisibility or
 * ChangeVisibilityBatch; returns the leases the broker confirmed.
 */
export async function changeLeases(
  epoch: Epoch,
  ledger: Ledger,
  leases: readonly Lease[],
  visibilityMs: number,
): Promise<Lease[]> {
  const visibilityTimeout = durationFromMs(visibilityMs);
  const outcomes = await recordLeaseCall(
    epoch,
    ledger,
    leases,
    { kind: "change", visibilityMs, name: "ChangeVisibility", wire: "grpc" },
    {
      one: (queue, receiptHandle) =>
        epoch.rpc.changeVisibility({ queue, receiptHandle, visibilityTimeout }, callOptions()),
      batch: (queue, receiptHandles) =>
        epoch.rpc.changeVisibilityBatch({ queue, receiptHandles, visibilityTimeout }, callOptions()),
    },
  );
  return leases.filter((_, i) => outcomes[i]!.outcome === "ok");
}

/** The single and batch forms of one lease call; the batch answers each handle's result in order (code 0 for success, undefined if left out). */
export interface LeaseCall {
  one(queue: string, receiptHandle: string): Promise<unknown>;
  batch(
    queue: string,
    receiptHandles: string[],
  ): Promise<{ results: readonly ({ code: number; reason: string } | undefined)[] }>;
}

/**
 * Calls the single form for one lease (the batch form for several, all of one
 * queue) and records each lease's outcome with the call's start and end.
 */
export async function recordLeaseCall(
  epoch: Epoch,
  ledger: Ledger,
  leases: readonly Lease[],
  op: { kind: "delete" | "change"; visibilityMs: number; name: string; wire: Wire },
  call: LeaseCall,
): Promise<{ outcome: Outcome; reason: string }[]> {
  if (leases.length === 0) return [];
  const queue = leases[0]!.delivery.queue;
  const start = Date.now();
  const outcomes: { outcome: Outcome; reason: string }[] = [];
  try {
    if (leases.length === 1) {
      await call.one(queue, leases[0]!.delivery.handle);
      outcomes.push({ outcome: "ok", reason: "" });
    } else {
      const { results } = await call.batch(
        queue,
        leases.map((l) => l.delivery.handle),
      );
      leases.forEach((_, i) => {
        const result = results[i];
        // An answer without this entry's result says nothing of what happened to it.
        if (result === undefined) {
          ledger.unexpected.push(`${op.name}Batch on ${queue}: no result for entry ${i}`);
          outcomes.push({ outcome: "unknown", reason: "no result" });
        } else if (result.code !== 0) {
          ledger.entryRejected(result.reason, `${op.name}Batch on ${queue}`);
          outcomes.push({ outcome: "rejected", reason: result.reason });
        } else {
          outcomes.push({ outcome: "ok", reason: "" });
        }
      });
    }
  } catch (error) {
    const failed = ledger.failure(error, `${op.name} on ${queue}`, epoch.killing);
    leases.forEach(() => {
      outcomes.push(failed);
    });
  }
  const end = Date.now();
  leases.forEach((lease, i) => {
    ledger.leaseOp(lease.delivery.handle, {
      kind: op.kind,
      visibilityMs: op.visibilityMs,
      start,
      end,
      ...outcomes[i]!,
      wire: op.wire,
    });
  });
  return outcomes;
}
