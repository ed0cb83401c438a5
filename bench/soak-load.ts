import { create } from "@bufbuild/protobuf";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import type { ClientDuplexStream, ServiceError } from "@grpc/grpc-js";
import { setTimeout as sleep } from "node:timers/promises";
import type { ReceivedMessage } from "../gen/holdshelf/v1/message_pb.js";
import {
  HeartbeatRequestSchema,
  type HeartbeatRequest,
  type HeartbeatResponse,
} from "../gen/holdshelf/v1/queue_service_pb.js";
import { createQueueServiceRpc, type QueueServiceRpc } from "../src/client/rpc-client.js";
import { RpcError } from "../src/client/rpc-error.js";
import { ageOf, timedBody } from "./message-bodies.js";
import { monotonicMs } from "./proc-stats.js";
import type { SoakOptions } from "./soak-options.js";
import type { SoakTally } from "./soak-tally.js";

/** The queue the load runs through. */
const soakQueue = "soak";
/** A queue kept at its max_in_flight, where every short poll is refused: the provoked error. */
const fullQueue = "soak-full";
const batch = 100;
/** A producer that fell behind catches up at most this much, instead of bursting without end. */
const maxLagMs = 1_000;
/** Heartbeat consumers lease for this long and renew every second, so a missed renewal or two loses nothing. */
const heartbeatLeaseMs = 3_000;
const renewEveryMs = 1_000;
/** A failed call is retried after this pause, so that a broken broker is not hammered. */
const retryPauseMs = 100;
/** The drain at the end gives up once the backlog has not shrunk for this long (beyond one lease). */
const drainStallMs = 30_000;

/** A running soak load. */
export interface SoakLoad {
  /** Messages the broker holds now (visible, in flight, delayed) in the soak queue. */
  backlog(): Promise<number>;
  /**
   * Stops the producers, lets the consumers drain the queue (dropped messages
   * come back once), stops them, and records as errors any message sent but
   * never deleted.
   */
  stop(): Promise<void>;
}

/** Starts producers, consumers, heartbeat consumers and the provoking probe against a broker. */
export async function startSoakLoad(address: string, options: SoakOptions, tally: SoakTally): Promise<SoakLoad> {
  const channels: (QueueServiceRpc & { close(): void })[] = [];
  const channel = (): QueueServiceRpc => {
    const rpc = createQueueServiceRpc(address);
    channels.push(rpc);
    return rpc;
  };
  const admin = channel();
  await admin.createQueue({ name: soakQueue });
  await admin.createQueue({ name: fullQueue, config: { maxInFlight: 1 } });
  await admin.send({ queue: fullQueue, body: Buffer.from("held") });
  await admin.receive({ queue: fullQueue, visibilityTimeout: durationFromMs(3_600_000) });

  const state: LoadState = { tally, options, dropped: new Set(), producing: true, consuming: true };
  const producers = Array.from({ length: options.producers }, (_, index) => produce(channel(), index, state));
  const consumers = [
    ...Array.from({ length: options.consumers }, () => consume(channel(), state)),
    ...Array.from({ length: options.heartbeatConsumers }, () => consumeWithHeartbeats(channel(), state)),
    probe(channel(), state),
  ];
  const backlog = async (): Promise<number> => {
    const stats = (await admin.getQueue({ name: soakQueue })).queue?.stats;
    return Number((stats?.visible ?? 0n) + (stats?.inFlight ?? 0n) + (stats?.delayed ?? 0n));
  };
  return {
    backlog,
    async stop() {
      state.producing = false;
      await Promise.all(producers);
      // A backlog left by a broker that fell behind drains as long as it keeps shrinking.
      const stallMs = options.leaseMs + options.holdMs + drainStallMs;
      let left = { messages: await backlog(), dropped: state.dropped.size, atMs: monotonicMs() };
      while ((left.messages > 0 || left.dropped > 0) && monotonicMs() - left.atMs < stallMs) {
        await sleep(250);
        const messages = await backlog();
        if (messages < left.messages || state.dropped.size < left.dropped) {
          left = { messages, dropped: state.dropped.size, atMs: monotonicMs() };
        } else {
          left = { ...left, messages, dropped: state.dropped.size };
        }
      }
      state.consuming = false;
      await Promise.all(consumers);
      const missing = tally.total.sent - tally.total.deleted;
      if (missing !== 0)
        tally.error(`${missing} messages sent but not deleted after the drain (${await backlog()} still stored)`);
      for (const rpc of channels) rpc.close();
    },
  };
}

interface LoadState {
  readonly tally: SoakTally;
  readonly options: SoakOptions;
  /** Ids of first deliveries left undeleted on purpose: each must come back exactly once. */
  readonly dropped: Set<string>;
  producing: boolean;
  consuming: boolean;
}

/** Sends SendBatch 100 on a fixed schedule, so that all producers together send `rate` messages a second. */
async function produce(rpc: QueueServiceRpc, index: number, state: LoadState): Promise<void> {
  const { producers, rate } = state.options;
  const everyMs = (producers * batch * 1000) / rate;
  let next = monotonicMs() + (index * everyMs) / producers;
  while (state.producing) {
    const wait = next - monotonicMs();
    if (wait > 0) await sleep(wait);
    next = Math.max(next + everyMs, monotonicMs() - maxLagMs);
    try {
      await rpc.sendBatch({ queue: soakQueue, entries: Array.from({ length: batch }, () => ({ body: timedBody() })) });
      state.tally.add("sent", batch);
    } catch (error) {
      state.tally.error(error);
      await sleep(retryPauseMs);
    }
  }
}

/**
 * Records a delivery (latency of a first one; whether a later one was one
 * the soak dropped) and says whether to delete it now: a share of first
 * deliveries is left to run out.
 */
