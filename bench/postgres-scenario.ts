/**
 * The PostgreSQL server of a scenario that stores on one (11 and 12): found
 * where Debian installs it or the scenario skipped with a row saying so,
 * started with synchronous_commit per --durability, and stopped after.
 */
import { postgresBinDir, startPostgresServer, type PostgresServerChild } from "./postgres-server-child.js";
import { skippedRow, type ScenarioContext, type ScenarioResult } from "./scenario.js";

/** Debian's directory of PostgreSQL's binaries, or the one row of a scenario skipped for want of them. */
export function findPostgres(
  context: ScenarioContext,
  label: string,
  rowName: string,
): { binDir: string } | { skipped: ScenarioResult[] } {
  const binDir = postgresBinDir();
  if (binDir !== undefined) return { binDir };
  context.log(`${label}: skipped, PostgreSQL is not installed`);
  return { skipped: [skippedRow(rowName, "PostgreSQL is not installed (Debian: apt-get install postgresql)")] };
}

/**
 * Starts a PostgreSQL server (synchronous_commit on with --durability fsync,
 * off with os, as the brokers' durability), runs `work` on it, and stops it
 * however `work` ends: stop the brokers on it first, or they exit failing writes.
 */
export async function withPostgresServer<T>(
  context: ScenarioContext,
  label: string,
  binDir: string,
  work: (server: PostgresServerChild) => Promise<T>,
): Promise<T> {
  context.log(`${label}: starting a PostgreSQL server`);
  const server = await startPostgresServer({ binDir, synchronousCommit: context.durability === "fsync" });
  try {
    return await work(server);
  } finally {
    context.log(`${label}: stopping the PostgreSQL server`);
    await server.stop();
  }
}
