import type { BrokerEvents } from "./broker-events.js";

/**
 * Events passed on to each listener in turn (metrics, the console's
 * history), for a broker that takes one `events`. It runs on the hot path,
 * so each method is a plain loop; one listener is returned as it is.
 */
export function teeEvents(...listeners: BrokerEvents[]): BrokerEvents {
  if (listeners.length === 1) return listeners[0]!;
  // Each listener is called as a method (`listener.sent(...)`), so classes keep their `this`.
  return {
    sent(queue, count, deduplicated) {
      for (const listener of listeners) listener.sent(queue, count, deduplicated);
    },
    delivered(queue, receiveCount, queueWaitMs) {
      for (const listener of listeners) listener.delivered(queue, receiveCount, queueWaitMs);
    },
    emptyReceive(queue) {
      for (const listener of listeners) listener.emptyReceive(queue);
    },
    deleted(queue, processingMs) {
      for (const listener of listeners) listener.deleted(queue, processingMs);
    },
    deadLettered(queue, deadLetterQueue, count) {
      for (const listener of listeners) listener.deadLettered(queue, deadLetterQueue, count);
    },
    arrived(queue, count) {
      for (const listener of listeners) listener.arrived(queue, count);
    },
    movedByTask(queue, count) {
      for (const listener of listeners) listener.movedByTask(queue, count);
    },
    retentionExpired(queue, count) {
      for (const listener of listeners) listener.retentionExpired(queue, count);
    },
    leaseExpired(queue, latenessMs) {
      for (const listener of listeners) listener.leaseExpired(queue, latenessMs);
    },
    leaseExtended(queue, via) {
      for (const listener of listeners) listener.leaseExtended(queue, via);
    },
    leaseReleased(queue, reason) {
      for (const listener of listeners) listener.leaseReleased(queue, reason);
    },
    pushed(queue, count) {
      for (const listener of listeners) listener.pushed(queue, count);
    },
    streamAcked(queue, count) {
      for (const listener of listeners) listener.streamAcked(queue, count);
    },
    creditFilled(queue) {
      for (const listener of listeners) listener.creditFilled(queue);
    },
  };
}
