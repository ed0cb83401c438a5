/**
 * `npm run bench`: the benchmark suite (not a test). Each scenario starts a
 * broker in its own process on a temporary data directory (fsync durability
 * unless --durability os), drives it from this process over loopback, and
 * reports one table, also written as JSON to bench/results/.
 *
 * Run with `npm run bench -- [flags]`; see `usage` below.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { cpus, totalmem } from "node:os";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { createContext, type Scenario, type ScenarioResult } from "./scenario.js";
import { formatTable } from "./table.js";
import { scenarios } from "./scenarios/index.js";

const usage = `npm run bench -- [flags]
  --scenario NAME[,NAME]  scenarios to run (default all): ${scenarios.map((scenario) => scenario.name).join(", ")}
  --size N                the size of each scenario run (see below), instead of its default
  --durability fsync|os   the brokers' durability (default fsync, as \`holdshelf serve\` defaults)
Sizes:
${scenarios.map((scenario) => `  ${scenario.name.padEnd(12)} ${scenario.sizeMeaning} (default ${scenario.defaultSize})`).join("\n")}`;
const resultsDir = fileURLToPath(new URL("../../bench/results/", import.meta.url));

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      scenario: { type: "string", default: "all" },
      size: { type: "string" },
      durability: { type: "string", default: "fsync" },
      help: { type: "boolean", default: false },
    },
  });
  if (values.help) return console.log(usage);
  const chosen = pickScenarios(values.scenario);
  const size = values.size === undefined ? undefined : Number(values.size);
  if (size !== undefined && !(Number.isInteger(size) && size > 0)) throw new Error(`--size takes a positive integer\n${usage}`);
  const durability = values.durability;
  if (durability !== "fsync" && durability !== "os") throw new Error(`--durability is fsync or os\n${usage}`);

  const machine = `${cpus().length} × ${cpus()[0]?.model.trim() ?? "unknown CPU"}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
  const log = (line: string): void => void process.stderr.write(`${line}\n`);
  log(`holdshelf bench on ${machine}, ${durability} durability`);
  const results: ScenarioResult[] = [];
  for (const scenario of chosen) {
    const { context, cleanup } = createContext({ size, durability, earlier: results }, log);
    try {
      results.push(...(await scenario.run(context)));
    } finally {
      await cleanup();
    }
  }
  console.log(formatTable(results));
  await mkdir(resultsDir, { recursive: true });
  const file = `${resultsDir}bench-${new Date().toISOString().replace(/[:.]/g, "-")}.json`;
  await writeFile(file, JSON.stringify({ machine, durability, results }, null, 2) + "\n");
  log(`results written to ${file}`);
}

function pickScenarios(names: string): Scenario[] {
  if (names === "all") return scenarios;
  return names.split(",").map((name) => {
    const found = scenarios.find((scenario) => scenario.name === name);
    if (found === undefined) throw new Error(`no scenario "${name}"\n${usage}`);
    return found;
  });
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
