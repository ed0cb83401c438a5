// A real PostgreSQL server for tests: a data directory in a temporary
// directory, a postgres process on a free loopback port, stopped and removed
// at the end. The data directory is a copy of one initdb made once per
// vitest project (postgres-templates.ts): copying takes a fraction of
// initdb's time, and every test file of the postgres and cluster projects
// starts a server.
// PostgreSQL refuses to run as root, so as root both run as the "postgres"
// user Debian's package creates, on a directory it owns. They are spawned
// with that uid rather than through runuser, so that the signal that stops
// the server reaches postgres itself (runuser does not pass SIGINT on, and
// killing it would leave the server running).
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { chown, mkdtemp, rename, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, inject } from "vitest";
import { freePort } from "./free-port.js";
import { skipWithout } from "./required-tools.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** The directory where the project's PostgreSQL template data directory (`data`) is made once (postgres-templates.ts). */
    postgresTemplates: string;
  }
}

/** A running PostgreSQL server. */
export interface PostgresServer {
  readonly port: number;
  /** A connection URL for `database` on this server. */
  url(database?: string): string;
  /** Creates a new, empty database and returns its URL. */
  createDatabase(): Promise<string>;
  /** Kills the server with SIGKILL, as a machine's death would; its data stays until `stop`. */
  kill(): Promise<void>;
  /** Stops the server (unless killed) and removes its data. */
  stop(): Promise<void>;
}

/** A streaming standby of a primary; it takes writes once promoted. */
export interface PostgresStandby extends PostgresServer {
  /** Promotes it to primary (pg_promote) and resolves once it takes writes. */
  promote(): Promise<void>;
}

/** Options of a primary. */
export interface PostgresOptions {
  /**
   * Commits wait for this standby (by its name) to have the WAL, as
   * synchronous replication does: an acknowledged commit survives the
   * primary's death once the standby is promoted.
   */
  readonly synchronousStandby?: string;
}

const user = "holdshelf";
const postgresRoot = "/usr/lib/postgresql";

/** The directory of PostgreSQL's server binaries (initdb, postgres), or undefined if none is installed. */
export function postgresBinDir(): string | undefined {
  const found = spawnSync("bash", ["-c", `ls -d ${postgresRoot}/*/bin 2>/dev/null | sort -V | tail -1`], {
    encoding: "utf8",
  });
  const dir = found.stdout.trim();
  return dir === "" ? undefined : dir;
}

/**
 * Whether tests that need PostgreSQL skip: where it is not installed,
 * except in CI, which installs it (.ci/run), so there they fail instead.
 */
export const skipWithoutPostgres = skipWithout(postgresBinDir() === undefined ? ["postgresql (initdb, postgres)"] : []);

/**
 * One PostgreSQL server for the calling test file: started before its tests
 * (unless they skip for want of PostgreSQL) and stopped after them.
 * Returns a getter, since the server exists only once the file's tests run.
 */
export function postgresForFile(): () => PostgresServer {
  let server: PostgresServer | undefined;
  beforeAll(async () => {
    if (!skipWithoutPostgres) server = await startPostgres();
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });
  return () => {
    if (server === undefined)
      throw new Error("PostgreSQL is not running: call postgresForFile() at the top of the test file");
    return server;
  };
}

let databases = 0;

/** Where a server's files live, and how to run PostgreSQL's programs on them (as the postgres user under root). */
interface ServerHome {
  readonly binDir: string;
  readonly dir: string;
  readonly dataDir: string;
  readonly identity: { uid?: number; gid?: number };
}

async function makeHome(): Promise<ServerHome> {
  const binDir = postgresBinDir();
  if (binDir === undefined)
    throw new Error(`PostgreSQL is not installed (no ${postgresRoot}/*/bin): apt-get install postgresql`);
  const dir = await mkdtemp(join(tmpdir(), "holdshelf-pg-"));
  const identity = process.getuid?.() === 0 ? { uid: idOf("-u"), gid: idOf("-g") } : {};
  if (identity.uid !== undefined) await chown(dir, identity.uid, identity.gid!);
  return { binDir, dir, dataDir: join(dir, "data"), identity };
}

function runTool(home: ServerHome, tool: string, args: string[]): void {
  runAs(home, join(home.binDir, tool), args);
}

function runAs(home: ServerHome, command: string, args: string[]): void {
  const result = spawnSync(command, args, { encoding: "utf8", cwd: home.dir, ...home.identity });
  if (result.status !== 0) throw new Error(`${command} failed: ${result.stderr || result.stdout}`);
}

const initdbArgs = (dataDir: string): string[] => [
  "-D",
  dataDir,
  "-U",
  user,
  "--auth=trust",
  "-E",
  "UTF8",
  "--no-sync",
];

