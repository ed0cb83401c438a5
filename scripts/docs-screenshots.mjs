#!/usr/bin/env node
// Refreshes the console screenshots docs/console.md shows: runs the browser
// tests that take them (on a built tree: `npm run build` first), then copies
// what they left in test-output/console/docs/ to docs/console/. With
// --copy-only it copies the last run's. Needs Debian's Chromium, and
// PostgreSQL for the cluster pages.
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const from = `${root}test-output/console/docs/`;
const to = `${root}docs/console/`;
const tests = [
  "test/console/browser/console-overview-pages.test.ts",
  "test/console/browser/console-cluster-pages.test.ts",
  "test/console/browser/console-forms-pages.test.ts",
  "test/console/browser/console-triage-pages.test.ts",
];

if (!process.argv.includes("--copy-only")) {
  // CI=true: a missing Chromium or PostgreSQL fails the run instead of skipping the screenshots.
  const run = spawnSync("npx", ["vitest", "run", "--project", "leveldb", ...tests], {
    cwd: root,
    stdio: "inherit",
    env: { ...process.env, CI: "true" },
  });
  if (run.status !== 0) {
    console.error("the browser tests failed: docs/console/ is left as it was");
    process.exit(run.status ?? 1);
  }
}
const shots = readdirSync(from).filter((name) => name.endsWith(".png"));
if (shots.length === 0) {
  console.error(`no screenshots in ${from}: run the browser tests first`);
  process.exit(1);
}
mkdirSync(to, { recursive: true });
for (const name of shots) {
  copyFileSync(from + name, to + name);
  console.log(`docs/console/${name}`);
}
