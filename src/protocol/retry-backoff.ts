/** A queue's retry policy as the backoff needs it (the broker's and the client's types both fit). */
export interface RetryBackoffPolicy {
  readonly minBackoffMs: number;
  readonly maxBackoffMs: number;
}

/**
 * How long a message waits before its next delivery after a lease ended
 * without a delete, under a retry policy: min(max, min * 2^(n-1)) for its
 * n-th receive.
 */
export function retryBackoffMs(policy: RetryBackoffPolicy, receiveCount: number): number {
  // 2^(n-1) overflows to Infinity for huge counts; min() still gives max_backoff.
  return Math.min(policy.maxBackoffMs, policy.minBackoffMs * 2 ** Math.max(0, receiveCount - 1));
}
