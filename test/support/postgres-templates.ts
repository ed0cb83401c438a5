// Vitest global setup (vitest.config.ts), once per project: a directory
// where the project's first PostgreSQL server leaves a fresh initdb for the
// others to copy (postgres-server.ts, which declares the provided name),
// removed when the project ends.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";

/** Makes the project's template directory and returns its removal. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = await mkdtemp(join(tmpdir(), "holdshelf-pg-template-"));
  project.provide("postgresTemplates", dir);
  return () => rm(dir, { recursive: true, force: true });
}
