import { createHash } from "node:crypto";
import type { ClassicLevel } from "classic-level";
import type { HoldshelfServer } from "../../src/server/holdshelf-server.js";
import { dataIdOfKey, dataSpaces, queueRange } from "../../src/store/key-layout.js";
import { decodeQueueRecord } from "../../src/store/value-codecs.js";

/**
 * A fingerprint of everything a broker holds: a hash of every key and value
 * in its LevelDB (so a changed body, attribute, checkpoint, lease deadline or
 * queue record shows), and each queue's configuration and message total as
 * the broker serves them. Counts are summed because messages move between
 * visible, delayed and in flight with time alone, without any write. Data
 * of purged or deleted queues is left out: it is already unreachable, and
 * the store frees it in the background after the call answered.
 */
export async function brokerSnapshot(server: HoldshelfServer): Promise<string> {
  // The store keeps its database private; tests read it directly to see
  // every stored byte rather than what the broker's API chooses to show.
  const db = (server.store as unknown as { db: ClassicLevel<Buffer, Buffer> }).db;
  const live = new Set<number>();
  for await (const value of db.values(queueRange())) live.add(decodeQueueRecord(value).dataId);
  const hash = createHash("sha256");
  let entries = 0;
  for await (const [key, value] of db.iterator()) {
    if ((dataSpaces as readonly number[]).includes(key[0]!) && !live.has(dataIdOfKey(key))) continue;
    hash.update(`${key.length}:`).update(key).update(`${value.length}:`).update(value);
    entries++;
  }
  const queues = server.broker.allQueues().map((q) => ({
    name: q.name,
    config: q.config,
    messages: q.counts.visible + q.counts.inFlight + q.counts.delayed,
    deadLetterSources: q.deadLetterSourceQueues,
  }));
  return JSON.stringify({ entries, store: hash.digest("hex"), queues });
}
