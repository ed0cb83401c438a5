import { createHash, type Hash } from "node:crypto";

// The backup file (docs/operations.md#backup-file-format), all integers big-endian:
//   header  "HSBACKUP" | u32 format version | u64 snapshot time (ms since the epoch)
//   record  0x01 | u32 key length | u32 value length | key | value     (one per key, in key order)
//   end     0x00 | u64 record count | SHA-256 of every byte before it
// The end's digest covers the header, the records, the tag and the count, so
// a file cut short, with bytes changed or with bytes after the end is refused.

/** The file's first bytes. */
export const backupMagic = Buffer.from("HSBACKUP", "latin1");
/** The version of the layout above; a reader refuses any other. */
export const backupFormatVersion = 1;

const headerBytes = backupMagic.length + 4 + 8;
const recordTag = 0x01;
const endTag = 0x00;
const recordHeadBytes = 1 + 4 + 4;
const endBytes = 1 + 8 + 32;
// No key or value of the store comes near this: a length past it is a corrupt file, not a giant allocation.
const maxFieldBytes = 256 * 1024 * 1024;

/** A key and its value, as stored. */
export type BackupEntry = readonly [key: Uint8Array, value: Uint8Array];

/** Why a backup file cannot be read: its bytes are not a whole backup of a format this holdshelf knows. */
export class BackupFormatError extends Error {
  override readonly name = "BackupFormatError";
}

/** Writes the backup file's bytes, a part at a time, keeping the running checksum. */
export class BackupEncoder {
  private readonly hash = createHash("sha256");
  private count = 0n;

  /** The header, for a snapshot taken at `snapshotTime` (ms since the epoch). */
  header(snapshotTime: number): Buffer {
    const bytes = Buffer.allocUnsafe(headerBytes);
    backupMagic.copy(bytes, 0);
    bytes.writeUInt32BE(backupFormatVersion, backupMagic.length);
    bytes.writeBigUInt64BE(BigInt(snapshotTime), backupMagic.length + 4);
    return this.hashed(bytes);
  }

  /** The records of `entries`, in one buffer. */
  records(entries: readonly BackupEntry[]): Buffer {
    let size = 0;
    for (const [key, value] of entries) size += recordHeadBytes + key.length + value.length;
    const bytes = Buffer.allocUnsafe(size);
    let at = 0;
    for (const [key, value] of entries) {
      bytes[at] = recordTag;
      bytes.writeUInt32BE(key.length, at + 1);
      bytes.writeUInt32BE(value.length, at + 5);
      bytes.set(key, at + recordHeadBytes);
      bytes.set(value, at + recordHeadBytes + key.length);
      at += recordHeadBytes + key.length + value.length;
    }
    this.count += BigInt(entries.length);
    return this.hashed(bytes);
  }

  /** The end: the record count and the checksum. Nothing may be encoded after it. */
  end(): Buffer {
    const bytes = Buffer.allocUnsafe(endBytes);
    bytes[0] = endTag;
    bytes.writeBigUInt64BE(this.count, 1);
    this.hash.update(bytes.subarray(0, 9));
    this.hash.digest().copy(bytes, 9);
    return bytes;
  }

  private hashed(bytes: Buffer): Buffer {
    this.hash.update(bytes);
    return bytes;
  }
}

/** What a backup file's header says. */
export interface BackupHeader {
  readonly formatVersion: number;
  readonly snapshotTime: number;
}

/**
 * Reads a backup file's bytes, arriving in chunks of any size, into batches
 * of entries; throws BackupFormatError at the first byte that does not fit,
 * and at the end if the file stopped before its end or its checksum differs.
 * Entries come before the checksum is known: a caller that must not act on a
 * bad file reads it whole first (verifyBackup).
 */
