import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";

/** The package's command, as `holdshelf` runs it once installed (compiled by `npm run build`). */
export const holdshelfBin = fileURLToPath(new URL("../../bin/holdshelf.js", import.meta.url));

/** A `holdshelf serve` child process. */
export interface BrokerProcess {
  readonly child: ChildProcess;
  /** The address from its "holdshelf listening" log line. */
  readonly address: string;
  /** The metrics listener's address from the same line. */
  readonly metricsAddress: string;
  /** Everything it wrote to standard error so far. */
  logs(): string;
}

/**
 * Starts `holdshelf serve` on free ports (gRPC and metrics) and waits for its
 * listening line. The SQS endpoint is off (its default port is fixed, and
 * tests run side by side) unless extraArgs turn it on (the last
 * --sqs-listen wins), or `sqsDefault` leaves its flag out altogether. The
 * admin console is off for the same reason, unless extraArgs turn it on or
 * `consoleDefault` leaves it at its default (flag and environment unset).
 * `bin` runs another release's command (test/support/release-0.1.0.ts).
 */
export async function startBrokerProcess(
  dataDir: string,
  extraArgs: string[] = [],
  options: { sqsDefault?: boolean; consoleDefault?: boolean; bin?: string } = {},
): Promise<BrokerProcess> {
  const sqsOff = options.sqsDefault === true ? [] : ["--sqs-listen", "off"];
  const consoleOff = options.consoleDefault === true ? [] : ["--console-listen", "off"];
  const args = [
    "serve",
    "--data-dir",
    dataDir,
    "--listen",
    "127.0.0.1:0",
    "--metrics-listen",
    "127.0.0.1:0",
    ...sqsOff,
    ...consoleOff,
    ...extraArgs,
  ];
  const { HOLDSHELF_CONSOLE_LISTEN: _testsTurnItOff, ...defaultEnv } = process.env;
  const env = options.consoleDefault === true ? defaultEnv : process.env;
  const child = spawn(process.execPath, [options.bin ?? holdshelfBin, ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    env,
  });
  let stderr = "";
  const [address, metricsAddress] = await new Promise<[string, string]>((resolve, reject) => {
    child.stderr!.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
      const match = /"msg":"holdshelf listening","address":"([^"]+)","metricsAddress":"([^"]+)"/.exec(stderr);
      if (match) resolve([match[1]!, match[2]!]);
    });
    child.once("exit", (code) => reject(new Error(`holdshelf serve exited with ${code}: ${stderr}`)));
  });
  return { child, address, metricsAddress, logs: () => stderr };
}

/** Runs the holdshelf command to completion. */
export async function runHoldshelf(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [holdshelfBin, ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...env },
  });
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = (await once(child, "exit")) as [number];
  return { code, stdout, stderr };
}
