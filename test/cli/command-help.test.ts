import { describe, expect, it } from "vitest";
import { clientOptionGroups } from "../../src/cli/client-commands.js";
import { connectionOptionTable } from "../../src/cli/client-options.js";
import { clusterCommandOptionTable } from "../../src/cli/cluster-command.js";
import { commandHelp } from "../../src/cli/command-help.js";
import type { OptionTable } from "../../src/cli/option-table.js";
import { restoreOptionTable } from "../../src/cli/restore-command.js";
import { serveOptionGroups } from "../../src/cli/serve-options.js";
import { tokenOptionTable } from "../../src/cli/token-command.js";
import { runHoldshelf } from "../support/broker-process.js";

const tables: [string, OptionTable][] = [
  ...serveOptionGroups.map(({ table }): [string, OptionTable] => ["serve", table]),
  ...clientOptionGroups.map(({ table }): [string, OptionTable] => ["queue", table]),
  ["cluster", clusterCommandOptionTable],
  ["token", tokenOptionTable],
  ["backup", connectionOptionTable],
  ["restore", restoreOptionTable],
];

describe("the help", () => {
  it("lists every option each parser takes, with its environment variable, in holdshelf help and the command's --help", () => {
    const all = commandHelp();
    for (const [command, table] of tables) {
      const own = commandHelp(command);
      for (const [flag, spec] of Object.entries(table)) {
        // An option's line, or its two lines when the flag is too long to share one with its description.
        const env = spec.env === undefined ? "" : `[^\\n]*env ${spec.env}\\b`;
        const entry = new RegExp(`^  --${flag}\\b[^\\n]*(\\n {4,}[^\\n]*)?${env}`, "m");
        for (const help of [all, own]) expect(help, `--${flag} ${spec.env ?? ""}`).toMatch(entry);
      }
    }
  });

  it("names the flags the SQS endpoint and the console added", () => {
    for (const flag of ["sqs-listen", "sqs-credentials", "sqs-account-id", "sqs-region", "sqs-advertised-url"])
      expect(commandHelp("serve")).toContain(`--${flag}`);
    expect(commandHelp("serve")).toContain("--console-listen HOST:PORT|off");
  });

  it("is what holdshelf help and holdshelf serve --help print, with exit code 0", async () => {
    const serve = await runHoldshelf(["serve", "--help"]);
    expect(serve.code).toBe(0);
    expect(serve.stdout.trim()).toBe(commandHelp("serve"));
    const help = await runHoldshelf(["help"]);
    expect(help.code).toBe(0);
    expect(help.stdout.trim()).toBe(commandHelp());
    const queue = await runHoldshelf(["queue", "apply", "--help"]);
    expect(queue.code).toBe(0);
    expect(queue.stdout).toContain("--delete-missing");
  });
});
