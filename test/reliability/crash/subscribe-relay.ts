import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { Metadata, type ServiceError } from "@grpc/grpc-js";
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import {
  SubscribeRequestSchema,
  SubscribeResponseSchema,
  type SubscribeResponse,
} from "../../../gen/holdshelf/v1/queue_service_pb.js";
import { RpcError } from "../../../src/client/rpc-error.js";
import { statusDetailsKey } from "../../../src/protocol/error-reasons.js";
import type { SubscribeDialer, SubscribeLink } from "./subscribe-link.js";

const relayScript = fileURLToPath(new URL("../../fixtures/subscribe-relay.mjs", import.meta.url));

/** What the relay process writes: a response's bytes, or how its call ended. */
interface RelayLine {
  readonly data?: string;
  readonly status?: number;
  readonly details?: string;
  readonly statusDetails?: string;
}

/** The end of a call whose process was SIGKILLed: the client never learns what its last requests did. */
export class ConsumerKilled extends Error {
  constructor() {
    super("the consumer process was killed");
  }
}

/**
 * Subscribe calls held by a child process (test/fixtures/subscribe-relay.mjs)
 * that this process drives request by request, so that a SIGKILL of that
 * process is what the broker sees of a crashed consumer while the ledger
 * stays here. One call at a time.
 */
export class SubscribeRelay implements SubscribeDialer {
  private child: ChildProcess | undefined;
  private current: { onResponse(response: SubscribeResponse): void; close(outcome: unknown): void } | undefined;

  open(address: string, onResponse: (response: SubscribeResponse) => void): SubscribeLink {
    const child = this.spawned();
    let resolveClosed!: (outcome: unknown) => void;
    const closed = new Promise<unknown>((resolve) => {
      resolveClosed = resolve;
    });
    const current = {
      onResponse,
      close: (outcome: unknown) => {
        if (this.current === current) this.current = undefined;
        resolveClosed(outcome);
      },
    };
    this.current?.close(new Error("a new call replaced this one"));
    this.current = current;
    const send = (command: object): void => {
      if (this.current === current) child.stdin!.write(`${JSON.stringify(command)}\n`);
    };
    send({ open: address });
    return {
      write: (request) => send({ write: Buffer.from(toBinary(SubscribeRequestSchema, request)).toString("base64") }),
      end: () => send({ end: true }),
      cancel: () => send({ cancel: true }),
      closed,
    };
  }

  /** SIGKILLs the process (its call breaks, as the broker sees it) and waits until it is gone; the next open starts another. */
  async kill(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (child !== undefined && child.exitCode === null && child.signalCode === null) {
      const exited = once(child, "exit");
      child.kill("SIGKILL");
      await exited;
    }
    this.current?.close(new ConsumerKilled());
  }

  close(): Promise<void> {
    return this.kill();
  }

  private spawned(): ChildProcess {
    if (this.child !== undefined) return this.child;
    const child = spawn(process.execPath, [relayScript], { stdio: ["pipe", "pipe", "inherit"] });
    this.child = child;
    // A write racing the process's death fails with EPIPE: its exit tells the rest.
    child.stdin!.on("error", () => undefined);
    createInterface({ input: child.stdout! }).on("line", (text) => {
      if (this.child !== child) return;
      const line = JSON.parse(text) as RelayLine;
      if (line.data !== undefined)
        this.current?.onResponse(fromBinary(SubscribeResponseSchema, Buffer.from(line.data, "base64")));
      else if (line.status !== undefined) this.current?.close(statusOutcome(line));
    });
    child.once("exit", () => {
      // An exit nobody asked for ends the call like a kill, and the next open starts another process.
      if (this.child !== child) return;
      this.child = undefined;
      this.current?.close(new Error("the consumer process exited by itself"));
    });
    return child;
  }
}

/** The relayed status as the in-process link reports it: undefined on OK, else the RpcError. */
function statusOutcome(line: RelayLine): RpcError | undefined {
  if (line.status === 0) return undefined;
  const metadata = new Metadata();
  if (line.statusDetails !== undefined) metadata.set(statusDetailsKey, Buffer.from(line.statusDetails, "base64"));
  const error = Object.assign(new Error(line.details), { code: line.status!, details: line.details ?? "", metadata });
  return RpcError.fromServiceError(error as ServiceError);
}
