import { parserOptions, type OptionTable } from "./option-table.js";
import { UsageError } from "./usage-error.js";

/** Where the admin console listens unless told otherwise: loopback, beside the metrics port. */
export const consoleDefaultListen = "127.0.0.1:9465";

/** The --console-listen value that turns the console off. */
export const consoleOff = "off";

/** The console's option. */
export const consoleOptionTable = {
  "console-listen": {
    type: "string",
    value: "HOST:PORT|off",
    env: "HOLDSHELF_CONSOLE_LISTEN",
    default: consoleDefaultListen,
    description: "where the admin console listens (docs/console.md), or off",
  },
} as const satisfies OptionTable;

/** The console's flag for parseArgs, with its environment variable. */
export function consoleFlagOptions(env: NodeJS.ProcessEnv) {
  return parserOptions(consoleOptionTable, env);
}

/** The console's address, or undefined when it is off. */
export function parseConsoleFlags(values: { "console-listen"?: string | undefined }): string | undefined {
  const listen = values["console-listen"];
  if (listen === consoleOff) return undefined;
  // An empty value (a template's missing variable) must not quietly pick some address.
  if (listen === undefined || listen === "")
    throw new UsageError(`--console-listen (HOLDSHELF_CONSOLE_LISTEN) is empty: give host:port, or "${consoleOff}"`);
  return listen;
}
