import { spawn } from "node:child_process";
import { once } from "node:events";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

// Compiled to dist-bench/bench/, so the package's command is three levels up.
const holdshelfBin = fileURLToPath(new URL("../../bin/holdshelf.js", import.meta.url));

/** Options of startBrokerChild. */
export interface BrokerChildOptions {
  readonly dataDir: string;
  readonly durability: "fsync" | "os";
  /** Runs the broker under --cpu-prof, writing its profile into this directory when it exits. */
  readonly profileDir?: string | undefined;
  /** More flags: Node's (before the script) and `holdshelf serve`'s (after it). */
  readonly extraFlags?: BrokerFlags | undefined;
}

/** Flags a scenario adds to a broker it starts, such as a larger limit or heap. */
export interface BrokerFlags {
  readonly node?: readonly string[];
  readonly serve?: readonly string[];
  /** Serves the SQS endpoint on a free loopback port (its URL in BrokerChild.sqsUrl); off unless set. */
  readonly sqs?: boolean;
  /** Serves the admin console on a free loopback port (its URL in BrokerChild.consoleUrl); off unless set. */
  readonly console?: boolean;
}

/** A `holdshelf serve` child process on a loopback port. */
export interface BrokerChild {
  readonly pid: number;
  /** The address from its "holdshelf listening" log line. */
  readonly address: string;
  /** Its metrics listener's address, from the same line. */
  readonly metricsAddress: string;
  /** Its SQS endpoint's URL ("http://127.0.0.1:40123"), from the same line; undefined unless started with `sqs`. */
  readonly sqsUrl: string | undefined;
  /** Its console's URL ("http://127.0.0.1:40124/"), from the same line; undefined unless started with `console`. */
  readonly consoleUrl: string | undefined;
  /** Sends SIGTERM and waits for the exit; resolves with the CPU profile's path, if one was asked for. */
  stop(): Promise<string | undefined>;
}

/** Starts `holdshelf serve` and waits until it listens. */
export async function startBrokerChild(options: BrokerChildOptions): Promise<BrokerChild> {
  const profileFlags = options.profileDir === undefined ? [] : ["--cpu-prof", "--cpu-prof-dir", options.profileDir];
  const nodeFlags = [...profileFlags, ...(options.extraFlags?.node ?? [])];
  const child = spawn(
    process.execPath,
    [
      ...nodeFlags,
      holdshelfBin,
      "serve",
      "--data-dir",
      options.dataDir,
      "--listen",
      "127.0.0.1:0",
      "--metrics-listen",
      "127.0.0.1:0",
      "--sqs-listen",
      options.extraFlags?.sqs === true ? "127.0.0.1:0" : "off",
      "--console-listen",
      options.extraFlags?.console === true ? "127.0.0.1:0" : "off",
      "--durability",
      options.durability,
      ...(options.extraFlags?.serve ?? []),
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  // Keep only the tail of the log: it is read only to explain a failure.
  let log = "";
  const exited = once(child, "exit") as Promise<[number | null, NodeJS.Signals | null]>;
  const {
    address,
    metricsAddress,
    sqsUrl,
    console: consoleField,
  } = await new Promise<ListeningLine>((resolve, reject) => {
    child.stderr!.on("data", (chunk: Buffer) => {
      log = (log + chunk.toString()).slice(-16_384);
      // A whole line only: a chunk may end inside one.
      const line = /^(\{[^\n]*"msg":"holdshelf listening"[^\n]*)\n/m.exec(log);
      if (line) resolve(JSON.parse(line[1]!) as ListeningLine);
    });
    exited.then(([code, signal]) => reject(new Error(`holdshelf serve exited (${code ?? signal}): ${log}`)), reject);
  });
  let stopped: Promise<string | undefined> | undefined;
  return {
    pid: child.pid!,
    address,
    metricsAddress,
    sqsUrl,
    // The line says "off" when the console is off.
    consoleUrl: options.extraFlags?.console === true ? consoleField : undefined,
    stop: () =>
      (stopped ??= (async () => {
        child.kill("SIGTERM");
        const [code, signal] = await exited;
        if (code !== 0) throw new Error(`holdshelf serve exited (${code ?? signal}) on SIGTERM: ${log}`);
        if (options.profileDir === undefined) return undefined;
        const profile = (await readdir(options.profileDir)).find((name) => name.endsWith(".cpuprofile"));
        return profile === undefined ? undefined : join(options.profileDir, profile);
      })()),
  };
}

/** The fields of the "holdshelf listening" log line the bench reads (sqsUrl only when the endpoint is on; console is "off" when off). */
interface ListeningLine {
  readonly address: string;
  readonly metricsAddress: string;
  readonly sqsUrl?: string;
  readonly console: string;
}
