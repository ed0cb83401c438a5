// Every shard with its owner and epoch, as a compact grid (a cluster has 64
// shards by default): one cell a shard, its owner written in it and told
// apart by a hue as well, so the owners' shares show at a glance.
import type { ShardOwner } from "./overview-types.js";

// Owner hues: a shard's look, beside its owner's name written in the cell.
const ownerLooks = 6;

/** The shards in order, each cell "shard · owner · epoch". */
export function ShardGrid({ shards }: { shards: readonly ShardOwner[] }) {
  const owners = [...new Set(shards.map((shard) => shard.owner).filter((owner) => owner !== null))].sort();
  const lookOf = (owner: string | null) =>
    owner === null ? "shard-unowned" : `shard-owner-${(owners.indexOf(owner) % ownerLooks) + 1}`;
  return (
    <>
      <ul class="owner-key">
        {owners.map((owner) => (
          <li key={owner}>
            <span class={`owner-swatch ${lookOf(owner)}`} aria-hidden="true" />
            {owner}: {shards.filter((shard) => shard.owner === owner).length} shards
          </li>
        ))}
      </ul>
      <ol class="shard-grid" aria-label="Shards with their owner and epoch">
        {shards.map((shard) => (
          <li key={shard.shard} class={lookOf(shard.owner)} data-testid={`shard-${shard.shard}`}>
            <span class="shard-number">
              <span class="visually-hidden">Shard </span>
              {shard.shard}
            </span>
            <span class="shard-owner">{shard.owner ?? "unowned"}</span>
            <span class="shard-epoch">epoch {shard.epoch}</span>
          </li>
        ))}
      </ol>
    </>
  );
}
