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
import { loadMarkThreshold, oneMinuteLoad, waitForLoadBelow } from "./machine-load.js";
import { createContext, skippedRow, type Scenario, type ScenarioResult } from "./scenario.js";
import { formatScenarioProfile, keepScenarioProfiles, type ScenarioProfile } from "./scenario-profiles.js";
import { formatTable } from "./table.js";
import { scenarios } from "./scenarios/index.js";

const usage = `npm run bench -- [flags]
  --scenario NAME[,NAME]  scenarios to run (default all): ${scenarios.map((scenario) => scenario.name).join(", ")}
  --size N                the size of each scenario run (see below), instead of its default
  --durability fsync|os   the brokers' durability (default fsync, as \`holdshelf serve\` defaults)
  --profile               run the brokers under --cpu-prof: profiles in bench/results/profiles-<time>/,
                          and per scenario the busy samples by group and the top 15 self-time frames
  --max-load X            before each scenario, wait for the 1-minute load average to fall below X;
                          skip the scenario if it has not after --load-wait seconds
  --load-wait S           how long --max-load waits (default 60)
Rows measured with the load average above ${loadMarkThreshold} are marked *.
Sizes:
${scenarios.map((scenario) => `  ${scenario.name.padEnd(12)} ${scenario.sizeMeaning} (default ${scenario.defaultSize})`).join("\n")}`;
const resultsDir = fileURLToPath(new URL("../../bench/results/", import.meta.url));

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      scenario: { type: "string", default: "all" },
      size: { type: "string" },
      durability: { type: "string", default: "fsync" },
      profile: { type: "boolean", default: false },
      "max-load": { type: "string" },
      "load-wait": { type: "string", default: "60" },
      help: { type: "boolean", default: false },
    },
  });
  if (values.help) return console.log(usage);
  const chosen = pickScenarios(values.scenario);
  const size = values.size === undefined ? undefined : Number(values.size);
  if (size !== undefined && !(Number.isInteger(size) && size > 0))
    throw new Error(`--size takes a positive integer\n${usage}`);
  const durability = values.durability;
  if (durability !== "fsync" && durability !== "os") throw new Error(`--durability is fsync or os\n${usage}`);
  const maxLoad = values["max-load"] === undefined ? undefined : Number(values["max-load"]);
  if (maxLoad !== undefined && !(maxLoad > 0)) throw new Error(`--max-load takes a positive number\n${usage}`);
  const loadWaitSeconds = Number(values["load-wait"]);
  if (!(loadWaitSeconds >= 0)) throw new Error(`--load-wait takes a number of seconds\n${usage}`);

  const machine = `${cpus().length} × ${cpus()[0]?.model.trim() ?? "unknown CPU"}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
  const log = (line: string): void => void process.stderr.write(`${line}\n`);
  log(`holdshelf bench on ${machine}, ${durability} durability${values.profile ? ", brokers under --cpu-prof" : ""}`);
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  const profileDir = `${resultsDir}profiles-${stamp}/`;
  if (values.profile) await mkdir(profileDir, { recursive: true });
  const results: ScenarioResult[] = [];
  const profiles: ScenarioProfile[] = [];
  for (const scenario of chosen) {
    const { load, below } =
      maxLoad === undefined
        ? { load: oneMinuteLoad(), below: true }
        : await waitForLoadBelow(maxLoad, loadWaitSeconds * 1000, (line) => log(`${scenario.name}: ${line}`));
    if (!below) {
      const reason = `load average ${load.toFixed(2)}, not below --max-load ${maxLoad} after ${loadWaitSeconds} s`;
      log(`${scenario.name}: skipped, ${reason}`);
      results.push({ ...skippedRow(scenario.name, reason), loadAverage: load });
      continue;
    }
    const { context, cleanup, removeTemp } = createContext(
      { size, durability, earlier: results, profile: values.profile },
      log,
    );
    try {
      const rows = await scenario.run(context);
      results.push(...rows.map((row) => ({ ...row, loadAverage: load })));
    } finally {
      const runs = await cleanup();
      try {
        if (values.profile) profiles.push(...(await keepScenarioProfiles(scenario.name, runs, profileDir)));
      } finally {
        await removeTemp();
      }
    }
  }
  console.log(formatTable(results));
  for (const profile of profiles) console.log(`\n${formatScenarioProfile(profile)}`);
  await mkdir(resultsDir, { recursive: true });
  const file = `${resultsDir}bench-${stamp}.json`;
  const report = { machine, durability, profiled: values.profile, maxLoad, results, profiles };
  await writeFile(file, `${JSON.stringify(report, null, 2)}\n`);
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
