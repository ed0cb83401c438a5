import { setTimeout as sleep } from "node:timers/promises";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { callOptions, type Epoch } from "./crash-epoch.js";
import { JOBS, MAX_DELAY_MS, TASKS } from "./crash-queues.js";
import type { Ledger, Outcome, Wire } from "./ledger.js";
import { makeBody } from "./message-bodies.js";
import type { SeededRandom } from "./seeded-random.js";

/** One message a producer sends: the uid its body carries, and an optional delay. */
export interface SendEntry {
  readonly uid: string;
  readonly body: Buffer;
  readonly delayMs: number | undefined;
}

/** How a producer sends over one wire. */
export interface SendCalls {
  readonly wire: Wire;
  /**
   * Sends 1 to 10 entries to one queue (a single send for one, a batch
   * otherwise); resolves with each entry's message id, or the reason the
   * broker refused that entry alone, in entry order (undefined where the
   * answer does not tell); throws when the call fails as a whole.
   */
  send(
    epoch: Epoch,
    queue: string,
    entries: readonly SendEntry[],
  ): Promise<({ messageId: string } | { reason: string } | undefined)[]>;
}

/** Sends over gRPC: Send, or SendBatch (all or nothing). */
export const grpcSendCalls: SendCalls = {
  wire: "grpc",
  async send(epoch, queue, entries) {
    const fields = (entry: SendEntry) => ({
      body: entry.body,
      ...(entry.delayMs === undefined ? {} : { delay: durationFromMs(entry.delayMs) }),
    });
    if (entries.length === 1)
      return [{ messageId: (await epoch.rpc.send({ queue, ...fields(entries[0]!) }, callOptions())).messageId }];
    const { messageIds } = await epoch.rpc.sendBatch({ queue, entries: entries.map(fields) }, callOptions());
    return messageIds.map((messageId) => ({ messageId }));
  },
};

/** Sends unique messages to JOBS and TASKS, singly and in batches, over one wire, recording each one. */
export class Producer {
  private counter = 0;

  constructor(
    private readonly ledger: Ledger,
    private readonly random: SeededRandom,
    private readonly uidPrefix: string,
    private readonly calls: SendCalls,
  ) {}

  /** Sends until the epoch's kill begins. */
  async run(epoch: Epoch): Promise<void> {
    const wire = this.calls.wire;
    while (!epoch.killing) {
      const queue = this.random.chance(0.6) ? JOBS : TASKS;
      const count = this.random.chance(0.5) ? 1 : this.random.int(2, 10);
      const entries = Array.from({ length: count }, () => {
        const uid = `${this.uidPrefix}-${this.counter++}`;
        const poison = queue === JOBS && this.random.chance(0.2);
        const delayMs = this.random.chance(0.1) ? this.random.int(50, MAX_DELAY_MS) : undefined;
        return { uid, body: makeBody({ uid, poison }), delayMs };
      });
      const what = `Send${count === 1 ? "" : "Batch"} to ${queue} over ${wire}`;
      const start = Date.now();
      let results: { outcome: Outcome; messageId: string | undefined }[];
      try {
        const answers = await this.calls.send(epoch, queue, entries);
        results = entries.map((_, i) => {
          const answer = answers[i];
          if (answer === undefined) {
            // An answer without this entry says nothing of what happened to it.
            this.ledger.unexpected.push(`${what}: no result for entry ${i}`);
            return { outcome: "unknown", messageId: undefined };
          }
          if ("messageId" in answer) return { outcome: "ok", messageId: answer.messageId };
          this.ledger.entryRejected(answer.reason, what);
          return { outcome: "rejected", messageId: undefined };
        });
      } catch (error) {
        const { outcome } = this.ledger.failure(error, what, epoch.killing);
        results = entries.map(() => ({ outcome, messageId: undefined }));
      }
      const end = Date.now();
      entries.forEach((entry, i) => {
        this.ledger.sends.push({ uid: entry.uid, queue, start, end, ...results[i]!, wire });
      });
      await sleep(this.random.int(10, 40));
    }
  }
}
