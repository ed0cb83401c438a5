import { open } from "node:fs/promises";

/** fsyncs a directory, so that a name made in it (a rename, a link) survives a crash. */
export async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
