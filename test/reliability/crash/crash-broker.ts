import { once } from "node:events";
import { startBrokerProcess, type BrokerProcess } from "../../support/broker-process.js";

/** A `holdshelf serve` child on one data directory that can be SIGKILLed and started again. */
export class CrashBroker {
  private current: BrokerProcess | undefined;
  private expectedExit = false;
  /** Exits nobody asked for, with the process's log, and error lines the broker logged: each one is a failure. */
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
