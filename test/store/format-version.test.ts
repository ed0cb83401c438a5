// The data directory's format version (src/store/format-version.ts): a new
// directory is stamped, an older one is upgraded step by step, each step
// stamped as it ends, and the step lists of both stores reach the format
// this code writes.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  checkLevelFormat,
  formatVersionKey,
  levelFormatUpgrades,
  levelFormatVersion,
  type LevelFormatUpgrade,
} from "../../src/store/format-version.js";
import { metaKey } from "../../src/store/key-layout.js";
import { createLevelDatabase, type LevelDatabase } from "../../src/store/level-batch.js";
import { layoutUpgrades, postgresLayoutVersion } from "../../src/store/postgres/schema-upgrades.js";
import { StoreOpenError } from "../../src/store/store-open-error.js";
import { makeTempDir } from "../support/temp-dir.js";

function version(value: number): Buffer {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(value);
  return bytes;
}

async function stampOf(db: LevelDatabase): Promise<number | undefined> {
  return (await db.get(formatVersionKey))?.readUInt32BE(0);
}

describe("the data directory's format version", () => {
  let dir: Awaited<ReturnType<typeof makeTempDir>>;
  let db: LevelDatabase;
  beforeEach(async () => {
    dir = await makeTempDir();
    db = createLevelDatabase(dir.path);
    await db.open();
  });
  afterEach(async () => {
    await db.close();
    await dir.remove();
  });

  /** A step that records the stamp it found, to show the order and the stamps between steps. */
  function step(to: number, seen: (number | undefined)[]): LevelFormatUpgrade {
    return { to, run: async (upgraded) => void seen.push(await stampOf(upgraded)) };
  }

  it("stamps a new, empty directory with the current format and runs no step", async () => {
    const seen: (number | undefined)[] = [];
    expect(await checkLevelFormat(db, dir.path, { version: 3, upgrades: [step(2, seen), step(3, seen)] })).toBe(3);
    expect(seen).toEqual([]);
    expect(await stampOf(db)).toBe(3);
  });

  it("takes a directory with data but no version for 0.1.0's format 1, and upgrades it from there", async () => {
    await db.put(metaKey("handle-key"), Buffer.alloc(32));
    const seen: (number | undefined)[] = [];
    expect(await checkLevelFormat(db, dir.path, { version: 3, upgrades: [step(2, seen), step(3, seen)] })).toBe(1);
    expect(seen).toEqual([undefined, 2]);
    expect(await stampOf(db)).toBe(3);
  });

  it("runs only the steps after the stamped format, stamping each", async () => {
    await db.put(formatVersionKey, version(2));
    const seen: (number | undefined)[] = [];
    const upgrades = [step(2, seen), step(3, seen), step(4, seen)];
    expect(await checkLevelFormat(db, dir.path, { version: 4, upgrades })).toBe(2);
    expect(seen).toEqual([2, 3]);
    expect(await stampOf(db)).toBe(4);
  });

  it("keeps the stamp of the last step that finished when one fails, and goes on from there next time", async () => {
    await db.put(formatVersionKey, version(1));
    const seen: (number | undefined)[] = [];
    const failing: LevelFormatUpgrade = { to: 3, run: () => Promise.reject(new Error("disk full")) };
    await expect(checkLevelFormat(db, dir.path, { version: 3, upgrades: [step(2, seen), failing] })).rejects.toThrow(
      "disk full",
    );
    expect(await stampOf(db)).toBe(2);
    expect(await checkLevelFormat(db, dir.path, { version: 3, upgrades: [step(2, seen), step(3, seen)] })).toBe(2);
    expect(seen).toEqual([1, 2]);
    expect(await stampOf(db)).toBe(3);
  });

  it("refuses a version it cannot read", async () => {
    await db.put(formatVersionKey, Buffer.of(1));
    await expect(checkLevelFormat(db, dir.path)).rejects.toThrow(
      new StoreOpenError(`data directory ${dir.path} has an unreadable format version (1 bytes)`),
    );
  });

  it("stamps the current format of this code, and leaves a stamped directory as it is", async () => {
    expect(await checkLevelFormat(db, dir.path)).toBe(levelFormatVersion);
    expect(await checkLevelFormat(db, dir.path)).toBe(levelFormatVersion);
    expect(await stampOf(db)).toBe(levelFormatVersion);
  });
});

describe("the upgrade steps", () => {
  it("take each store from its first format to the one this code writes, one format at a time", () => {
    for (const [steps, current] of [
      [levelFormatUpgrades, levelFormatVersion],
      [layoutUpgrades, postgresLayoutVersion],
    ] as const) {
      expect(steps.map((upgrade) => upgrade.to)).toEqual(Array.from({ length: current - 1 }, (_, i) => i + 2));
    }
  });
});
