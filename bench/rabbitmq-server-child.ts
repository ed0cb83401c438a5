/**
 * A RabbitMQ node as a child process, for the second peer comparison
 * (scenario 8): finding the installation, starting a node of its own on free
 * loopback ports with temporary data and log directories, and stopping it.
 *
 * It runs as whichever user runs the bench, root included: RabbitMQ itself
 * does not refuse root. Debian's /usr/sbin/rabbitmq-server is a wrapper that
 * switches to the rabbitmq user and sends the log to /var/log, so the bench
 * runs the script behind it, /usr/lib/rabbitmq/bin/rabbitmq-server: a shell
 * that starts the Erlang VM (beam.smp) as its child and, on SIGTERM, stops
 * the VM cleanly and waits for it.
 *
 * Erlang distribution needs epmd. The bench starts its own, on a free
 * loopback port, as a child it can stop; a node finding no epmd would start
 * one as a daemon that outlives the bench.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { constants } from "node:fs";
import { access, mkdir, writeFile } from "node:fs/promises";
import { connect as connectTcp, createServer } from "node:net";
import { delimiter, join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { connect as connectAmqp } from "amqplib";
import { findProcess, monotonicMs } from "./proc-stats.js";

/** The programs a RabbitMQ node needs. */
export interface RabbitMqInstall {
  /** The script that execs the Erlang VM (not Debian's wrapper). */
  readonly server: string;
  readonly epmd: string;
}

/** A running RabbitMQ node. */
export interface RabbitMqServerChild {
  /** The Erlang VM's pid (beam.smp): where the server's CPU is read. */
  readonly pid: number;
  /** amqp://guest:guest@127.0.0.1:<port>: guest may log in from loopback. */
  readonly url: string;
  /** RabbitMQ's and Erlang's versions, from the node's log, such as "3.10.8 on Erlang 25.2.3". */
  readonly version: string;
  /** Stops the node (SIGTERM to its script: a clean shutdown) and then its epmd, and waits for both to exit. */
  stop(): Promise<void>;
}

const startTimeoutMs = 120_000;
const stopTimeoutMs = 60_000;

/** The installation, or undefined where RabbitMQ or Erlang's epmd is not installed. */
export async function findRabbitMq(): Promise<RabbitMqInstall | undefined> {
  const path = (process.env["PATH"] ?? "").split(delimiter).filter((dir) => dir !== "");
  // Debian and Ubuntu first; then a generic-unix tarball's sbin/ on PATH (but not Debian's wrapper).
  const server = await firstExecutable([
    "/usr/lib/rabbitmq/bin/rabbitmq-server",
    ...path.map((dir) => join(dir, "rabbitmq-server")).filter((file) => file !== "/usr/sbin/rabbitmq-server"),
  ]);
  const epmd = await firstExecutable([...path, "/usr/bin", "/usr/lib/erlang/bin"].map((dir) => join(dir, "epmd")));
  return server === undefined || epmd === undefined ? undefined : { server, epmd };
}

/**
 * Starts a node whose data, logs, configuration and Erlang cookie live under
 * `dir`, with the management plugin and every other plugin off, and resolves
 * once it accepts AMQP connections.
 */
