// A real PostgreSQL server for tests: initdb into a temporary directory, a
// postgres process on a free loopback port, stopped and removed at the end.
// PostgreSQL refuses to run as root, so as root both run as the "postgres"
// user Debian's package creates, on a directory it owns. They are spawned
// with that uid rather than through runuser, so that the signal that stops
// the server reaches postgres itself (runuser does not pass SIGINT on, and
// killing it would leave the server running).
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { chown, mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";

/** A running PostgreSQL server. */
export interface PostgresServer {
  readonly port: number;
  /** A connection URL for `database` on this server. */
  url(database?: string): string;
  /** Creates a new, empty database and returns its URL. */
  createDatabase(): Promise<string>;
  /** Stops the server at once (as a crash would) or cleanly, and removes its data. */
  stop(): Promise<void>;
}

const user = "holdshelf";
const postgresRoot = "/usr/lib/postgresql";

/** The directory of PostgreSQL's server binaries (initdb, postgres), or undefined if none is installed. */
export function postgresBinDir(): string | undefined {
  const found = spawnSync("bash", ["-c", `ls -d ${postgresRoot}/*/bin 2>/dev/null | sort -V | tail -1`], { encoding: "utf8" });
  const dir = found.stdout.trim();
  return dir === "" ? undefined : dir;
}

let databases = 0;

/** Starts a PostgreSQL server with fsync on (the durability the store promises), on a free port. */
export async function startPostgres(): Promise<PostgresServer> {
  const binDir = postgresBinDir();
  if (binDir === undefined) throw new Error(`PostgreSQL is not installed (no ${postgresRoot}/*/bin): apt-get install postgresql`);
  const dir = await mkdtemp(join(tmpdir(), "holdshelf-pg-"));
  const dataDir = join(dir, "data");
  const asRoot = process.getuid?.() === 0;
  const identity = asRoot ? { uid: idOf("-u"), gid: idOf("-g") } : {};
  if (asRoot) await chown(dir, identity.uid!, identity.gid!);
  const init = spawnSync(join(binDir, "initdb"), ["-D", dataDir, "-U", user, "--auth=trust", "-E", "UTF8", "--no-sync"], {
    encoding: "utf8",
    cwd: dir,
    ...identity,
  });
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr || init.stdout}`);

  const port = await freePort();
  const server = spawn(join(binDir, "postgres"), [
    "-D", dataDir,
    "-p", String(port),
    "-c", "listen_addresses=127.0.0.1",
    "-c", "unix_socket_directories=",
    "-c", "fsync=on",
    "-c", "max_connections=200",
    "-c", "shared_buffers=64MB",
  ], { stdio: ["ignore", "ignore", "pipe"], cwd: dir, ...identity });
  let log = "";
  server.stderr!.on("data", (chunk: Buffer) => (log = (log + chunk.toString()).slice(-4000)));
  const url = (database = "postgres"): string => `postgres://${user}@127.0.0.1:${port}/${database}`;
  await waitUntilReady(url(), server, () => log);
  return {
    port,
    url,
    async createDatabase() {
      const name = `holdshelf_${process.pid}_${++databases}`;
      const client = new pg.Client({ connectionString: url() });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE ${name}`);
      } finally {
        await client.end();
      }
      return url(name);
    },
    async stop() {
      await stopProcess(server);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function waitUntilReady(url: string, server: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (server.exitCode !== null) throw new Error(`postgres exited (${server.exitCode}): ${log()}`);
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
    client.on("error", () => undefined);
    try {
      await client.connect();
      await client.end();
      return;
    } catch (error) {
      await client.end().catch(() => undefined);
      if (Date.now() > deadline) throw new Error(`postgres did not accept connections in 30 s: ${log()}`, { cause: error });
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/** Fast shutdown (SIGINT): clients are disconnected, and the server stops without waiting for them. */
async function stopProcess(server: ChildProcess): Promise<void> {
  if (server.exitCode !== null || server.signalCode !== null) return;
  const exited = once(server, "exit");
  server.kill("SIGINT");
  const timer = setTimeout(() => server.kill("SIGKILL"), 10_000);
  await exited;
  clearTimeout(timer);
}

async function freePort(): Promise<number> {
  const probe = createServer();
  probe.listen(0, "127.0.0.1");
  await once(probe, "listening");
  const { port } = probe.address() as { port: number };
  probe.close();
  await once(probe, "close");
  return port;
}

/** The uid (`-u`) or gid (`-g`) of the postgres user. */
function idOf(flag: "-u" | "-g"): number {
  return Number(spawnSync("id", [flag, "postgres"], { encoding: "utf8" }).stdout.trim());
}
