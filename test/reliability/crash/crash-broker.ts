import { once } from "node:events";
import { startBrokerProcess, type BrokerProcess } from "../../support/broker-process.js";

/** What a crash run kills and starts again: one broker, or the serving broker of a cluster (crash-cluster.ts). */
export interface CrashTarget {
  /** Starts (or waits for) the broker that serves next; returns its gRPC address. */
  start(): Promise<string>;
  /**
   * The SQS endpoint's base URL of the broker start() last started; a
   * target without it (the cluster: its endpoint is out of the crash
   * harness's scope) gets no SQS load.
   */
  sqsUrl?(): string;
  /** Ends the serving broker's life (SIGKILL, or worse) and waits until it is over. */
  kill(): Promise<void>;
  /** Kills every process it started: the run's end, or a failure. */
  stop(): Promise<void>;
  /** Exits nobody asked for, and error lines the brokers logged: each one is a failure. */
  readonly problems: string[];
  /**
   * Whether a kill may end a broker that only passes a client's stream on to
   * a live one (a cluster's forwarding): the owner then sees the stream break.
   */
  readonly passesStreams?: boolean;
  /** Figures of its own for the report (takeover times, say). */
  figures?(): Record<string, unknown>;
}

/** A `holdshelf serve` child on one data directory, serving gRPC and SQS, that can be SIGKILLed and started again. */
export class CrashBroker implements CrashTarget {
  private current: BrokerProcess | undefined;
  private currentSqsUrl: string | undefined;
  private expectedExit = false;
  readonly problems: string[] = [];

  constructor(private readonly dataDir: string) {}

  /** Starts the broker (default fsync durability, SQS on a free port) and returns its gRPC address. */
  async start(): Promise<string> {
    // The last --sqs-listen wins over startBrokerProcess's "off".
    const broker = await startBrokerProcess(this.dataDir, ["--sqs-listen", "127.0.0.1:0"]);
    this.expectedExit = false;
    broker.child.once("exit", (code, signal) => {
      if (!this.expectedExit)
        this.problems.push(`broker exited by itself (${code ?? signal}): ${broker.logs().slice(-4000)}`);
    });
    this.current = broker;
    this.currentSqsUrl = sqsUrlOf(broker.logs());
    return broker.address;
  }

  /** The SQS endpoint of the broker started last. */
  sqsUrl(): string {
    if (this.currentSqsUrl === undefined) throw new Error("the broker has not started");
    return this.currentSqsUrl;
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

/** The "sqsUrl" of a broker's "holdshelf listening" line (its first fields are written by then). */
function sqsUrlOf(logs: string): string {
  const match = /"msg":"holdshelf listening",[^\n]*?"sqsUrl":"([^"]+)"/.exec(logs);
  if (match === null) throw new Error(`no sqsUrl in the broker's listening line: ${logs}`);
  return match[1]!;
}
