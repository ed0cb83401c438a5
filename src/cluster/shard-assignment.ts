import { createHash } from "node:crypto";

/**
 * Which live member each shard belongs with: rendezvous (highest random
 * weight) hashing with a cap of ceil(shards / members) each. Every broker
 * computes the same answer from the same member list without asking anyone,
 * and a member that joins or leaves moves few shards besides the ones it
 * wins or held. The cap keeps the split even: plain rendezvous hashing gave
 * one of three members 55 of 128 shards.
 *
 * All (shard, member) pairs are taken in descending weight; each goes
 * through if its shard is still unassigned and its member under the cap.
 */
export function assignShards(memberIds: readonly string[], shardCount: number): string[] {
  if (memberIds.length === 0) return [];
  const key = `${shardCount}\n${memberIds.join("\n")}`;
  if (key === lastAssignment.key) return lastAssignment.owners;
  const pairs: { weight: number; shard: number; member: number }[] = [];
  memberIds.forEach((id, member) => {
    for (let shard = 0; shard < shardCount; shard++) {
      const weight = createHash("sha256").update(`${id}\n${shard}`, "utf8").digest().readUInt32BE(0);
      pairs.push({ weight, shard, member });
    }
  });
  // Ties (rare) go to the smaller node id, so every broker breaks them alike.
  pairs.sort((x, y) => y.weight - x.weight || (memberIds[x.member]! < memberIds[y.member]! ? -1 : 1));
  const cap = Math.ceil(shardCount / memberIds.length);
  const load = new Array<number>(memberIds.length).fill(0);
  const owners = new Array<string | undefined>(shardCount).fill(undefined);
  for (const { shard, member } of pairs) {
    if (owners[shard] !== undefined || load[member]! >= cap) continue;
    owners[shard] = memberIds[member]!;
    load[member]!++;
  }
  lastAssignment = { key, owners: owners as string[] };
  return lastAssignment.owners;
}

// Members change rarely and a broker asks every 200 ms: the last answer is kept.
let lastAssignment: { key: string; owners: string[] } = { key: "", owners: [] };

/** What one balancing step does: the shards to claim, and the held ones to hand over. */
export interface ShardMovesPlan {
  readonly claim: number[];
  readonly release: number[];
}

/**
 * The moves that bring this broker's shards to its assignment among the
 * live members of `view`: claim assigned shards nobody live holds (free, or
 * held by a member that died or froze), and release held shards assigned to
 * another live member, which claims them on its next step. This broker
 * counts itself live whatever its heartbeat says: it is running this.
 */
export function planShardMoves(
  view: { readonly members: ReadonlyMap<string, string>; readonly owners: readonly (string | undefined)[] },
  selfId: string,
  holds: (shard: number) => boolean,
): ShardMovesPlan {
  const memberIds = [...new Set([...view.members.keys(), selfId])].sort();
  const assigned = assignShards(memberIds, view.owners.length);
  const claim: number[] = [];
  const release: number[] = [];
  assigned.forEach((member, shard) => {
    const owner = view.owners[shard];
    if (member === selfId) {
      if (!holds(shard) && (owner === undefined || owner === selfId || !view.members.has(owner))) claim.push(shard);
    } else if (holds(shard)) {
      release.push(shard);
    }
  });
  return { claim, release };
}
