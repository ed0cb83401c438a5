/** What happened to a shard at this broker. */
export type ShardEventKind = "claimed" | "released" | "lost";

/**
 * Why: a claim at "start" (a broker claiming every shard as the one active
 * broker) or to "balance" the shards over the members (the shard was free),
 * a "takeover" (another broker held it, and died or let its lease run out),
 * or "reclaim" (an earlier life of this node held it); a release as a
 * "handover" (assigned to another member) or at "shutdown"; a loss because
 * the shards were "claimed-by-another", the leases "lease-lapsed" unrenewed,
 * or a "storage-failure" (PostgreSQL unreachable, a failed commit or load).
 */
export type ShardEventReason =
  | "start"
  | "balance"
  | "takeover"
  | "reclaim"
  | "handover"
  | "shutdown"
  | "claimed-by-another"
  | "lease-lapsed"
  | "storage-failure";

/** Shards that changed hands at once, as this broker saw it. */
export interface ShardEvent {
  /** Epoch ms of this broker's clock. */
  readonly time: number;
  readonly kind: ShardEventKind;
  readonly shards: readonly number[];
  /** This broker's node id. */
  readonly nodeId: string;
  /** The previous holder of claimed shards, the member released ones go to; undefined when there is none or it is not known. */
  readonly peer: string | undefined;
  readonly reason: ShardEventReason;
}

// Enough for a busy hour of a small cluster's moves, at a few hundred bytes each.
const keptEvents = 200;

/**
 * The latest shard events of this broker, in memory: GetClusterStatus
 * gathers every live member's, so a takeover shows in the console whichever
 * broker serves it. `told` hears of each as it is recorded (the log line and
 * the takeover counter).
 */
export class ShardEventLog {
  private readonly events: ShardEvent[] = [];

  constructor(private readonly told: (event: ShardEvent) => void = () => undefined) {}

  /** Records shards changing hands; nothing for no shards. */
  record(event: ShardEvent): void {
    if (event.shards.length === 0) return;
    this.events.push(event);
    if (this.events.length > keptEvents) this.events.shift();
    this.told(event);
  }

  /** The events kept, newest first. */
  recent(): ShardEvent[] {
    return [...this.events].reverse();
  }
}
