/**
 * A FIFO message's sequence number as clients see it: 20 decimal digits,
 * zero-padded (as SQS's are at least 20), so that comparing the text compares
 * the numbers in any language.
 */
export function formatSequenceNumber(sequence: number): string {
  return String(sequence).padStart(20, "0");
}

let lastCrossShard = 0;

/**
 * The sequence number of a FIFO message this broker moves into a queue that
 * another broker serves (cluster mode), which cannot ask that queue for its
 * next one: this broker's time in microseconds, as QueueState.nextSequence
 * counts, so it lands after the messages the queue's owner numbered before,
 * give or take the two brokers' clock difference.
 */
export function crossShardSequence(now: number): number {
  lastCrossShard = Math.max(lastCrossShard + 1, Math.floor(now) * 1000);
  return lastCrossShard;
}
