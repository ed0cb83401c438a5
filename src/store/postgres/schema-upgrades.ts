/**
 * The cluster database's layout version (holdshelf_cluster.layout_version),
 * and the steps that upgrade an older one: the one place to look when a
 * change to postgres-schema.ts or to what brokers store would be misread by
 * a broker of the layout before.
 *
 * Rules (docs/upgrading.md):
 * - A database of a newer layout than `postgresLayoutVersion` is refused
 *   (FormatTooNewError) before any statement writes, so the brokers of the
 *   release that wrote it go on serving it.
 * - An older one is upgraded by the first broker (or `holdshelf cluster
 *   init`) that opens it, in the transaction that creates the tables, so
 *   the steps and the new version commit together or not at all.
 * - Brokers of two releases share a cluster only while they read the same
 *   layout (0.1.0 and 0.2.0: layout 1). A step must therefore also fence
 *   the brokers of the layout before: bump every shard's epoch in the same
 *   transaction, so their commits fail, and they stop at the layout check
 *   when they reconnect to claim again (ShardMembership.reconnect). Stop the
 *   older brokers first all the same.
 *
 * Additions a broker of the layout before handles (a table or column it
 * never reads, made with IF NOT EXISTS in postgres-schema.ts, as the
 * deduplication table was within layout 1) need no new layout.
 */
import type pg from "pg";
import { FormatTooNewError } from "../store-open-error.js";

/** The layout this code writes and reads; every older one is upgraded when a broker opens the database. */
export const postgresLayoutVersion = 1;

/** One upgrade step: changes a database of layout `to - 1` into layout `to`, in the caller's transaction. */
export interface LayoutUpgrade {
  readonly to: number;
  run(client: pg.ClientBase): Promise<void>;
}

/** The steps from layout 1 on, in order; none yet: layout 1 is 0.1.0's. */
export const layoutUpgrades: readonly LayoutUpgrade[] = [];

/** What the layout is checked against; tests pass their own steps. */
export interface PostgresLayout {
  readonly version: number;
  readonly upgrades: readonly LayoutUpgrade[];
}

/** The layouts this code reads and upgrades. */
export const currentLayout: PostgresLayout = { version: postgresLayoutVersion, upgrades: layoutUpgrades };

/**
 * The database's layout, or undefined if it holds no cluster yet; refuses a
 * newer one. Runs before the tables are created or changed.
 */
export async function checkLayout(client: pg.ClientBase, layout: PostgresLayout): Promise<number | undefined> {
  const { rows: tables } = await client.query<{ exists: boolean }>(
    "SELECT to_regclass('holdshelf_cluster') IS NOT NULL AS exists",
  );
  if (!tables[0]!.exists) return undefined;
  const { rows } = await client.query<{ layout_version: number }>("SELECT layout_version FROM holdshelf_cluster");
  const found = rows[0]?.layout_version;
  if (found !== undefined && found > layout.version) {
    throw new FormatTooNewError("the cluster's database", "layout", found, layout.version);
  }
  return found;
}

/** Runs the steps from `found` to the current layout and stamps each, in the caller's transaction. */
export async function upgradeLayout(client: pg.ClientBase, found: number, layout: PostgresLayout): Promise<void> {
  for (const step of layout.upgrades) {
    if (step.to <= found) continue;
    await step.run(client);
    await client.query("UPDATE holdshelf_cluster SET layout_version = $1", [step.to]);
  }
}