export async function* readBackup(
  chunks: AsyncIterable<Uint8Array>,
  onHeader: (header: BackupHeader) => void = () => undefined,
): AsyncGenerator<BackupEntry[]> {
  const hash = createHash("sha256");
  let pending = Buffer.alloc(0);
  let offset = 0;
  let sawHeader = false;
  let count = 0n;
  let ended = false;
  for await (const chunk of chunks) {
    if (ended) {
      if (chunk.length > 0) throw new BackupFormatError("the backup has bytes after its end");
      continue;
    }
    pending = pending.length === 0 ? Buffer.from(chunk) : Buffer.concat([pending, chunk]);
    let at = 0;
    if (!sawHeader) {
      if (pending.length < headerBytes) continue;
      onHeader(readHeader(pending, hash));
      sawHeader = true;
      at = headerBytes;
    }
    const entries: BackupEntry[] = [];
    while (pending.length - at >= 1) {
      const tag = pending[at];
      if (tag === endTag) {
        if (pending.length - at < endBytes) break;
        checkEnd(pending.subarray(at, at + endBytes), hash, count, offset + at);
        if (pending.length > at + endBytes) throw new BackupFormatError("the backup has bytes after its end");
        at += endBytes;
        ended = true;
        break;
      }
      if (tag !== recordTag)
        throw new BackupFormatError(`the backup is corrupt at byte ${offset + at}: no record starts there`);
      if (pending.length - at < recordHeadBytes) break;
      const keyLength = pending.readUInt32BE(at + 1);
      const valueLength = pending.readUInt32BE(at + 5);
      if (keyLength === 0 || keyLength > maxFieldBytes || valueLength > maxFieldBytes) {
        throw new BackupFormatError(`the backup is corrupt at byte ${offset + at}: a record's length is impossible`);
      }
      const recordEnd = at + recordHeadBytes + keyLength + valueLength;
      if (pending.length < recordEnd) break;
      hash.update(pending.subarray(at, recordEnd));
      const keyStart = at + recordHeadBytes;
      entries.push([
        pending.subarray(keyStart, keyStart + keyLength),
        pending.subarray(keyStart + keyLength, recordEnd),
      ]);
      count++;
      at = recordEnd;
    }
    offset += at;
    // The entries keep views of `pending`: a copy of the rest, not a view, lets it go.
    pending = Buffer.from(pending.subarray(at));
    if (entries.length > 0) yield entries;
  }
  if (!sawHeader) throw new BackupFormatError("the backup is cut short: it ends inside its header");
  if (!ended)
    throw new BackupFormatError(`the backup is cut short: it ends at byte ${offset + pending.length} before its end`);
}

/** Reads a whole backup without keeping it: its header and record count, or BackupFormatError. */
export async function verifyBackup(
  chunks: AsyncIterable<Uint8Array>,
): Promise<BackupHeader & { readonly records: number }> {
  let header: BackupHeader | undefined;
  let records = 0;
  for await (const entries of readBackup(chunks, (read) => {
    header = read;
  })) {
    records += entries.length;
  }
  // readBackup has thrown unless it read a header.
  return { ...header!, records };
}

function readHeader(bytes: Buffer, hash: Hash): BackupHeader {
  if (!bytes.subarray(0, backupMagic.length).equals(backupMagic)) {
    throw new BackupFormatError("this is not a holdshelf backup: it does not start with HSBACKUP");
  }
  const formatVersion = bytes.readUInt32BE(backupMagic.length);
  if (formatVersion !== backupFormatVersion) {
    throw new BackupFormatError(
      `the backup's format version is ${formatVersion}; this holdshelf reads version ${backupFormatVersion} only`,
    );
  }
  hash.update(bytes.subarray(0, headerBytes));
  return { formatVersion, snapshotTime: Number(bytes.readBigUInt64BE(backupMagic.length + 4)) };
}

function checkEnd(bytes: Buffer, hash: Hash, count: bigint, at: number): void {
  hash.update(bytes.subarray(0, 9));
  if (!hash.digest().equals(bytes.subarray(9))) {
    throw new BackupFormatError("the backup is corrupt: its checksum does not match its contents");
  }
  const stated = bytes.readBigUInt64BE(1);
  if (stated !== count) {
    throw new BackupFormatError(
      `the backup is corrupt at byte ${at}: its end counts ${stated} records, it has ${count}`,
    );
  }
}