function takeDelivery(message: ReceivedMessage, state: LoadState, mayDrop: boolean): boolean {
  const { tally } = state;
  if (message.receiveCount === 1) {
    tally.latency(ageOf(message.body));
    if (mayDrop && Math.random() < state.options.dropShare) {
      state.dropped.add(message.messageId);
      tally.add("dropped");
      return false;
    }
    return true;
  }
  tally.add("redeliveries");
  // Anything else came back because a lease ran out that should not have.
  if (!state.dropped.delete(message.messageId))
    tally.error("a message came back that was neither dropped nor lost by a lease");
  return true;
}

/** Deletes with DeleteBatch, counting each entry's outcome. */
async function deleteAll(rpc: QueueServiceRpc, handles: string[], state: LoadState): Promise<void> {
  if (handles.length === 0) return;
  const { results } = await rpc.deleteBatch({ queue: soakQueue, receiptHandles: handles });
  for (const result of results) {
    if (result.code === 0) state.tally.add("deleted");
    else state.tally.error(`DeleteBatch entry ${result.reason}`);
  }
}

/** Receive 100 (long poll 1 s) and DeleteBatch, dropping a share of first deliveries. */
async function consume(rpc: QueueServiceRpc, state: LoadState): Promise<void> {
  const lease = durationFromMs(state.options.leaseMs);
  while (state.consuming) {
    try {
      const { messages } = await rpc.receive({
        queue: soakQueue,
        maxMessages: batch,
        waitTime: durationFromMs(1000),
        visibilityTimeout: lease,
      });
      await deleteAll(
        rpc,
        messages.filter((message) => takeDelivery(message, state, true)).map((m) => m.receiptHandle),
        state,
      );
    } catch (error) {
      state.tally.error(error);
      await sleep(retryPauseMs);
    }
  }
}

/** Receive 10, hold them for holdMs renewing every second on a Heartbeat stream, then DeleteBatch. */
async function consumeWithHeartbeats(rpc: QueueServiceRpc, state: LoadState): Promise<void> {
  let stream: RenewalStream | undefined;
  while (state.consuming) {
    try {
      const { messages } = await rpc.receive({
        queue: soakQueue,
        maxMessages: 10,
        waitTime: durationFromMs(1000),
        visibilityTimeout: durationFromMs(heartbeatLeaseMs),
      });
      const held = messages.filter((message) => takeDelivery(message, state, false)).map((m) => m.receiptHandle);
      if (held.length === 0) continue;
      stream ??= openRenewalStream(rpc);
      const until = monotonicMs() + state.options.holdMs;
      while (monotonicMs() < until) {
        await sleep(Math.min(renewEveryMs, until - monotonicMs()));
        const answer = await stream.renew(held);
        for (const lease of answer.leases) {
          if (lease.held) state.tally.add("renewals");
          else state.tally.error(`heartbeat renewal ${lease.reason}`);
        }
      }
      await deleteAll(rpc, held, state);
    } catch (error) {
      state.tally.error(error);
      stream?.close();
      stream = undefined;
      await sleep(retryPauseMs);
    }
  }
  stream?.close();
}

/** Once a second, a short poll on the queue kept at max_in_flight: TOO_MANY_IN_FLIGHT each time. */
async function probe(rpc: QueueServiceRpc, state: LoadState): Promise<void> {
  while (state.consuming) {
    try {
      await rpc.receive({ queue: fullQueue });
      state.tally.error("a Receive on a queue at max_in_flight was not refused");
    } catch (error) {
      if (error instanceof RpcError && error.reason === "TOO_MANY_IN_FLIGHT") state.tally.provoked(error);
      else state.tally.error(error);
    }
    await sleep(1000);
  }
}

/** A Heartbeat stream that answers one renewal request at a time. */
interface RenewalStream {
  /** Renews these leases; resolves with the answer (expiry notices in between are recorded as errors). */
  renew(handles: readonly string[]): Promise<HeartbeatResponse>;
  close(): void;
}

function openRenewalStream(rpc: QueueServiceRpc): RenewalStream {
  const call: ClientDuplexStream<HeartbeatRequest, HeartbeatResponse> = rpc.heartbeat();
  let waiting: { resolve(answer: HeartbeatResponse): void; reject(error: unknown): void } | undefined;
  let failure: unknown;
  const fail = (error: unknown): void => {
    failure ??= error;
    waiting?.reject(failure);
    waiting = undefined;
  };
  call.on("data", (response: HeartbeatResponse) => {
    // An expiry notice is unsolicited: every state in it says LEASE_EXPIRED. It means a lease was lost.
    if (response.leases.length > 0 && response.leases.every((lease) => lease.reason === "LEASE_EXPIRED")) {
      return fail(new Error(`a Heartbeat lease expired: ${response.leases.length} notices`));
    }
    waiting?.resolve(response);
    waiting = undefined;
  });
  call.on("error", (error: ServiceError) => fail(RpcError.fromServiceError(error)));
  call.on("end", () => fail(new Error("the Heartbeat stream ended")));
  const lease = durationFromMs(heartbeatLeaseMs);
  return {
    renew(handles) {
      if (failure !== undefined) return Promise.reject(failure);
      return new Promise((resolve, reject) => {
        waiting = { resolve, reject };
        call.write(
          create(HeartbeatRequestSchema, {
            queue: soakQueue,
            leases: handles.map((receiptHandle) => ({ receiptHandle, visibilityTimeout: lease })),
          }),
        );
      });
    },
    close() {
      call.removeAllListeners("error");
      call.on("error", () => undefined);
      call.end();
    },
  };
}