export async function startRabbitMq(install: RabbitMqInstall, dir: string): Promise<RabbitMqServerChild> {
  const [amqpPort, distPort, epmdPort] = [await freePort(), await freePort(), await freePort()];
  const epmd = spawn(install.epmd, ["-port", String(epmdPort), "-address", "127.0.0.1"], { stdio: "ignore" });
  const epmdExited = once(epmd, "exit");
  try {
    await waitForTcp(epmdPort, 10_000);
  } catch (error) {
    epmd.kill("SIGTERM");
    await epmdExited;
    throw error;
  }
  const stopEpmd = async (): Promise<void> => {
    if (epmd.exitCode === null && epmd.signalCode === null) epmd.kill("SIGTERM");
    await epmdExited;
  };

  let node: ChildProcess | undefined;
  try {
    const env = await nodeEnvironment(dir, { amqpPort, distPort, epmdPort });
    node = spawn(install.server, [], { cwd: dir, env, stdio: ["ignore", "pipe", "pipe"] });
    const started = await waitForStartup(node, amqpPort);
    const nodeProcess = node;
    const nodeExited = once(nodeProcess, "exit") as Promise<[number | null, NodeJS.Signals | null]>;
    let stopped: Promise<void> | undefined;
    return {
      ...started,
      stop: () =>
        (stopped ??= (async () => {
          try {
            await stopNode(nodeProcess, nodeExited, started.pid);
          } finally {
            await stopEpmd();
          }
        })()),
    };
  } catch (error) {
    if (node?.pid !== undefined) {
      const exited = once(node, "exit") as Promise<[number | null, NodeJS.Signals | null]>;
      await stopNode(node, exited, findProcess(node.pid, "beam.smp") ?? node.pid).catch(() => undefined);
    }
    await stopEpmd();
    throw error;
  }
}

/** The environment of a node that touches nothing outside `dir` and listens on loopback only. */
async function nodeEnvironment(
  dir: string,
  ports: { amqpPort: number; distPort: number; epmdPort: number },
): Promise<NodeJS.ProcessEnv> {
  await mkdir(join(dir, "mnesia"), { recursive: true });
  await mkdir(join(dir, "log"), { recursive: true });
  // No listeners here: RABBITMQ_NODE_IP_ADDRESS and _PORT set the one listener, and a
  // listeners.tcp key would replace it with one on every interface.
  await writeFile(join(dir, "rabbitmq.conf"), "# holdshelf bench: everything from the environment\n");
  // An empty list: no management plugin (nor any other), as in a minimal broker.
  await writeFile(join(dir, "enabled_plugins"), "[].\n");
  // Resolve names (localhost, of the node name) from /etc/hosts inside the VM: the default,
  // native lookup runs an inet_gethost helper whose worker can outlive the VM as an orphan.
  await writeFile(join(dir, "erl_inetrc"), "{lookup, [file]}.\n");
  const name = `holdshelf-bench-${process.pid}-${Date.now().toString(36)}`;
  return {
    ...process.env,
    // The Erlang cookie is read from, or created in, $HOME/.erlang.cookie.
    HOME: dir,
    RABBITMQ_NODENAME: `${name}@localhost`,
    RABBITMQ_NODE_IP_ADDRESS: "127.0.0.1",
    RABBITMQ_NODE_PORT: String(ports.amqpPort),
    RABBITMQ_DIST_PORT: String(ports.distPort),
    RABBITMQ_MNESIA_BASE: join(dir, "mnesia"),
    RABBITMQ_LOG_BASE: join(dir, "log"),
    // "-": to standard output, where the start is watched for.
    RABBITMQ_LOGS: "-",
    RABBITMQ_PID_FILE: join(dir, "rabbitmq.pid"),
    RABBITMQ_CONFIG_FILE: join(dir, "rabbitmq.conf"),
    RABBITMQ_ADVANCED_CONFIG_FILE: join(dir, "advanced.config"),
    RABBITMQ_ENABLED_PLUGINS_FILE: join(dir, "enabled_plugins"),
    RABBITMQ_PLUGINS_EXPAND_DIR: join(dir, "plugins-expand"),
    // Not /etc/rabbitmq/rabbitmq-env.conf, which could set another node name or ports.
    RABBITMQ_CONF_ENV_FILE: join(dir, "rabbitmq-env.conf"),
    // Distribution on loopback only, through the bench's epmd.
    RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS: "-kernel inet_dist_use_interface {127,0,0,1}",
    ERL_EPMD_PORT: String(ports.epmdPort),
    ERL_EPMD_ADDRESS: "127.0.0.1",
    ERL_INETRC: join(dir, "erl_inetrc"),
  };
}

