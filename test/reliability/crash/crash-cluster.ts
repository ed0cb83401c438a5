import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { holdshelfBin } from "../../support/broker-process.js";
import type { CrashTarget } from "./crash-broker.js";
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
  /** Broker processes kept running (one serves, the others stand by). */
  readonly brokers: number;
  /**
   * Every this many cycles, the serving broker is paused (SIGSTOP) past its
   * lease instead of killed; and every this many, offset by half, its member
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
  /** Times it began to serve (a start, or storage recovery after it was fenced) that start() has seen. */
  servingSeen: number;
  /** Whether it was ever paused or cut off: its "storage unavailable" lines are then expected. */
  fenced: boolean;
}

// Lines that mean a broker now serves: a fresh start as owner, or a fenced broker that claimed its shards back.
const servingLines = /"msg":"(holdshelf listening|storage available again)"/g;
const listeningAddress = /"msg":"holdshelf listening","address":"([^"]+)"/;

/**
 * The crash harness's target in cluster mode: several broker processes on
 * one PostgreSQL, of which one serves. A cycle ends the serving broker's
 * life by SIGKILL (sometimes with a standby's too), by SIGSTOP held past
 * its lease until another broker serves, then SIGCONT (its late calls must
 * all fail), or by cutting its member session (its commits racing a claim
 * must fail the fence); once, at the middle cycle, the database itself
 * fails over. Records how long each takeover took, by path.
 */
export class CrashCluster implements CrashTarget {
  readonly problems: string[] = [];
  private readonly slots: Slot[];
  private active: Slot | undefined;
  /** When the serving broker's life ended, and how: the next start() measures the takeover from it. */
  private ended: { at: number; path: "kill" | "pause" | "cut" | "database" } | undefined;
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
      servingSeen: 0,
      fenced: false,
    }));
  }

  async start(): Promise<string> {
    if (this.active === undefined && this.ended === undefined) {
      // The first start: one broker first, so it is the one that serves; then the standbys.
      this.spawn(this.slots[0]!);
      const first = await this.nextServing();
      for (const slot of this.slots) if (slot.child === undefined) this.spawn(slot);
      return first.address!;
    }
    for (const slot of this.slots) if (slot.child === undefined) this.spawn(slot);
    const serving = await this.nextServing();
    if (this.ended !== undefined) {
      const took = Date.now() - this.ended.at;
      this.takeovers[this.ended.path].push(took);
    }
    return serving.address!;
  }

  async kill(): Promise<void> {
    const active = this.active;
    this.active = undefined;
    if (active === undefined) return;
    const others = this.slots.filter((slot) => slot !== active && slot.child !== undefined);
    const life = ++this.lives;
    if (life === Math.ceil(this.options.cycles / 2) && this.options.failOverDatabase !== undefined) return this.failOver();
    if (life % this.options.pauseEvery === 0 && others.length > 0) return this.pause(active);
    if (life % this.options.pauseEvery === Math.floor(this.options.pauseEvery / 2)) return this.cut(active);
    this.ended = { at: Date.now(), path: "kill" };
    const victims = [active];
    // Now and then a standby dies with it: the takeover falls to the last one.
    if (others.length > 1 && this.options.random.chance(0.3)) victims.push(others[this.options.random.int(0, others.length - 1)]!);
    await Promise.all(victims.map((slot) => this.killSlot(slot)));
  }

  /** Kills every process (the run's end, or a failure). */
  async stop(): Promise<void> {
    this.active = undefined;
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
   * SIGSTOPs the serving broker until another one serves (its lease ran
   * out), then SIGCONTs it: it wakes up fenced, with calls still open.
   */
  private async pause(active: Slot): Promise<void> {
    active.fenced = true;
    this.ended = { at: Date.now(), path: "pause" };
    active.child!.kill("SIGSTOP");
    try {
      await this.nextServing({ peek: true, except: active });
    } finally {
      active.child?.kill("SIGCONT");
    }
  }

  /**
   * Ends the serving broker's member session in PostgreSQL while the process
   * runs on, as a network cut between the two would: its member lock is
   * free at once, so a standby may claim the shards while the broker still
   * has commits on their way, which the fence must refuse. The broker itself
   * stops writing when it notices, and may claim them back first.
   */
  private async cut(active: Slot): Promise<void> {
    active.fenced = true;
    this.ended = { at: Date.now(), path: "cut" };
    const admin = new pg.Client({ connectionString: this.options.postgresUrls[this.databaseIndex]! });
    await admin.connect();
    try {
      await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1", [
        `holdshelf member ${active.nodeId}`,
      ]);
    } finally {
      await admin.end();
    }
  }

  /**
   * Kills the PostgreSQL primary and promotes its synchronous standby under
   * the running brokers: every broker loses its connections, and the
   * serving one (or a standby that claims first) serves again from the
   * promoted host, which every broker was given.
   */
  private async failOver(): Promise<void> {
    for (const slot of this.slots) slot.fenced = true;
    this.ended = { at: Date.now(), path: "database" };
    await this.options.failOverDatabase!();
    this.databaseIndex++;
  }

  private spawn(slot: Slot): void {
    const args = [
      "serve",
      "--postgres", this.options.postgresUrls.join(","),
      "--node-id", slot.nodeId,
      "--listen", "127.0.0.1:0",
      "--metrics-listen", "off",
      "--shard-lease-ttl", `${this.options.shardLeaseTtlMs}ms`,
    ];
    const child = spawn(process.execPath, [holdshelfBin, ...args], { stdio: ["ignore", "ignore", "pipe"] });
    slot.child = child;
    slot.log = "";
    slot.address = undefined;
    slot.servingSeen = 0;
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
    this.collectErrors(slot);
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, "exit");
    child.kill("SIGKILL");
    await exited;
  }

  /** Error lines a broker logged reach no client: each is a problem, except a paused broker's storage outage. */
  private collectErrors(slot: Slot): void {
    for (const line of slot.log.split("\n")) {
      if (!line.includes('"level":"error"')) continue;
      if (slot.fenced && line.includes('"msg":"storage unavailable')) continue;
      this.problems.push(`broker ${slot.nodeId} logged: ${line}`);
    }
  }

  /** Waits for a broker to begin serving; with `peek` it leaves the event for the next start(). */
  private async nextServing(options: { peek?: boolean; except?: Slot } = {}): Promise<Slot> {
    const giveUpAt = Date.now() + 60_000;
    for (;;) {
      for (const slot of this.slots) {
        if (slot === options.except || slot.child === undefined || slot.address === undefined) continue;
        const serving = slot.log.match(servingLines)?.length ?? 0;
        if (serving > slot.servingSeen) {
          if (!options.peek) {
            slot.servingSeen = serving;
            this.active = slot;
          }
          return slot;
        }
      }
      if (Date.now() > giveUpAt) throw new Error(`no broker served within 60 s: ${this.slots.map((slot) => slot.log.slice(-1000)).join("\n")}`);
      await sleep(10);
    }
  }
}

function summary(values: number[]): { count: number; p50: number; p99: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (share: number): number => sorted[Math.min(sorted.length - 1, Math.ceil(share * sorted.length) - 1)] ?? 0;
  return { count: sorted.length, p50: at(0.5), p99: at(0.99), max: sorted.at(-1) ?? 0 };
}