/** Fills `home`'s data directory: a copy of the project's template, which the project's first server makes. */
async function initialize(home: ServerHome): Promise<void> {
  const templates = inject("postgresTemplates");
  const template = join(templates, "data");
  if (!existsSync(template)) {
    // Files running side by side may both build one; the first rename wins, and the other's copy goes.
    if (home.identity.uid !== undefined) await chown(templates, home.identity.uid, home.identity.gid!);
    const building = join(templates, `building-${process.pid}`);
    runTool(home, "initdb", initdbArgs(building));
    await rename(building, template).catch(() => rm(building, { recursive: true, force: true }));
  }
  runAs(home, "cp", ["-a", template, home.dataDir]);
}

/** Starts a PostgreSQL server with fsync on (the durability the store promises), on a free port. */
export async function startPostgres(options: PostgresOptions = {}): Promise<PostgresServer> {
  const home = await makeHome();
  await initialize(home);
  const settings =
    options.synchronousStandby === undefined ? [] : [`synchronous_standby_names=${options.synchronousStandby}`];
  return runServer(home, settings);
}

/** Starts a synchronous streaming standby of `primary` named `name` (a base backup, then WAL streamed). */
export async function startStandby(primary: PostgresServer, name: string): Promise<PostgresStandby> {
  const home = await makeHome();
  const conninfo = `host=127.0.0.1 port=${primary.port} user=${user} application_name=${name}`;
  runTool(home, "pg_basebackup", [
    "-d",
    conninfo,
    "-D",
    home.dataDir,
    "-X",
    "stream",
    "--write-recovery-conf",
    "--no-sync",
  ]);
  const server = await runServer(home, []);
  await waitFor(
    primary.url(),
    `SELECT 1 FROM pg_stat_replication WHERE application_name = '${name}' AND sync_state = 'sync'`,
  );
  return {
    ...server,
    async promote() {
      const client = new pg.Client({ connectionString: server.url() });
      await client.connect();
      try {
        await client.query("SELECT pg_promote(true, 30)");
      } finally {
        await client.end();
      }
      await waitFor(server.url(), "SELECT 1 WHERE NOT pg_is_in_recovery()");
    },
  };
}

async function runServer(home: ServerHome, settings: string[]): Promise<PostgresServer> {
  const port = await freePort();
  const configuration = [
    "listen_addresses=127.0.0.1",
    "unix_socket_directories=",
    "fsync=on",
    "max_connections=200",
    "shared_buffers=64MB",
    ...settings,
  ];
  const server = spawn(
    join(home.binDir, "postgres"),
    ["-D", home.dataDir, "-p", String(port), ...configuration.flatMap((setting) => ["-c", setting])],
    { stdio: ["ignore", "ignore", "pipe"], cwd: home.dir, ...home.identity },
  );
  let log = "";
  server.stderr!.on("data", (chunk: Buffer) => (log = (log + chunk.toString()).slice(-4000)));
  const url = (database = "postgres"): string => `postgres://${user}@127.0.0.1:${port}/${database}`;
  await waitForPostgres(url(), server, () => log);
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
    async kill() {
      if (server.exitCode !== null || server.signalCode !== null) return;
      const exited = once(server, "exit");
      server.kill("SIGKILL");
      await exited;
    },
    async stop() {
      await stopProcess(server);
      await rm(home.dir, { recursive: true, force: true });
    },
  };
}

/** Polls `sql` on `url` until it returns a row (30 s at most). */
async function waitFor(url: string, sql: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
    client.on("error", () => undefined);
    try {
      await client.connect();
      if ((await client.query(sql)).rowCount! > 0) return;
    } catch {
      // Not up yet: poll again.
    } finally {
      await client.end().catch(() => undefined);
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${sql}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Resolves once a starting server accepts a connection; rejects with its log's tail if it exits first or takes 30 s. */
export async function waitForPostgres(url: string, server: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (server.exitCode !== null || server.signalCode !== null)
      throw new Error(`postgres exited (${server.exitCode ?? server.signalCode}): ${log()}`);
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
    client.on("error", () => undefined);
    try {
      await client.connect();
      await client.end();
      return;
    } catch (error) {
      await client.end().catch(() => undefined);
      if (Date.now() > deadline)
        throw new Error(`postgres did not accept connections in 30 s: ${log()}`, { cause: error });
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/**
 * Immediate shutdown (SIGQUIT): clients are disconnected and the server exits
 * without the checkpoint a fast shutdown makes, which would fsync data that
 * `stop` removes next.
 */
async function stopProcess(server: ChildProcess): Promise<void> {
  if (server.exitCode !== null || server.signalCode !== null) return;
  const exited = once(server, "exit");
  server.kill("SIGQUIT");
  const timer = setTimeout(() => server.kill("SIGKILL"), 10_000);
  await exited;
  clearTimeout(timer);
}

/** The uid (`-u`) or gid (`-g`) of the postgres user. */
function idOf(flag: "-u" | "-g"): number {
  return Number(spawnSync("id", [flag, "postgres"], { encoding: "utf8" }).stdout.trim());
}
