/**
 * The data directory's format version, and the steps that upgrade an older
 * one: the one place to look when the layout of key-layout.ts or of
 * value-codecs.ts changes in a way an older holdshelf would misread.
 *
 * Rules (docs/upgrading.md):
 * - A directory stamped with a newer format than `levelFormatVersion` is
 *   refused (FormatTooNewError) before anything is written, so the release
 *   that wrote it can still open it.
 * - An older one is upgraded in place at open, one step at a time, the
 *   version stamped after each step. A step must be safe to run again: a
 *   crash may cut it short before its stamp.
 * - A directory without the key: written by 0.1.0 (format 1, which wrote no
 *   version) if it holds anything, else new (stamped with the current format).
 *
 * Adding a format: raise `levelFormatVersion` and append the step that takes
 * a directory there, with a test that opens a directory of the format before.
 * Additions an older release reads correctly (or refuses by itself, like a
 * value's own layout byte) need no new format.
 */
import { metaKey } from "./key-layout.js";
import type { LevelDatabase } from "./level-batch.js";
import { FormatTooNewError, StoreOpenError } from "./store-open-error.js";

/** The format this code writes and reads; every older one is upgraded at open. */
export const levelFormatVersion = 1;

/** One upgrade step: rewrites a directory of format `to - 1` into format `to`. */
export interface LevelFormatUpgrade {
  readonly to: number;
  run(db: LevelDatabase): Promise<void>;
}

/** The steps from format 1 on, in order; none yet: format 1 is 0.1.0's layout. */
export const levelFormatUpgrades: readonly LevelFormatUpgrade[] = [];

/** Where the version is kept: a setting of the meta space, so a backup copies it with the data. */
export const formatVersionKey = metaKey("format-version");

/** The format 0.1.0 wrote, without a version key. */
const formatOfRelease010 = 1;

/** What checkLevelFormat checks against; tests pass their own steps. */
export interface LevelFormat {
  readonly version: number;
  readonly upgrades: readonly LevelFormatUpgrade[];
}

/**
 * Checks an opened data directory's format before anything else reads or
 * writes it: refuses a newer one, upgrades an older one in place, stamps
 * one that has no version yet. Resolves to the format it found.
 */
export async function checkLevelFormat(
  db: LevelDatabase,
  dataDir: string,
  format: LevelFormat = { version: levelFormatVersion, upgrades: levelFormatUpgrades },
): Promise<number> {
  const stored = await db.get(formatVersionKey);
  const found = stored === undefined ? await unstampedFormat(db, format.version) : readVersion(stored, dataDir);
  if (found > format.version)
    throw new FormatTooNewError(`data directory ${dataDir}`, "data format", found, format.version);
  const steps = format.upgrades.filter((step) => step.to > found);
  for (const step of steps) {
    await step.run(db);
    await stamp(db, step.to);
  }
  if (stored === undefined && steps.length === 0) await stamp(db, found);
  return found;
}

/** The format of a directory without a version key: 0.1.0's if it holds anything, else (a new one) the current. */
async function unstampedFormat(db: LevelDatabase, current: number): Promise<number> {
  const [anyKey] = await db.keys({ limit: 1 }).all();
  return anyKey === undefined ? current : formatOfRelease010;
}

/**
 * Refuses a backup whose data directory was in a format newer than this
 * holdshelf reads, before a restore writes anything: restored, it would only
 * be refused at the broker's start. `value` is the backup's format-version
 * entry, undefined for a backup without one (an older format, upgraded at
 * the broker's start).
 */
export function checkRestoredFormat(value: Uint8Array | undefined, source: string): void {
  if (value === undefined) return;
  const found = readVersion(Buffer.from(value), source);
  if (found > levelFormatVersion) throw new FormatTooNewError(source, "data format", found, levelFormatVersion);
}

function readVersion(value: Buffer, dataDir: string): number {
  if (value.length !== 4) {
    throw new StoreOpenError(`data directory ${dataDir} has an unreadable format version (${value.length} bytes)`);
  }
  return value.readUInt32BE(0);
}

async function stamp(db: LevelDatabase, version: number): Promise<void> {
  const value = Buffer.allocUnsafe(4);
  value.writeUInt32BE(version, 0);
  await db.put(formatVersionKey, value, { sync: true });
}
