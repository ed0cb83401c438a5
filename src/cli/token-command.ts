import { parseArgs } from "node:util";
import { AuthFileError, parseAuthFile } from "../auth/auth-file.js";
import { generateToken, tokenDigest } from "../auth/bearer-token.js";
import { parserOptions, type OptionTable } from "./option-table.js";
import { UsageError } from "./usage-error.js";

/** The options of `holdshelf token`. */
export const tokenOptionTable = {
  name: { type: "string", value: "NAME", description: "who the token is for, as the auth file names it" },
  queues: {
    type: "string",
    value: "PATTERN",
    description: "the queues it may use: a name, or a pattern where * matches any run of characters",
  },
  allow: {
    type: "string",
    value: "ACTIONS",
    description: "what it may do there: admin, send, receive, comma-separated",
  },
} as const satisfies OptionTable;

/**
 * `holdshelf token`: makes a random bearer token and prints, as one JSON
 * line, the token (shown this once, never stored) and the auth file entry
 * that holds only its SHA-256.
 */
export function tokenCommand(args: string[], print: (line: string) => void, note: (line: string) => void): number {
  const { values } = parseArgs({
    args,
    options: parserOptions(tokenOptionTable, {}),
  });
  if (values.name === undefined || values.queues === undefined || values.allow === undefined) {
    throw new UsageError("token needs --name NAME --queues PATTERN --allow admin,send,receive");
  }
  const token = generateToken();
  const entry = {
    name: values.name,
    sha256: tokenDigest(token).toString("hex"),
    permissions: [{ queues: values.queues, allow: values.allow.split(",").map((action) => action.trim()) }],
  };
  try {
    // The same checks the broker makes, so the entry printed is one it accepts.
    parseAuthFile(JSON.stringify({ tokens: [entry] }), "(new entry)");
  } catch (error) {
    if (error instanceof AuthFileError) {
      throw new UsageError(
        `the entry's ${error.message.replace(/^auth file \(new entry\): tokens\[0\](?: \("[^"]*"\))?\.?/, "")}`,
      );
    }
    throw error;
  }
  print(JSON.stringify({ token, entry }));
  note(
    'Keep the token now: it is not shown again. Add "entry" to the "tokens" array of the auth file, ' +
      "then send the broker SIGHUP (or restart it); clients send it as HOLDSHELF_TOKEN or the token option.",
  );
  return 0;
}
