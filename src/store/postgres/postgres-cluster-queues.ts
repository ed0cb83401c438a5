import { setTimeout as sleep } from "node:timers/promises";
import type pg from "pg";
import type { ClusterQueues } from "../cluster-queues.js";
import { decodeQueueRecord } from "../value-codecs.js";
import { postgresUnavailable } from "./postgres-unavailable.js";

// The owner takes its inbox in within milliseconds of the commit's notification; a shard with no
// owner (moving) keeps its messages there until one claims it, which is not worth holding a call for.
const takeInWaitMs = 3000;
const takeInPollMs = 5;

/**
 * ClusterQueues from the queues table: existence and dead-letter sources of
 * queues on shards this broker does not serve. The exact answers are read
 * when asked (a redrive policy set, a queue deleted); the one used to
 * describe queues is refreshed by `refresh`, which balancing calls.
 */
export class PostgresClusterQueues implements ClusterQueues {
  private known = new Map<string, string[]>();

  constructor(
    private readonly pool: () => pg.Pool,
    /** Whether this broker serves the shard: its own queues are its registry's to answer for. */
    private readonly serves: (shard: number) => boolean,
    private readonly shardOf: (queue: string) => number,
  ) {}

  async existsElsewhere(name: string): Promise<boolean> {
    const { rows } = await this.query<{ shard: number }>("SELECT shard FROM holdshelf_queues WHERE name = $1", [name]);
    return rows.length > 0 && !this.serves(rows[0]!.shard);
  }

  async fifoElsewhere(name: string): Promise<boolean | undefined> {
    const { rows } = await this.query<{ shard: number; record: Buffer }>(
      "SELECT shard, record FROM holdshelf_queues WHERE name = $1",
      [name],
    );
    if (rows.length === 0 || this.serves(rows[0]!.shard)) return undefined;
    return decodeQueueRecord(rows[0]!.record).config.fifo !== undefined;
  }

  async deadLetterSourcesElsewhere(name: string): Promise<string[]> {
    const { rows } = await this.query<{ name: string; shard: number }>(
      "SELECT name, shard FROM holdshelf_queues WHERE dead_letter_queue = $1 ORDER BY name",
      [name],
    );
    return rows.filter((row) => !this.serves(row.shard)).map((row) => row.name);
  }

  knownDeadLetterSourcesElsewhere(): ReadonlyMap<string, readonly string[]> {
    return this.known;
  }

  async takenIn(queue: string, messageIds: readonly string[]): Promise<void> {
    const giveUpAt = performance.now() + takeInWaitMs;
    while (performance.now() < giveUpAt) {
      const { rows } = await this.query<{ waiting: boolean }>(
        "SELECT EXISTS (SELECT 1 FROM holdshelf_inbox WHERE shard = $1 AND queue = $2 AND id = ANY($3::uuid[])) AS waiting",
        [this.shardOf(queue), queue, messageIds],
      );
      if (!rows[0]!.waiting) return;
      await sleep(takeInPollMs);
    }
  }

  /** Reads every redrive policy of the cluster again (the queues that have one: few, and indexed). */
  async refresh(): Promise<void> {
    const { rows } = await this.query<{ name: string; dead_letter_queue: string; shard: number }>(
      "SELECT name, dead_letter_queue, shard FROM holdshelf_queues WHERE dead_letter_queue <> '' ORDER BY name",
    );
    const known = new Map<string, string[]>();
    for (const row of rows) {
      if (this.serves(row.shard)) continue;
      known.set(row.dead_letter_queue, [...(known.get(row.dead_letter_queue) ?? []), row.name]);
    }
    this.known = known;
  }

  /**
   * Runs a read; a failure is STORAGE_UNAVAILABLE, as the store's own reads
   * are, so that a database failing over is logged once by the store, not
   * again by each background task that was reading (a dead-letter move
   * waiting for its inbox to be taken in).
   */
  private async query<Row extends pg.QueryResultRow>(
    text: string,
    values: unknown[] = [],
  ): Promise<pg.QueryResult<Row>> {
    try {
      return await this.pool().query<Row>(text, values);
    } catch (error) {
      throw postgresUnavailable(error, "read");
    }
  }
}
