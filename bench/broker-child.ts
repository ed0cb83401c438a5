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
}

/** A `holdshelf serve` child process on a loopback port. */
export interface BrokerChild {
  readonly pid: number;
  /** The address from its "holdshelf listening" log line. */
  readonly address: string;
  /** Its metrics listener's address, from the same line. */
  readonly metricsAddress: string;
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
      "off",
      "--durability",
      options.durability,
      ...(options.extraFlags?.serve ?? []),
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  // Keep only the tail of the log: it is read only to explain a failure.
  let log = "";
  const exited = once(child, "exit") as Promise<[number | null, NodeJS.Signals | null]>;
  const [address, metricsAddress] = await new Promise<[string, string]>((resolve, reject) => {
    child.stderr!.on("data", (chunk: Buffer) => {
      log = (log + chunk.toString()).slice(-16_384);
      const match = /"msg":"holdshelf listening","address":"([^"]+)","metricsAddress":"([^"]+)"/.exec(log);
      if (match) resolve([match[1]!, match[2]!]);
    });
    exited.then(([code, signal]) => reject(new Error(`holdshelf serve exited (${code ?? signal}): ${log}`)), reject);
  });
  let stopped: Promise<string | undefined> | undefined;
  return {
    pid: child.pid!,
    address,
    metricsAddress,
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
