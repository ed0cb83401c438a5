// A data directory written by release 0.1.0 (test/fixtures/release-0.1.0,
// made by its own code) opens in today's broker with everything in it, and
// is stamped with its format; one stamped newer than this holdshelf reads is
// refused with its contents untouched.
import { ClassicLevel } from "classic-level";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { QueueClient } from "../../src/client/queue-client.js";
import { startHoldshelfServer } from "../../src/server/holdshelf-server.js";
import { ClassicLevelStore } from "../../src/store/classic-level-store.js";
import { formatVersionKey, levelFormatVersion } from "../../src/store/format-version.js";
import { FormatTooNewError } from "../../src/store/store-open-error.js";
import { FakeClock } from "../support/fake-clock.js";
import { expectReleaseData, readFixture, unpackDataDir } from "../support/release-0.1.0.js";
import { makeTempDir } from "../support/temp-dir.js";

/** Every key and value of a data directory, in key order, as hex. */
async function contents(dataDir: string): Promise<[string, string][]> {
  const db = new ClassicLevel<Buffer, Buffer>(dataDir, { keyEncoding: "buffer", valueEncoding: "buffer" });
  await db.open();
  try {
    return (await db.iterator().all()).map(([key, value]) => [key.toString("hex"), value.toString("hex")] as const);
  } finally {
    await db.close();
  }
}

/** Writes a setting straight into a data directory, as another release would. */
async function putSetting(dataDir: string, key: Buffer, value: Buffer): Promise<void> {
  const db = new ClassicLevel<Buffer, Buffer>(dataDir, { keyEncoding: "buffer", valueEncoding: "buffer" });
  await db.open();
  await db.put(key, value);
  await db.close();
}

describe("a data directory of release 0.1.0", () => {
  let dir: Awaited<ReturnType<typeof makeTempDir>>;
  let dataDir: string;
  beforeEach(async () => {
    dir = await makeTempDir();
    dataDir = await unpackDataDir(dir.path);
  });
  afterEach(async () => {
    await dir.remove();
  });

  it("opens with every queue, message, lease, move task and deduplication id, and is stamped format 1", async () => {
    const fixture = await readFixture("leveldb");
    const keyOf = formatVersionKey.toString("hex");
    expect((await contents(dataDir)).map(([key]) => key)).not.toContain(keyOf);
    const clock = new FakeClock(fixture.madeAt);
    const server = await startHoldshelfServer({ dataDir, listen: "127.0.0.1:0", clock });
    const client = new QueueClient(server.address);
    try {
      await expectReleaseData(client, fixture, clock);
    } finally {
      client.close();
      await server.shutdown();
    }
    expect(levelFormatVersion).toBe(1);
    expect(new Map(await contents(dataDir)).get(keyOf)).toBe("00000001");
  });

  it("is refused, with nothing changed, once stamped with a format newer than this holdshelf reads", async () => {
    const newer = Buffer.alloc(4);
    newer.writeUInt32BE(levelFormatVersion + 1);
    await putSetting(dataDir, formatVersionKey, newer);
    const before = await contents(dataDir);
    const refused = await ClassicLevelStore.open({ dataDir }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(FormatTooNewError);
    expect(refused).toMatchObject({ code: "DATA_FORMAT_TOO_NEW", found: 2, known: 1 });
    expect((refused as Error).message).toBe(
      `data directory ${dataDir} is in holdshelf data format 2, newer than format 1, the newest this holdshelf reads: ` +
        "run a holdshelf release that reads format 2 (docs/upgrading.md). Nothing was changed",
    );
    // The same bytes, and the directory free again (contents opens it).
    expect(await contents(dataDir)).toEqual(before);
  });
});
