#!/usr/bin/env node
// The long form of the kill -9 harness: `npm run crash -- --cycles 500` or
// `npm run crash -- --minutes 30 [--seed N] [--report crash-report.json]`;
// with `--cluster` first, the cluster form on PostgreSQL, and with `--fifo`
// first, the FIFO form. It runs test/reliability/kill-restart.test.ts (or
// cluster-kill-takeover.test.ts, or fifo-kill-restart.test.ts) under vitest
// with the matching HOLDSHELF_CRASH_* variables, so CI's short form and the
// long form are one harness.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const flags = {
  "--cycles": "HOLDSHELF_CRASH_CYCLES",
  "--minutes": "HOLDSHELF_CRASH_MINUTES",
  "--seed": "HOLDSHELF_CRASH_SEED",
  "--report": "HOLDSHELF_CRASH_REPORT",
};
const env = { ...process.env };
const files = {
  "--cluster": "test/reliability/cluster-kill-takeover.test.ts",
  "--fifo": "test/reliability/fifo-kill-restart.test.ts",
};
const mode = files[process.argv[2]];
const args = process.argv.slice(mode === undefined ? 2 : 3);
for (let i = 0; i < args.length; i += 2) {
  const name = flags[args[i]];
  const value = args[i + 1];
  if (name === undefined || value === undefined) {
    console.error(
      `usage: npm run crash -- [--cluster | --fifo] [--cycles N] [--minutes M] [--seed S] [--report FILE]; got "${args.join(" ")}"`,
    );
    process.exit(2);
  }
  env[name] = value;
}
const root = fileURLToPath(new URL("../../../", import.meta.url));
const vitest = fileURLToPath(new URL("../../../node_modules/vitest/vitest.mjs", import.meta.url));
const file = mode ?? "test/reliability/kill-restart.test.ts";
const child = spawn(process.execPath, [vitest, "run", "--project", "leveldb", file], {
  cwd: root,
  env,
  stdio: "inherit",
});
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
