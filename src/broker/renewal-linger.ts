/**
 * When a Heartbeat renewal's write may wait for other renewals to share its
 * fsync (GroupCommit's linger). Streams renew a lease at a third of its
 * timeout, seconds apart, and arrive one at a time: without a linger, a
 * thousand streams renewing 200 times a second paid a write and an fsync
 * each. The lease is extended in memory at once either way; only the answer
 * waits.
 */
export interface RenewalLinger {
  /** How long a renewal's write may wait; 0 turns lingering off. */
  readonly lingerMs: number;
  /**
   * Lingering needs company: renewals linger only while this many streams
   * are open, as PostgreSQL's commit_delay waits only with commit_siblings
   * other transactions active. A lone stream would only be slowed.
   */
  readonly minStreams: number;
}

/** 20 ms is nothing to a lease renewed seconds ahead, and lets 200 renewals a second share about four to a write. */
export const defaultRenewalLinger: RenewalLinger = { lingerMs: 20, minStreams: 8 };

/**
 * The linger of one renewal's write. Never while its stream has requests
 * queued behind it: a stream answers in order, so each would wait out a
 * linger in turn.
 */
export function renewalLingerMs(policy: RenewalLinger, openStreams: number, moreQueued: boolean): number {
  return !moreQueued && openStreams >= policy.minStreams ? policy.lingerMs : 0;
}