/**
 * Waits for the node's "Server startup complete" log line and then for an
 * AMQP connection to succeed; rejects, with the log's tail, if it exits first
 * or takes longer than startTimeoutMs.
 */
async function waitForStartup(node: ChildProcess, amqpPort: number): Promise<Omit<RabbitMqServerChild, "stop">> {
  // Keep only the tail of the log: it is read for the version and to explain a failure.
  let log = "";
  let version = "";
  let complete = false;
  const append = (chunk: Buffer): void => {
    log = (log + chunk.toString()).slice(-16_384);
    version ||= /Starting RabbitMQ (\S+ on Erlang \S+)/.exec(log)?.[1] ?? "";
    complete ||= log.includes("Server startup complete");
  };
  node.stdout!.on("data", append);
  node.stderr!.on("data", append);
  let exited: string | undefined;
  node.once("exit", (code, signal) => (exited = String(code ?? signal)));

  const url = `amqp://guest:guest@127.0.0.1:${amqpPort}`;
  const untilMs = monotonicMs() + startTimeoutMs;
  for (;;) {
    if (exited !== undefined) throw new Error(`rabbitmq-server exited (${exited}) while starting: ${log}`);
    if (monotonicMs() > untilMs)
      throw new Error(`rabbitmq-server did not accept AMQP connections in ${startTimeoutMs / 1000} s: ${log}`);
    if (complete && (await acceptsAmqp(url))) break;
    await sleep(200);
  }
  // The VM is the script's child (or the script itself, where it execs the VM: with RABBITMQ_ALLOW_INPUT).
  const pid = findProcess(node.pid!, "beam.smp");
  if (pid === undefined) throw new Error(`no beam.smp process under rabbitmq-server (pid ${node.pid})`);
  return { pid, url, version: version || "(version not logged)" };
}

/**
 * SIGTERM to the script, which stops the VM cleanly and waits for it; if it
 * has not exited after stopTimeoutMs, SIGKILL to the VM and the script both.
 */
async function stopNode(
  node: ChildProcess,
  exited: Promise<[number | null, NodeJS.Signals | null]>,
  vmPid: number,
): Promise<void> {
  if (node.exitCode !== null || node.signalCode !== null) return;
  node.kill("SIGTERM");
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<"late">((resolve) => (timer = setTimeout(() => resolve("late"), stopTimeoutMs)));
  const outcome = await Promise.race([exited, late]).finally(() => clearTimeout(timer));
  if (outcome === "late") {
    // Killing only the script would leave the VM running, an orphan.
    try {
      process.kill(vmPid, "SIGKILL");
    } catch {
      // The VM had exited already.
    }
    node.kill("SIGKILL");
    await exited;
    throw new Error(`rabbitmq-server did not stop within ${stopTimeoutMs / 1000} s of SIGTERM: killed`);
  }
}

async function acceptsAmqp(url: string): Promise<boolean> {
  try {
    await (await connectAmqp(url)).close();
    return true;
  } catch {
    return false;
  }
}

/** Resolves once something accepts TCP connections on a loopback port. */
async function waitForTcp(port: number, timeoutMs: number): Promise<void> {
  const untilMs = monotonicMs() + timeoutMs;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connectTcp(port, "127.0.0.1");
      socket
        .once("connect", () => {
          socket.destroy();
          resolve(true);
        })
        .once("error", () => resolve(false));
    });
    if (open) return;
    if (monotonicMs() > untilMs) throw new Error(`nothing listened on 127.0.0.1:${port} within ${timeoutMs} ms`);
    await sleep(50);
  }
}

/** A loopback port free now (the kernel's pick); another process could take it before it is used, which would fail the start. */
async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === "string") throw new Error("no port from listen(0)");
  return address.port;
}

async function firstExecutable(paths: readonly string[]): Promise<string | undefined> {
  for (const path of paths) {
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
