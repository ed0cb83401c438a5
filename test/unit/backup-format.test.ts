// The backup file's format (src/store/backup-format.ts): what the encoder
// writes, the reader reads back whatever the chunking, and every cut, changed
// byte, trailing byte or foreign header is refused.
import { describe, expect, it } from "vitest";
import {
  BackupEncoder,
  BackupFormatError,
  readBackup,
  verifyBackup,
  type BackupEntry,
} from "../../src/store/backup-format.js";

const snapshotTime = Date.UTC(2026, 11, 5, 3, 0, 0);

const entries: BackupEntry[] = Array.from({ length: 40 }, (_, i) => [
  Buffer.from(`key-${String(i).padStart(3, "0")}`),
  Buffer.alloc(i * 7, i),
]);

/** A whole backup of `entries`, their records written in parts of 16. */
function backupBytes(): Buffer {
  const encoder = new BackupEncoder();
  const parts = [encoder.header(snapshotTime)];
  for (let i = 0; i < entries.length; i += 16) parts.push(encoder.records(entries.slice(i, i + 16)));
  parts.push(encoder.end());
  return Buffer.concat(parts);
}

/** `bytes` in chunks of `size`. */
async function* chunked(bytes: Buffer, size: number): AsyncGenerator<Uint8Array> {
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
}

async function readAll(bytes: Buffer, size: number): Promise<BackupEntry[]> {
  const read: BackupEntry[] = [];
  for await (const batch of readBackup(chunked(bytes, size))) read.push(...batch);
  return read;
}

describe("the backup format", () => {
  it("reads back every entry and the header, whatever the chunk size", async () => {
    const bytes = backupBytes();
    for (const size of [1, 7, 64, 1000, bytes.length]) {
      const read = await readAll(bytes, size);
      expect(read.map(([key, value]) => [Buffer.from(key), Buffer.from(value)])).toEqual(entries);
    }
    expect(await verifyBackup(chunked(bytes, 100))).toEqual({ formatVersion: 1, snapshotTime, records: 40 });
  });

  it("refuses a backup cut at any byte", async () => {
    const bytes = backupBytes();
    for (let length = 0; length < bytes.length; length += 13) {
      await expect(verifyBackup(chunked(bytes.subarray(0, length), 50)), `cut at ${length}`).rejects.toThrow(
        /cut short|corrupt/,
      );
    }
    await expect(verifyBackup(chunked(bytes.subarray(0, bytes.length - 1), 50))).rejects.toBeInstanceOf(
      BackupFormatError,
    );
  });

  it("refuses a backup with any byte changed", async () => {
    const bytes = backupBytes();
    for (let at = 20; at < bytes.length; at += 11) {
      const changed = Buffer.from(bytes);
      changed[at] = changed[at]! ^ 0x01;
      await expect(verifyBackup(chunked(changed, 50)), `byte ${at} changed`).rejects.toBeInstanceOf(BackupFormatError);
    }
  });

  it("refuses bytes after the end", async () => {
    const bytes = Buffer.concat([backupBytes(), Buffer.of(0)]);
    await expect(verifyBackup(chunked(bytes, 50))).rejects.toThrow(/after its end/);
    await expect(verifyBackup(chunked(bytes, bytes.length))).rejects.toThrow(/after its end/);
  });

  it("refuses a file that is not a backup, and a format version it does not know", async () => {
    await expect(verifyBackup(chunked(Buffer.from("SQLite format 3\0 and more bytes"), 8))).rejects.toThrow(
      /not a holdshelf backup/,
    );
    const newer = backupBytes();
    newer.writeUInt32BE(2, 8);
    await expect(verifyBackup(chunked(newer, 64))).rejects.toThrow(/format version is 2/);
  });
});
