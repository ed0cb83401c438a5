import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { createQueueServiceRpc } from "../../../src/client/rpc-client.js";
import { RpcError } from "../../../src/client/rpc-error.js";
import { assignShards } from "../../../src/cluster/shard-assignment.js";
import { holdshelfBin } from "../../support/broker-process.js";
import type { CrashTarget } from "./crash-broker.js";
import { ALL_QUEUES } from "./crash-queues.js";
import type { SeededRandom } from "./seeded-random.js";

/** A cluster of `holdshelf serve --postgres` processes on one database. */
export interface CrashClusterOptions {
  /** The PostgreSQL hosts the brokers are given (a primary and its synchronous standby, say). */
  readonly postgresUrls: readonly string[];
  /**
   * Fails the database over (SIGKILL the primary, promote the standby) once,
   * at the middle cycle, in place of that cycle's broker event; none if unset.
   */
  readonly failOverDatabase?: () => Promise<void>;
  /** The cycle count, to find the middle one. */
  readonly cycles: number;
  readonly random: SeededRandom;
  /** Broker processes kept running, sharing the shards. */
  readonly brokers: number;
  /**
   * Every this many cycles, a broker is paused (SIGSTOP) past its lease
   * instead of killed; and every this many, offset by half, its member
   * session is cut in PostgreSQL while it runs on.
   */
  readonly pauseEvery: number;
  readonly shardLeaseTtlMs: number;
}

/** One broker process slot: restarted under the same node id after each kill. */
interface Slot {
  readonly nodeId: string;
  child: ChildProcess | undefined;
  log: string;
  address: string | undefined;
  /** SIGSTOPped this moment: it answers nothing, and others must take its shards. */
  paused: boolean;
  /** Whether it was ever paused or cut off: its "storage unavailable" lines are then expected. */
  fenced: boolean;
}

const listeningAddress = /"msg":"holdshelf listening","address":"([^"]+)"/;
// Rounds of probes: a settled cluster answers every queue on every broker.
const probeIntervalMs = 20;

/**
 * The crash harness's target in cluster mode: several broker processes on
 * one PostgreSQL, sharing the shards, the clients on a random one of them
 * (which forwards what it does not own). A cycle ends one random broker's
 * life by SIGKILL (sometimes a second one's too), by SIGSTOP held past its
 * lease until the others serve its queues, then SIGCONT (its late calls
 * must all fail), or by cutting its member session (its commits racing a
 * claim must fail the fence); once, at the middle cycle, the database itself
 * fails over. Records how long the queues took to be served again, by path:
 * from the event to every queue answering on every live broker.
 */
export class CrashCluster implements CrashTarget {
  readonly problems: string[] = [];
  readonly passesStreams = true;
  private readonly slots: Slot[];
  private readonly takeovers: { kill: number[]; pause: number[]; cut: number[]; database: number[] } = {
    kill: [],
    pause: [],
    cut: [],
    database: [],
  };
  private lives = 0;
  /** Which of the hosts is the primary now: the next one after a failover. */
  private databaseIndex = 0;

  constructor(private readonly options: CrashClusterOptions) {
    this.slots = Array.from({ length: options.brokers }, (_, index) => ({
      nodeId: `crash-${index}`,
      child: undefined,
      log: "",
      address: undefined,
      paused: false,
      fenced: false,
    }));
  }

  /** Starts the brokers that are down, waits until the shards are spread over all of them, and returns one's address. */
  async start(): Promise<string> {
    for (const slot of this.slots) if (slot.child === undefined) this.spawn(slot);
    await this.settled();
    const live = this.live();
    return live[this.options.random.int(0, live.length - 1)]!.address!;
  }

