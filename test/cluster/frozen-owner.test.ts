// A queue's owner frozen (SIGSTOP: a paused VM, a long stall) while its shard
// lease still runs: the broker that forwards to it answers QUEUE_MOVING, which
// clients retry, within a bound well under the lease, instead of letting
// every call wait out its deadline. Once the owner wakes, calls through the
// other broker reach it again.
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { status } from "@grpc/grpc-js";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createQueueServiceRpc, type QueueServiceRpc } from "../../src/client/rpc-client.js";
import { RpcError } from "../../src/client/rpc-error.js";
import type { HoldshelfServer } from "../../src/server/holdshelf-server.js";
import { holdshelfBin } from "../support/broker-process.js";
import { queueOn, startClusterBroker } from "../support/cluster-brokers.js";
import { postgresForFile, skipWithoutPostgres } from "../support/postgres-server.js";

const postgres = postgresForFile();
// Long enough that nobody takes the frozen owner's shards during the test: what is checked is the forwarding broker's own bound.
const leaseTtlMs = 20_000;
// src/grpc/forwarding/peer-clients.ts: a ping each second, two seconds to answer it.
const queueMovingBoundMs = 3_000;
// What a loaded 2-core machine may add to it.
const marginMs = 1_500;
const listening = /"msg":"holdshelf listening","address":"([^"]+)"/;

/** `holdshelf serve` in cluster mode as its own process, so that it can be frozen. */
async function spawnClusterBroker(url: string, nodeId: string): Promise<{ child: ChildProcess; address: string }> {
  const args = ["serve", "--postgres", url, "--node-id", nodeId, "--listen", "127.0.0.1:0"];
  const off = ["--metrics-listen", "off", "--sqs-listen", "off", "--console-listen", "off"];
  const child = spawn(process.execPath, [holdshelfBin, ...args, ...off, "--shard-lease-ttl", `${leaseTtlMs}ms`], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let log = "";
  const address = await new Promise<string>((resolve, reject) => {
    child.stderr!.on("data", (chunk: Buffer) => {
      log += chunk.toString();
      const match = listening.exec(log);
      if (match) resolve(match[1]!);
    });
    child.once("exit", (code) => reject(new Error(`holdshelf serve exited with ${code}: ${log}`)));
  });
  return { child, address };
}

/** How long a call took, when it ended, and how: "ok", or its code and reason. */
async function timed(call: Promise<unknown>): Promise<{ ms: number; endedAt: number; outcome: string }> {
  const started = performance.now();
  let outcome = "ok";
  try {
    await call;
  } catch (error) {
    if (!(error instanceof RpcError)) throw error;
    outcome = `${error.code} ${error.reason}`;
  }
  const endedAt = performance.now();
  return { ms: endedAt - started, endedAt, outcome };
}

describe.skipIf(skipWithoutPostgres)("a frozen owner", () => {
  let a: HoldshelfServer;
  let b: ChildProcess;
  let rpc: QueueServiceRpc & { close(): void };
  const queue = queueOn("b", ["a", "b"], "frozen");

  beforeEach(async () => {
    const url = await postgres().createDatabase();
    a = await startClusterBroker(url, "a", { leaseTtlMs });
    const spawned = await spawnClusterBroker(url, "b");
    b = spawned.child;
    await vi.waitFor(
      () => expect(a.cluster!.route(queue)).toMatchObject({ kind: "remote", address: spawned.address }),
      {
        timeout: 20_000,
        interval: 50,
      },
    );
    // Not following owner hints: every call goes through a, the forwarding broker under test.
    rpc = createQueueServiceRpc(a.address, { followOwnerHints: false });
    await rpc.createQueue({ name: queue });
  }, 60_000);
  afterEach(async () => {
    rpc.close();
    b.kill("SIGCONT");
    b.kill("SIGKILL");
    if (b.exitCode === null && b.signalCode === null) await once(b, "exit");
    await a.shutdown();
  });

  it("answers QUEUE_MOVING within its bound, long polls included, and serves again once the owner wakes", async () => {
    // A long poll already waiting at the owner when it freezes.
    const waiting = timed(rpc.receive({ queue, waitTime: { seconds: 20n } }, { deadline: Date.now() + 15_000 }));
    await vi.waitFor(async () => expect((await rpc.getQueue({ name: queue })).queue!.name).toBe(queue));
    b.kill("SIGSTOP");
    const frozenAt = performance.now();
    const calls = [await waiting];
    for (let i = 0; i < 3; i++)
      calls.push(await timed(rpc.getQueue({ name: queue }, { deadline: Date.now() + 10_000 })));
    calls.push(await timed(rpc.send({ queue, body: Buffer.from("x") }, { deadline: Date.now() + 10_000 })));
    const moving = `${status.UNAVAILABLE} QUEUE_MOVING`;
    expect(calls.map((call) => call.outcome)).toEqual(calls.map(() => moving));
    // The long poll began before the freeze: its bound counts from the freeze.
    expect(calls[0]!.endedAt - frozenAt).toBeLessThan(queueMovingBoundMs + marginMs);
    for (const call of calls.slice(1)) expect(call.ms).toBeLessThan(queueMovingBoundMs + marginMs);

    b.kill("SIGCONT");
    await vi.waitFor(async () => expect((await rpc.getQueue({ name: queue })).queue!.name).toBe(queue), {
      timeout: 10_000,
      interval: 200,
    });
  }, 60_000);
});
