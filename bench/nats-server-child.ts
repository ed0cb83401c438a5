/**
 * A `nats-server` child process with JetStream on file storage, for the peer
 * comparison (scenario 7): finding the binary, asking it whether it accepts a
 * configuration, starting it on a free loopback port and stopping it.
 */
import { execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { constants } from "node:fs";
import { access, writeFile } from "node:fs/promises";
import { delimiter, join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** How a JetStream server makes its file store durable. */
export type NatsSync =
  /** The server's default: the OS page cache, with a forced sync every 2 minutes. */
  | "default"
  /** `sync_interval: always`: an fsync on every write (nats-server 2.10 and later). */
  | "always";

/** A running nats-server. */
export interface NatsServerChild {
  readonly pid: number;
  /** nats://127.0.0.1:<port>, from its "Listening for client connections" log line. */
  readonly url: string;
  /** Sends SIGTERM and waits for the exit. */
  stop(): Promise<void>;
}

/**
 * The path of nats-server, or undefined where it is not installed. Debian
 * installs it in /usr/sbin, which is often not on an ordinary user's PATH.
 */
export async function findNatsServer(): Promise<string | undefined> {
  const dirs = [
    ...(process.env["PATH"] ?? "").split(delimiter),
    "/usr/sbin",
    "/usr/local/sbin",
    "/usr/local/bin",
    "/usr/bin",
  ];
  for (const dir of dirs.filter((dir) => dir !== "")) {
    const path = join(dir, "nats-server");
    if (
      await access(path, constants.X_OK).then(
        () => true,
        () => false,
      )
    )
      return path;
  }
  return undefined;
}

/** What `nats-server --version` says, such as "v2.9.10". */
export async function natsServerVersion(bin: string): Promise<string> {
  const { stdout } = await run(bin, ["--version"]);
  return stdout.trim().replace(/^nats-server:\s*/, "");
}

/**
 * Writes the configuration file for a JetStream server storing files under
 * `storeDir`, into `configDir`, and returns its path.
 */
export async function writeNatsConfig(configDir: string, storeDir: string, sync: NatsSync): Promise<string> {
  const lines = [`store_dir: ${JSON.stringify(storeDir)}`];
  if (sync === "always") lines.push("sync_interval: always");
  const path = join(configDir, `nats-${sync}.conf`);
  await writeFile(path, `jetstream {\n  ${lines.join("\n  ")}\n}\n`);
  return path;
}

/**
 * Whether this nats-server accepts a configuration (`nats-server -t`):
 * 2.9 rejects sync_interval as an unknown field. Resolves with the reason if not.
 */
export async function natsConfigProblem(bin: string, configFile: string): Promise<string | undefined> {
  try {
    await run(bin, ["-t", "-c", configFile]);
    return undefined;
  } catch (error: unknown) {
    const stderr = (error as { stderr?: string }).stderr ?? String(error);
    // "nats-server: /tmp/…/x.conf:3:3: unknown field …": the file's place says nothing useful.
    return stderr.trim().replace(/^nats-server:\s*(\S+:\d+:\d+:\s*)?/, "");
  }
}

/** Starts nats-server with a configuration file on a free loopback port, and waits until it is ready. */
export async function startNatsServer(bin: string, configFile: string): Promise<NatsServerChild> {
  // -p -1: the server picks a free port and logs it.
  const child = spawn(bin, ["-c", configFile, "-a", "127.0.0.1", "-p", "-1"], { stdio: ["ignore", "ignore", "pipe"] });
  // Keep only the tail of the log: it is read to find the port and to explain a failure.
  let log = "";
  const exited = once(child, "exit") as Promise<[number | null, NodeJS.Signals | null]>;
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr!.on("data", (chunk: Buffer) => {
      log = (log + chunk.toString()).slice(-16_384);
      const match = /Listening for client connections on (\S+)[\s\S]*Server is ready/.exec(log);
      if (match) resolve(`nats://${match[1]!}`);
    });
    exited.then(([code, signal]) => reject(new Error(`nats-server exited (${code ?? signal}): ${log}`)), reject);
  });
  let stopped: Promise<void> | undefined;
  return {
    pid: child.pid!,
    url,
    stop: () =>
      (stopped ??= (async () => {
        child.kill("SIGTERM");
        const [code, signal] = await exited;
        // nats-server shuts down cleanly on SIGTERM but exits with status 1 (0 on SIGINT).
        if (!(code === 0 || (code === 1 && log.includes("Server Exiting")))) {
          throw new Error(`nats-server exited (${code ?? signal}) on SIGTERM: ${log}`);
        }
      })()),
  };
}
