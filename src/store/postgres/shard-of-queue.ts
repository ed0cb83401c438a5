import { createHash } from "node:crypto";

/**
 * The shard a new queue belongs to: a hash of its name, so every broker
 * agrees without asking. It is stored with the queue, so an operator can move
 * a hot queue later without its name deciding forever.
 */
export function shardOfQueue(name: string, shardCount: number): number {
  // SHA-256 rather than a fast hash: computed once per queue creation, and
  // the same in every language that may need to place queues (tools, clients).
  return createHash("sha256").update(name, "utf8").digest().readUInt32BE(0) % shardCount;
}
