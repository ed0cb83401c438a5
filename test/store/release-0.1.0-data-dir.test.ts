// A data directory written by release 0.1.0 (test/fixtures/release-0.1.0,
// made by its own code) opens in today's broker with everything in it, and
// is stamped with its format; one stamped newer than this holdshelf reads is
// refused with its contents untouched.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { QueueClient } from "../../src/client/queue-client.js";
import { startHoldshelfServer } from "../../src/server/holdshelf-server.js";
import { ClassicLevelStore } from "../../src/store/classic-level-store.js";
import { formatVersionKey, levelFormatVersion } from "../../src/store/format-version.js";
import { FormatTooNewError } from "../../src/store/store-open-error.js";
import { FakeClock } from "../support/fake-clock.js";
import { levelContents, putLevelKey } from "../support/level-contents.js";
import { expectReleaseData, readFixture, unpackDataDir } from "../support/release-0.1.0.js";
import { makeTempDir } from "../support/temp-dir.js";

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
    expect((await levelContents(dataDir)).map(([key]) => key)).not.toContain(keyOf);
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
    expect(new Map(await levelContents(dataDir)).get(keyOf)).toBe("00000001");
  });

  it("is refused, with nothing changed, once stamped with a format newer than this holdshelf reads", async () => {
    const newer = Buffer.alloc(4);
    newer.writeUInt32BE(levelFormatVersion + 1);
    await putLevelKey(dataDir, formatVersionKey, newer);
    const before = await levelContents(dataDir);
    const refused = await ClassicLevelStore.open({ dataDir }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(FormatTooNewError);
    expect(refused).toMatchObject({ code: "DATA_FORMAT_TOO_NEW", found: 2, known: 1 });
    expect((refused as Error).message).toBe(
      `data directory ${dataDir} is in holdshelf data format 2, newer than data format 1, the newest this holdshelf reads: ` +
        "run a holdshelf release that reads data format 2 (docs/upgrading.md). Nothing was changed",
    );
    // The same keys and values, and the directory free again (levelContents opens it).
    expect(await levelContents(dataDir)).toEqual(before);
  });
});
