/**
 * A PostgreSQL server as a child process, for the cluster-storage scenario
 * (11): initdb into a temporary directory, a postmaster on a free loopback
 * port with no Unix socket, the CPU time of all its processes read from
 * /proc, and a stop that removes the directory.
 *
 * PostgreSQL refuses to run as root, so as root initdb and the postmaster run
 * as the "postgres" user Debian's package creates (`runuser -u postgres --`),
 * on a directory chowned to it. runuser forks and waits, and turns a signal
 * it gets into SIGTERM (a "smart" shutdown, which waits for clients) and
 * SIGKILL 2 s later: so the bench signals the postmaster itself.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { readdirSync, readFileSync } from "node:fs";
import { chown, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { freePort } from "../test/support/free-port.js";
import { waitForPostgres } from "../test/support/postgres-server.js";
import { clockTicksPerSecond, findProcess } from "./proc-stats.js";

// The tests' finder of Debian's server binaries (/usr/lib/postgresql/<version>/bin): one place that knows the layout.
export { postgresBinDir } from "../test/support/postgres-server.js";

/** Options of startPostgresServer. */
export interface PostgresServerOptions {
  /** Debian's directory of initdb and postgres. */
  readonly binDir: string;
  /**
   * synchronous_commit: on, a commit returns once its WAL is fsynced (as the
   * broker's fsync durability); off, the WAL writer flushes it within a few
   * hundred milliseconds (as --durability os, which leaves writes to the OS).
   */
  readonly synchronousCommit: boolean;
}

/** A running PostgreSQL server. */
export interface PostgresServerChild {
  /** The postmaster's pid: the parent of every backend and background process of the server. */
  readonly pid: number;
  /** postgres://holdshelf@127.0.0.1:<port>/<database>: a trusted superuser, over TCP on loopback. */
  url(database?: string): string;
  /** The settings it was started with, for the row that reports it. */
  readonly settings: string;
  /** `postgres --version`, such as "PostgreSQL 15.18". */
  readonly version: string;
  /**
   * User plus system CPU time so far of the postmaster, every live child and
   * every child it has reaped (autovacuum workers come and go), in seconds;
   * the backends in `exclude` (the bench's own connection) are left out.
   */
  cpuSeconds(exclude?: readonly number[]): number;
  /** Fast shutdown (SIGINT to the postmaster), then removes the data directory. */
  stop(): Promise<void>;
}

const user = "holdshelf";
const stopTimeoutMs = 30_000;

/** Creates a cluster in a new temporary directory and starts it; on failure, stops what started and removes the directory. */
export async function startPostgresServer(options: PostgresServerOptions): Promise<PostgresServerChild> {
  const dir = await mkdtemp(join(tmpdir(), "holdshelf-bench-pg-"));
  let server: ChildProcess | undefined;
  let postmaster: number | undefined;
  try {
    const asRoot = process.getuid?.() === 0;
    if (asRoot) await chown(dir, idOf("-u"), idOf("-g"));
    const as = (command: string, args: string[]): [string, string[]] =>
      asRoot ? ["runuser", ["-u", "postgres", "--", command, ...args]] : [command, args];
    const dataDir = join(dir, "data");
    // --no-sync: initdb's own files need no fsync for a server that lives one run.
    const init = spawnSync(
      ...as(join(options.binDir, "initdb"), ["-D", dataDir, "-U", user, "--auth=trust", "-E", "UTF8", "--no-sync"]),
      {
        encoding: "utf8",
      },
    );
    if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr || init.stdout}`);

    const port = await freePort();
    const settings = ["fsync=on", `synchronous_commit=${options.synchronousCommit ? "on" : "off"}`];
    server = spawn(
      ...as(join(options.binDir, "postgres"), [
        "-D",
        dataDir,
        "-p",
        String(port),
        "-c",
        "listen_addresses=127.0.0.1",
        "-c",
        "unix_socket_directories=",
        ...settings.flatMap((setting) => ["-c", setting]),
      ]),
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    // Keep only the tail of the log: it is read only to explain a failure.
    let log = "";
    server.stderr!.on("data", (chunk: Buffer) => (log = (log + chunk.toString()).slice(-16_384)));
    const url = (database = "postgres"): string => `postgres://${user}@127.0.0.1:${port}/${database}`;
    await waitForPostgres(url(), server, () => log);
    postmaster = findProcess(server.pid!, "postgres");
    if (postmaster === undefined) throw new Error(`no postgres process under pid ${server.pid}`);
    const postmasterPid = postmaster;
    const version = execFileSync(join(options.binDir, "postgres"), ["--version"], { encoding: "utf8" })
      .trim()
      .replace(/^postgres \(PostgreSQL\) (\S+).*$/, "PostgreSQL $1");
    const child = server;
    let stopped: Promise<void> | undefined;
    return {
      pid: postmasterPid,
      url,
      settings: `${settings.join(", ")}, otherwise PostgreSQL's defaults`,
      version,
      cpuSeconds: (exclude = []) => serverCpuSeconds(postmasterPid, exclude),
      stop: () =>
        (stopped ??= (async () => {
          try {
            await stopPostmaster(child, postmasterPid);
          } finally {
            await rm(dir, { recursive: true, force: true });
          }
        })()),
    };
  } catch (error) {
    if (server !== undefined)
      await stopPostmaster(server, postmaster ?? findProcess(server.pid!, "postgres")).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

/**
 * SIGINT to the postmaster (fast shutdown: clients are disconnected, the
 * server checkpoints and exits), and waits for the child (runuser, or the
 * postmaster itself) to exit; SIGQUIT and then SIGKILL if it takes too long.
 */
async function stopPostmaster(child: ChildProcess, postmaster: number | undefined): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, "exit");
  const signal = (name: NodeJS.Signals): void => {
    try {
      if (postmaster === undefined) child.kill(name);
      else process.kill(postmaster, name);
    } catch {
      // It exited already.
    }
  };
  signal("SIGINT");
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<"late">((resolve) => (timer = setTimeout(() => resolve("late"), stopTimeoutMs)));
  const outcome = await Promise.race([exited, late]).finally(() => clearTimeout(timer));
  if (outcome === "late") {
    // Immediate shutdown: the postmaster tells its children to quit at once, then exits.
    signal("SIGQUIT");
    await Promise.race([exited, sleep(5_000)]);
    signal("SIGKILL");
    child.kill("SIGKILL");
    await exited;
    throw new Error(`postgres did not stop within ${stopTimeoutMs / 1000} s of SIGINT: killed`);
  }
}

/**
 * CPU seconds of the postmaster and its children: utime and stime of each
 * (fields 14 and 15 of stat(5)), plus the postmaster's cutime and cstime
 * (16 and 17: children it has waited for), so that a process that exited in
 * between still counts.
 */
function serverCpuSeconds(postmaster: number, exclude: readonly number[]): number {
  let ticks = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (exclude.includes(pid)) continue;
    const fields = statFields(pid);
    if (fields === undefined) continue;
    // fields[0] is field 3 (state); fields[1] field 4 (ppid).
    if (pid === postmaster) ticks += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
    else if (Number(fields[1]) === postmaster) ticks += Number(fields[11]) + Number(fields[12]);
  }
  return ticks / clockTicksPerSecond;
}

/** The fields of /proc/<pid>/stat after the command name, or undefined if the process is gone. */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name, field 2, is in parentheses and may hold spaces: split after its last ")".
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined;
  }
}

/** The postgres user's uid (`-u`) or gid (`-g`). */
function idOf(flag: "-u" | "-g"): number {
  return Number(execFileSync("id", [flag, "postgres"], { encoding: "utf8" }).trim());
}
