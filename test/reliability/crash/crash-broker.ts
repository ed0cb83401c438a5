import { once } from "node:events";
import { startBrokerProcess, type BrokerProcess } from "../../support/broker-process.js";

/** What a crash run kills and starts again: one broker, or the serving broker of a cluster (crash-cluster.ts). */
export interface CrashTarget {
  /** Starts (or waits for) the broker that serves next; returns its gRPC address. */
  start(): Promise<string>;
  /** Ends the serving broker's life (SIGKILL, or worse) and waits until it is over. */
  kill(): Promise<void>;
  /** Kills every process it started: the run's end, or a failure. */
  stop(): Promise<void>;
  /** Exits nobody asked for, and error lines the brokers logged: each one is a failure. */
  readonly problems: string[];
  /** Figures of its own for the report (takeover times, say). */
  figures?(): Record<string, unknown>;
}

/** A `holdshelf serve` child on one data directory that can be SIGKILLed and started again. */
export class CrashBroker implements CrashTarget {
  private current: BrokerProcess | undefined;
  private expectedExit = false;
  readonly problems: string[] = [];

  constructor(private readonly dataDir: string) {}

  /** Starts the broker (default fsync durability) and returns its gRPC address. */
  async start(): Promise<string> {
    const broker = await startBrokerProcess(this.dataDir);
    this.expectedExit = false;
    broker.child.once("exit", (code, signal) => {
      if (!this.expectedExit) this.problems.push(`broker exited by itself (${code ?? signal}): ${broker.logs().slice(-4000)}`);
    });
    this.current = broker;
    return broker.address;
  }

  stop(): Promise<void> {
    return this.kill();
  }

  /** SIGKILLs the broker and waits until the process is gone. */
  async kill(): Promise<void> {
    const broker = this.current;
    this.current = undefined;
    if (!broker) return;
    // Errors the broker logged (a failed dead-letter move, say) reach no client: read them here.
    for (const line of broker.logs().split("\n")) {
      if (line.includes('"level":"error"')) this.problems.push(`the broker logged: ${line}`);
    }
    if (broker.child.exitCode !== null || broker.child.signalCode !== null) return;
    this.expectedExit = true;
    const exited = once(broker.child, "exit");
    broker.child.kill("SIGKILL");
    await exited;
  }
}
