import { createReadStream } from "node:fs";
import { access } from "node:fs/promises";
import { parseArgs } from "node:util";
import { restoreBackup } from "../store/restore-backup.js";
import { FormatTooNewError } from "../store/store-open-error.js";
import { CommandError } from "./command-error.js";
import { formatTooNewExitStatus } from "./exit-status.js";
import { parserOptions, type OptionTable } from "./option-table.js";
import { serveOptionTable } from "./serve-options.js";
import { UsageError } from "./usage-error.js";

/** The options of `holdshelf restore`: the data directory, as serve names it. */
export const restoreOptionTable = {
  "data-dir": { ...serveOptionTable["data-dir"], description: "the empty or absent data directory to restore into" },
} as const satisfies OptionTable;

/**
 * `holdshelf restore SRC [--data-dir DIR]`: brings the backup file SRC back
 * into DIR, absent or empty, for a broker that is not running yet
 * (src/store/restore-backup.ts: checked whole first, then written beside DIR
 * and renamed into place).
 */
export async function restoreCommand(
  args: string[],
  env: NodeJS.ProcessEnv,
  print: (line: string) => void,
): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: parserOptions(restoreOptionTable, env),
  });
  const [source, ...extra] = positionals;
  if (source === undefined) throw new UsageError("missing SRC, the backup file to restore");
  if (extra.length > 0) throw new UsageError(`restore takes one SRC, not ${positionals.length}`);
  await access(source).catch(() => {
    throw new CommandError(`cannot read the backup ${source}`);
  });
  const dataDir = values["data-dir"];
  let restored: Awaited<ReturnType<typeof restoreBackup>>;
  try {
    restored = await restoreBackup(() => createReadStream(source), dataDir);
  } catch (error) {
    // The same status as serve's refusal of such a directory: nothing was written.
    if (!(error instanceof FormatTooNewError)) throw error;
    console.error(`holdshelf: ${error.message}`);
    return formatTooNewExitStatus;
  }
  print(
    JSON.stringify({
      restored: dataDir,
      records: restored.records,
      snapshotTime: new Date(restored.snapshotTime).toISOString(),
    }),
  );
  return 0;
}
