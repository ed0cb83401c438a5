import { setTimeout as sleep } from "node:timers/promises";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { callOptions, type Epoch } from "./crash-epoch.js";
import { JOBS, MAX_DELAY_MS, TASKS } from "./crash-queues.js";
import type { Ledger, Outcome } from "./ledger.js";
import { makeBody } from "./message-bodies.js";
import type { SeededRandom } from "./seeded-random.js";

/** Sends unique messages to JOBS and TASKS with Send and SendBatch, recording each one. */
export class Producer {
  private counter = 0;

  constructor(
    private readonly ledger: Ledger,
    private readonly random: SeededRandom,
    private readonly uidPrefix: string,
  ) {}

  /** Sends until the epoch's kill begins. */
  async run(epoch: Epoch): Promise<void> {
    while (!epoch.killing) {
      const queue = this.random.chance(0.6) ? JOBS : TASKS;
      const count = this.random.chance(0.5) ? 1 : this.random.int(2, 10);
      const entries = Array.from({ length: count }, () => {
        const uid = `${this.uidPrefix}-${this.counter++}`;
        const poison = queue === JOBS && this.random.chance(0.2);
        const delayMs = this.random.chance(0.1) ? this.random.int(50, MAX_DELAY_MS) : undefined;
        return { uid, body: makeBody({ uid, poison }), delayMs };
      });
      const start = Date.now();
      let outcome: Outcome = "ok";
      let ids: string[] = [];
      try {
        if (count === 1) {
          const entry = entries[0]!;
          const request = { queue, body: entry.body, ...(entry.delayMs === undefined ? {} : { delay: durationFromMs(entry.delayMs) }) };
          ids = [(await epoch.rpc.send(request, callOptions())).messageId];
        } else {
          const batch = entries.map((e) => ({ body: e.body, ...(e.delayMs === undefined ? {} : { delay: durationFromMs(e.delayMs) }) }));
          ids = (await epoch.rpc.sendBatch({ queue, entries: batch }, callOptions())).messageIds;
        }
      } catch (error) {
        outcome = this.ledger.failure(error, `Send to ${queue}`, epoch.killing).outcome;
      }
      const end = Date.now();
      entries.forEach((entry, i) => this.ledger.sends.push({ uid: entry.uid, queue, start, end, outcome, messageId: ids[i] }));
      await sleep(this.random.int(10, 40));
    }
  }
}
