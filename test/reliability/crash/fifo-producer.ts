import { setTimeout as sleep } from "node:timers/promises";
import { deduplicationWindowMs } from "../../../src/broker/fifo-deduplication.js";
import type { Epoch } from "./crash-epoch.js";
import { fifoUid, type FifoBodyContent } from "./fifo-bodies.js";
import { sendFifo, type FifoSendAnswer } from "./fifo-calls.js";
import type { FifoAttempt, FifoLedger } from "./fifo-ledger.js";
import type { FifoQueue } from "./fifo-queues.js";
import type { Outcome } from "./ledger.js";
import type { SeededRandom } from "./seeded-random.js";

/** One message of a send, and why it is sent. */
interface FifoEntry {
  readonly content: FifoBodyContent;
  readonly attempt: FifoAttempt;
}

/** A message the broker acknowledged, and when its first send began (its window began no earlier). */
interface Acknowledged {
  readonly content: FifoBodyContent;
  readonly firstStart: number;
}

// Repeats stay a minute inside the five-minute window, clock slack and slow calls included.
const repeatableForMs = deduplicationWindowMs - 60_000;
// Repeats are drawn from the most recent acknowledgements only, so a long run's memory stays flat.
const repeatPool = 500;

/**
 * Sends to one FIFO queue across groups of its own, each message carrying
 * the next counter of its group, singly and in batches. A send whose outcome
 * is unknown (the kill came mid-call) is retried as it was, deduplication
 * ids included, before anything else, in the next life if need be: so a
 * group's messages are always stored in counter order, and a retry that
 * finds its first send stored must get that send's id back. Now and then
 * it also repeats sends the broker acknowledged, across restarts too, alone
 * or among new messages, and the first message of a batch twice.
 */
export class FifoProducer {
  private readonly groups: string[];
  private readonly nextCounter: number[];
  private pending: FifoEntry[] | undefined;
  private readonly firstStarts = new Map<string, number>();
  private acknowledged: Acknowledged[] = [];

  constructor(
    private readonly ledger: FifoLedger,
    private readonly random: SeededRandom,
    label: string,
    private readonly queue: FifoQueue,
    groupCount: number,
  ) {
    this.groups = Array.from({ length: groupCount }, (_, i) => `${label}-g${i}`);
    this.nextCounter = this.groups.map(() => 0);
  }

  /** Sends until the epoch's kill begins. */
  async run(epoch: Epoch): Promise<void> {
    while (!epoch.killing) {
      await this.sendOnce(epoch);
      await sleep(this.random.int(5, 25));
    }
  }

  /**
   * In the life after the last kill: retries the send left unknown, if
   * any, until the broker acknowledges it; records a failure if it cannot.
   */
  async settle(epoch: Epoch): Promise<void> {
    for (let tries = 0; this.pending !== undefined && tries < 5; tries++) await this.sendOnce(epoch);
    if (this.pending !== undefined)
      this.ledger.unexpected.push(`${this.queue.name}: a send could not be settled after the last restart`);
  }

  /** The next counter of every group: counters below it were all sent and acknowledged once settle() returns. */
  counters(): Map<string, number> {
    return new Map(this.groups.map((group, i) => [group, this.nextCounter[i]!]));
  }

  private async sendOnce(epoch: Epoch): Promise<void> {
    const retrying = this.pending !== undefined;
    const entries = this.pending?.map((entry) => ({ ...entry, attempt: "retry" as const })) ?? this.newEntries();
    const what = `${entries.length === 1 ? "Send" : "SendBatch"} to ${this.queue.name}${retrying ? " (retry)" : ""}`;
    const start = Date.now();
    let results: { outcome: Outcome; answer: FifoSendAnswer | undefined }[];
    try {
      const answers = await sendFifo(
        epoch,
        this.queue,
        entries.map((entry) => entry.content),
      );
      results = entries.map((_, i) => {
        const answer = answers[i];
        if (answer === undefined) this.ledger.unexpected.push(`${what}: no result for entry ${i}`);
        return { outcome: answer === undefined ? "unknown" : "ok", answer };
      });
    } catch (error) {
      const { outcome } = this.ledger.failure(error, what, epoch.killing);
      results = entries.map(() => ({ outcome, answer: undefined }));
    }
    const end = Date.now();
    const life = this.ledger.life;
    entries.forEach(({ content, attempt }, i) => {
      const { outcome, answer } = results[i]!;
      const uid = fifoUid(content);
      if (!this.firstStarts.has(uid)) this.firstStarts.set(uid, start);
      this.ledger.sends.push({
        uid,
        queue: this.queue.name,
        start,
        end,
        outcome,
        messageId: answer?.messageId,
        wire: "grpc",
        group: content.group,
        counter: content.counter,
        attempt,
        sequenceNumber: answer?.sequenceNumber,
        life,
      });
    });
    // A batch is all or nothing: retried whole until acknowledged (a refusal is a failure of the run, and retried too).
    if (results.every((r) => r.outcome === "ok")) {
      this.pending = undefined;
      for (const { content, attempt } of entries) {
        if (attempt !== "repeat")
          this.acknowledged.push({ content, firstStart: this.firstStarts.get(fifoUid(content))! });
      }
      if (this.acknowledged.length > 2 * repeatPool) this.acknowledged = this.acknowledged.slice(-repeatPool);
    } else {
      this.pending = entries;
    }
  }

  /** A new send: 1 to 5 messages of random groups (often several of one), maybe with repeats among them (a batch: 7 at most). */
  private newEntries(): FifoEntry[] {
    if (this.random.chance(0.08)) {
      const repeats = Array.from({ length: this.random.int(1, 3) }, () => this.repeatable()).filter(
        (entry) => entry !== undefined,
      );
      if (repeats.length > 0) return repeats;
    }
    const count = this.random.chance(0.5) ? 1 : this.random.int(2, 5);
    const entries: FifoEntry[] = [];
    let group = this.random.int(0, this.groups.length - 1);
    for (let i = 0; i < count; i++) {
      // Runs of one group in a batch: its messages must keep their entry order.
      if (this.random.chance(0.6)) group = this.random.int(0, this.groups.length - 1);
      entries.push({ content: { group: this.groups[group]!, counter: this.nextCounter[group]!++ }, attempt: "first" });
    }
    if (this.random.chance(0.1)) {
      const repeat = this.repeatable();
      if (repeat !== undefined) entries.splice(this.random.int(0, entries.length), 0, repeat);
    }
    // The same message twice in one batch: the second is a duplicate of the first.
    if (this.random.chance(0.05)) entries.push({ content: entries[0]!.content, attempt: "repeat" });
    return entries;
  }

  /** A recently acknowledged message, well inside its deduplication window, to send again. */
  private repeatable(): FifoEntry | undefined {
    const pool = this.acknowledged.slice(-repeatPool);
    if (pool.length === 0) return undefined;
    const { content, firstStart } = pool[this.random.int(0, pool.length - 1)]!;
    return Date.now() - firstStart < repeatableForMs ? { content, attempt: "repeat" } : undefined;
  }
}
