import { ClassicLevel } from "classic-level";

/** Every key and value of a (closed) data directory, in key order, as hex: what "nothing changed" compares. */
export async function levelContents(dataDir: string): Promise<[string, string][]> {
  const db = new ClassicLevel<Buffer, Buffer>(dataDir, { keyEncoding: "buffer", valueEncoding: "buffer" });
  await db.open();
  try {
    return (await db.iterator().all()).map(([key, value]) => [key.toString("hex"), value.toString("hex")] as const);
  } finally {
    await db.close();
  }
}

/** Writes one key straight into a (closed) data directory, as another release would. */
export async function putLevelKey(dataDir: string, key: Buffer, value: Buffer): Promise<void> {
  const db = new ClassicLevel<Buffer, Buffer>(dataDir, { keyEncoding: "buffer", valueEncoding: "buffer" });
  await db.open();
  try {
    await db.put(key, value);
  } finally {
    await db.close();
  }
}
