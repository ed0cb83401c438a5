import { randomBytes } from "node:crypto";
import { mkdir, readdir, rename, rm, rmdir, stat } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { readBackup, type BackupEntry, type BackupHeader } from "./backup-format.js";
import { checkRestoredFormat, formatVersionKey } from "./format-version.js";
import { createLevelDatabase, type LevelDatabase } from "./level-batch.js";
import { syncDirectory } from "./sync-directory.js";

/** Why a restore was refused: nothing was written. */
export class RestoreError extends Error {
  override readonly name = "RestoreError";
}

/** What a restore brought back. */
export interface RestoredBackup {
  readonly records: number;
  /** When the backup's snapshot was taken (ms since the epoch). */
  readonly snapshotTime: number;
}

/**
 * Brings a backup file back into `dataDir`, which must be absent or an empty
 * directory, for a broker that is not running. The whole file is read and
 * checked first (BackupFormatError if it is not a whole backup); then it is
 * written into a new directory beside `dataDir`, synced, and renamed into
 * place, so a failure at any point leaves `dataDir` as it was. `readFile`
 * opens the file again at each call: it is read twice.
 */
export async function restoreBackup(
  readFile: () => AsyncIterable<Uint8Array>,
  dataDir: string,
): Promise<RestoredBackup> {
  const target = resolve(dataDir);
  const existed = await checkEmptyTarget(target);
  const { records, snapshotTime, dataFormat } = await readWholeBackup(readFile());
  checkRestoredFormat(dataFormat, "the backup's data directory");
  const scratch = join(dirname(target), `.${basename(target)}.restoring-${randomBytes(6).toString("hex")}`);
  await mkdir(dirname(target), { recursive: true });
  try {
    await writeDatabase(scratch, readFile());
    // Checked again: a broker started on the directory meanwhile must not see it swapped away.
    if (existed) {
      await checkEmptyTarget(target);
      await rmdir(target);
    }
    await rename(scratch, target);
    await syncDirectory(dirname(target));
  } catch (error) {
    await rm(scratch, { recursive: true, force: true });
    throw error;
  }
  return { records, snapshotTime };
}

/** Reads a backup whole, checking its framing and checksum; keeps its data directory's format-version entry. */
async function readWholeBackup(
  chunks: AsyncIterable<Uint8Array>,
): Promise<BackupHeader & { readonly records: number; readonly dataFormat: Uint8Array | undefined }> {
  let header: BackupHeader | undefined;
  let records = 0;
  let dataFormat: Uint8Array | undefined;
  for await (const entries of readBackup(chunks, (read) => {
    header = read;
  })) {
    records += entries.length;
    for (const [key, value] of entries) if (formatVersionKey.equals(key)) dataFormat = value;
  }
  // readBackup has thrown unless it read a header.
  return { ...header!, records, dataFormat };
}

/** Whether `target` exists (an empty directory); throws RestoreError if it is anything else. */
async function checkEmptyTarget(target: string): Promise<boolean> {
  const found = await stat(target).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return undefined;
    throw error;
  });
  if (found === undefined) return false;
  if (!found.isDirectory()) throw new RestoreError(`${target} is not a directory`);
  if ((await readdir(target)).length > 0) {
    throw new RestoreError(
      `data directory ${target} is not empty: restore into an empty or absent directory, never over a broker's data`,
    );
  }
  return true;
}

/** A new LevelDB in `dir` holding the backup's entries; the last batch is written with sync, which makes the log durable. */
async function writeDatabase(dir: string, chunks: AsyncIterable<Uint8Array>): Promise<void> {
  const db: LevelDatabase = createLevelDatabase(dir);
  await db.open({ createIfMissing: true, errorIfExists: true });
  try {
    let held: BackupEntry[] | undefined;
    for await (const entries of readBackup(chunks)) {
      // One batch behind, so that only the last one waits for an fsync.
      if (held !== undefined) await db.batch(puts(held), { sync: false });
      held = entries;
    }
    await db.batch(held === undefined ? [] : puts(held), { sync: true });
  } finally {
    await db.close();
  }
}

function puts(entries: readonly BackupEntry[]): { type: "put"; key: Buffer; value: Buffer }[] {
  return entries.map(([key, value]) => ({ type: "put", key: Buffer.from(key), value: Buffer.from(value) }));
}
