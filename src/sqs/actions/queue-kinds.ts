/**
 * The standard queues this SQS endpoint has met, learned from answers it got
 * anyway: a send stored without a sequence number, or the broker refusing a
 * group as NOT_A_FIFO_QUEUE. A fair queue's sends (a MessageGroupId on a
 * standard queue, fair-queue-groups.ts) then drop the group before they are
 * sent, instead of being refused and sent again each time.
 *
 * A queue's kind is fixed at creation, but a name may be deleted and made
 * again as a FIFO queue (over gRPC, or by another broker's endpoint): a send
 * whose group was dropped and that the broker then refuses for want of one
 * forgets the queue and is sent as given. Only what such a refusal can
 * correct is learned: a FIFO queue is known by its name's suffix, never from
 * memory, since acting on a stale "FIFO" (ignoring DelaySeconds=0) would
 * change a standard queue's message without a refusal to show it.
 */
export class QueueKinds {
  readonly #standard = new Set<string>();

  /** At most this many names are remembered; the oldest goes first. A name forgotten costs one refused send. */
  constructor(private readonly maxRemembered = 10_000) {}

  /** Whether `queue` was last seen as a standard queue. */
  isStandard(queue: string): boolean {
    return this.#standard.has(queue);
  }

  /** `queue` answered as a standard queue. */
  learnStandard(queue: string): void {
    if (this.#standard.has(queue)) return;
    if (this.#standard.size >= this.maxRemembered) {
      const oldest = this.#standard.values().next().value;
      if (oldest !== undefined) this.#standard.delete(oldest);
    }
    this.#standard.add(queue);
  }

  /** `queue` is gone, or was made again: nothing is known of it. */
  forget(queue: string): void {
    this.#standard.delete(queue);
  }
}
