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
  if (leases.length === 0) return;
  const queue = leases[0]!.delivery.queue;
  const start = Date.now();
  const outcomes: { outcome: Outcome; reason: string }[] = [];
  try {
    if (leases.length === 1) {
      await epoch.rpc.delete({ queue, receiptHandle: leases[0]!.delivery.handle }, callOptions());
      outcomes.push({ outcome: "ok", reason: "" });
    } else {
      const { results } = await epoch.rpc.deleteBatch({ queue, receiptHandles: leases.map((l) => l.delivery.handle) }, callOptions());
      for (const result of results) {
        if (result.code !== 0) ledger.entryRejected(result.reason, `DeleteBatch on ${queue}`);
        outcomes.push(result.code === 0 ? { outcome: "ok", reason: "" } : { outcome: "rejected", reason: result.reason });
      }
    }
  } catch (error) {
    const failed = ledger.failure(error, `Delete on ${queue}`, epoch.killing);
    leases.forEach(() => outcomes.push(failed));
  }
  const end = Date.now();
  leases.forEach((lease, i) => ledger.leaseOp(lease.delivery.handle, { kind: "delete", visibilityMs: 0, start, end, ...outcomes[i]! }));
}

/**
 * Sets leases to a visibility timeout (0 releases) with ChangeVisibility or
 * ChangeVisibilityBatch; returns the leases the broker confirmed.
 */
export async function changeLeases(epoch: Epoch, ledger: Ledger, leases: readonly Lease[], visibilityMs: number): Promise<Lease[]> {
  if (leases.length === 0) return [];
  const queue = leases[0]!.delivery.queue;
  const start = Date.now();
  const outcomes: { outcome: Outcome; reason: string }[] = [];
  try {
    if (leases.length === 1) {
      await epoch.rpc.changeVisibility(
        { queue, receiptHandle: leases[0]!.delivery.handle, visibilityTimeout: durationFromMs(visibilityMs) },
        callOptions(),
      );
      outcomes.push({ outcome: "ok", reason: "" });
    } else {
      const { results } = await epoch.rpc.changeVisibilityBatch(
        { queue, receiptHandles: leases.map((l) => l.delivery.handle), visibilityTimeout: durationFromMs(visibilityMs) },
        callOptions(),
      );
      for (const result of results) {
        if (result.code !== 0) ledger.entryRejected(result.reason, `ChangeVisibilityBatch on ${queue}`);
        outcomes.push(result.code === 0 ? { outcome: "ok", reason: "" } : { outcome: "rejected", reason: result.reason });
      }
    }
  } catch (error) {
    const failed = ledger.failure(error, `ChangeVisibility on ${queue}`, epoch.killing);
    leases.forEach(() => outcomes.push(failed));
  }
  const end = Date.now();
  leases.forEach((lease, i) => ledger.leaseOp(lease.delivery.handle, { kind: "change", visibilityMs, start, end, ...outcomes[i]! }));
  return leases.filter((_, i) => outcomes[i]!.outcome === "ok");
}
