import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { callOptions, type Epoch } from "./crash-epoch.js";
import type { DeliveryRecord, Ledger, Outcome } from "./ledger.js";
import { parseBody } from "./message-bodies.js";

/** A delivery the client holds: the lease it may still change or delete. */
export interface Lease {
  readonly delivery: DeliveryRecord;
  readonly poison: boolean;
}

/** Receives and records each delivery; returns [] when the call fails. */
export async function receiveLeases(
  epoch: Epoch,
  ledger: Ledger,
  queue: string,
  request: { maxMessages: number; visibilityMs: number; waitMs: number },
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
  await recordLeaseCall(epoch, ledger, leases, { kind: "delete", visibilityMs: 0, name: "Delete" }, {
    one: (queue, receiptHandle) => epoch.rpc.delete({ queue, receiptHandle }, callOptions()),
    batch: (queue, receiptHandles) => epoch.rpc.deleteBatch({ queue, receiptHandles }, callOptions()),
  });
}

/**
 * Sets leases to a visibility timeout (0 releases) with ChangeVisibility or
 * ChangeVisibilityBatch; returns the leases the broker confirmed.
 */
export async function changeLeases(epoch: Epoch, ledger: Ledger, leases: readonly Lease[], visibilityMs: number): Promise<Lease[]> {
  const visibilityTimeout = durationFromMs(visibilityMs);
  const outcomes = await recordLeaseCall(epoch, ledger, leases, { kind: "change", visibilityMs, name: "ChangeVisibility" }, {
    one: (queue, receiptHandle) => epoch.rpc.changeVisibility({ queue, receiptHandle, visibilityTimeout }, callOptions()),
    batch: (queue, receiptHandles) => epoch.rpc.changeVisibilityBatch({ queue, receiptHandles, visibilityTimeout }, callOptions()),
  });
  return leases.filter((_, i) => outcomes[i]!.outcome === "ok");
}

/** The single and batch forms of one lease RPC. */
interface LeaseCall {
  one(queue: string, receiptHandle: string): Promise<unknown>;
  batch(queue: string, receiptHandles: string[]): Promise<{ results: readonly { code: number; reason: string }[] }>;
}

/**
 * Calls the single form for one lease (the batch form for several, all of one
 * queue) and records each lease's outcome with the call's start and end.
 */
async function recordLeaseCall(
  epoch: Epoch,
  ledger: Ledger,
  leases: readonly Lease[],
  op: { kind: "delete" | "change"; visibilityMs: number; name: string },
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
      const { results } = await call.batch(queue, leases.map((l) => l.delivery.handle));
      for (const result of results) {
        if (result.code !== 0) ledger.entryRejected(result.reason, `${op.name}Batch on ${queue}`);
        outcomes.push(result.code === 0 ? { outcome: "ok", reason: "" } : { outcome: "rejected", reason: result.reason });
      }
    }
  } catch (error) {
    const failed = ledger.failure(error, `${op.name} on ${queue}`, epoch.killing);
    leases.forEach(() => outcomes.push(failed));
  }
  const end = Date.now();
  leases.forEach((lease, i) =>
    ledger.leaseOp(lease.delivery.handle, { kind: op.kind, visibilityMs: op.visibilityMs, start, end, ...outcomes[i]! }),
  );
  return outcomes;
}