  async kill(): Promise<void> {
    const life = ++this.lives;
    if (life === Math.ceil(this.options.cycles / 2) && this.options.failOverDatabase !== undefined)
      return this.failOver();
    const live = this.live();
    const victim = live[this.options.random.int(0, live.length - 1)]!;
    if (life % this.options.pauseEvery === 0 && live.length > 1) return this.pause(victim);
    if (life % this.options.pauseEvery === Math.floor(this.options.pauseEvery / 2)) return this.cut(victim);
    const at = Date.now();
    const victims = [victim];
    const others = live.filter((slot) => slot !== victim);
    // Now and then two die at once: every shard falls to the last one.
    if (others.length > 1 && this.options.random.chance(0.3))
      victims.push(others[this.options.random.int(0, others.length - 1)]!);
    await Promise.all(victims.map((slot) => this.killSlot(slot)));
    await this.servedAgain("kill", at);
  }

  /** Kills every process (the run's end, or a failure). */
  async stop(): Promise<void> {
    for (const slot of this.slots) if (slot.paused) slot.child?.kill("SIGCONT");
    await Promise.all(this.slots.map((slot) => this.killSlot(slot)));
  }

  /** Takeover times in ms by path, and how many of each. */
  figures(): Record<string, unknown> {
    return {
      takeoversAfterKill: summary(this.takeovers.kill),
      takeoversAfterPause: summary(this.takeovers.pause),
      takeoversAfterCut: summary(this.takeovers.cut),
      servingAgainAfterDatabaseFailover: summary(this.takeovers.database),
    };
  }

  /**
   * SIGSTOPs a broker until the others serve every queue (its leases ran out
   * and they claimed its shards), then SIGCONTs it: it wakes up fenced, with
   * calls still open.
   */
  private async pause(victim: Slot): Promise<void> {
    victim.fenced = true;
    victim.paused = true;
    const at = Date.now();
    victim.child!.kill("SIGSTOP");
    try {
      await this.servedAgain("pause", at);
    } finally {
      victim.paused = false;
      victim.child?.kill("SIGCONT");
    }
  }

  /**
   * Ends a broker's member session in PostgreSQL while the process runs on,
   * as a network cut between the two would: its member lock is free at
   * once, so another broker may claim its shards while it still has commits
   * on their way, which the fence must refuse. The broker itself stops
   * writing when it notices, and may claim them back first.
   */
  private async cut(victim: Slot): Promise<void> {
    victim.fenced = true;
    const at = Date.now();
    await this.admin(async (admin) => {
      await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1", [
        `holdshelf member ${victim.nodeId}`,
      ]);
    });
    await this.servedAgain("cut", at);
  }

  /**
   * Kills the PostgreSQL primary and promotes its synchronous standby under
   * the running brokers: every broker loses its connections and serves
   * again from the promoted host, which every broker was given.
   */
  private async failOver(): Promise<void> {
    for (const slot of this.slots) slot.fenced = true;
    const at = Date.now();
    await this.options.failOverDatabase!();
    this.databaseIndex++;
    await this.servedAgain("database", at);
  }

  /** Waits until every queue answers on every live broker, and records how long that took since `at`. */
  private async servedAgain(path: keyof CrashCluster["takeovers"], at: number): Promise<void> {
    await this.waitFor(`every queue served again after a ${path}`, () => this.everyQueueAnswers());
    this.takeovers[path].push(Date.now() - at);
  }

  /**
   * Waits until each live broker listens, its shards are exactly the ones
   * the assignment gives it among the live brokers, and every queue answers
   * on every one of them: no shard moves during the cycle that follows.
   */
  private async settled(): Promise<void> {
    await this.waitFor(
      "every broker listening",
      async () => this.live().length === this.slots.filter((slot) => slot.child !== undefined).length,
    );
    await this.waitFor("the shards spread over the live brokers", () => this.spreadAsAssigned());
    await this.waitFor("every queue served on every broker", () => this.everyQueueAnswers());
  }

  private async spreadAsAssigned(): Promise<boolean> {
    const live = this.live()
      .map((slot) => slot.nodeId)
      .sort();
    return this.admin(async (admin) => {
      const { rows } = await admin.query<{ shard: number; owner: string | null }>(
        "SELECT shard, CASE WHEN expires_at > now() THEN owner END AS owner FROM holdshelf_shards ORDER BY shard",
      );
      const assigned = assignShards(live, rows.length);
      return rows.every((row) => row.owner === assigned[row.shard]);
    });
  }

  /**
   * Whether a GetQueue of every queue is answered by its broker through every
   * live broker that is not paused: found, or (before the run created them)
   * not found, but never QUEUE_MOVING or unreachable.
   */
  private async everyQueueAnswers(): Promise<boolean> {
    for (const slot of this.live()) {
      const rpc = createQueueServiceRpc(slot.address!);
      try {
        for (const name of ALL_QUEUES) {
          // A short deadline: a call forwarded to a paused broker hangs, and would hide the moment its queue moved.
          const answered = await rpc.getQueue({ name }, { deadline: Date.now() + 500 }).then(
            () => true,
            (error: unknown) => error instanceof RpcError && error.reason === "QUEUE_NOT_FOUND",
          );
          if (!answered) return false;
        }
      } finally {
        rpc.close();
      }
    }
    return true;
  }

  private async waitFor(what: string, done: () => Promise<boolean>): Promise<void> {
    const giveUpAt = Date.now() + 60_000;
    while (!(await done().catch(() => false))) {
      if (Date.now() > giveUpAt)
        throw new Error(`not ${what} within 60 s: ${this.slots.map((slot) => slot.log.slice(-1000)).join("\n")}`);
      await sleep(probeIntervalMs);
    }
  }

  /** The brokers running, listening and not paused. */
  private live(): Slot[] {
    return this.slots.filter((slot) => slot.child !== undefined && slot.address !== undefined && !slot.paused);
  }

  private async admin<T>(use: (admin: pg.Client) => Promise<T>): Promise<T> {
    const admin = new pg.Client({ connectionString: this.options.postgresUrls[this.databaseIndex]! });
    await admin.connect();
    try {
      return await use(admin);
    } finally {
      await admin.end();
    }
  }

  private spawn(slot: Slot): void {
    const args = [
      "serve",
      "--postgres",
      this.options.postgresUrls.join(","),
      "--node-id",
      slot.nodeId,
      "--listen",
      "127.0.0.1:0",
      "--metrics-listen",
      "off",
      "--sqs-listen",
      "off",
      "--console-listen",
      "off",
      "--shard-lease-ttl",
      `${this.options.shardLeaseTtlMs}ms`,
    ];
    const child = spawn(process.execPath, [holdshelfBin, ...args], { stdio: ["ignore", "ignore", "pipe"] });
    slot.child = child;
    slot.log = "";
    slot.address = undefined;
    child.stderr!.on("data", (chunk: Buffer) => {
      slot.log += chunk.toString();
      slot.address ??= listeningAddress.exec(slot.log)?.[1];
    });
    child.once("exit", (code, signal) => {
      if (slot.child === child) {
        slot.child = undefined;
        this.problems.push(`broker ${slot.nodeId} exited by itself (${code ?? signal}): ${slot.log.slice(-4000)}`);
      }
    });
  }

  private async killSlot(slot: Slot): Promise<void> {
    const child = slot.child;
    if (child === undefined) return;
    slot.child = undefined;
    slot.address = undefined;
    this.collectErrors(slot);
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, "exit");
    child.kill("SIGKILL");
    await exited;
  }

  /** Error lines a broker logged reach no client: each is a problem, except a fenced broker's storage outage. */
  private collectErrors(slot: Slot): void {
    for (const line of slot.log.split("\n")) {
      if (!line.includes('"level":"error"')) continue;
      if (slot.fenced && line.includes('"msg":"storage unavailable')) continue;
      this.problems.push(`broker ${slot.nodeId} logged: ${line}`);
    }
  }
}

function summary(values: number[]): { count: number; p50: number; p99: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (share: number): number => sorted[Math.min(sorted.length - 1, Math.ceil(share * sorted.length) - 1)] ?? 0;
  return { count: sorted.length, p50: at(0.5), p99: at(0.99), max: sorted.at(-1) ?? 0 };
}
