import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { create } from "@bufbuild/protobuf";
import { BrokerStatusSchema, type BrokerStatus } from "../../gen/holdshelf/v1/admin_service_pb.js";
import type { Broker } from "../broker/broker.js";
import type { ClusterPeer } from "../cluster/queue-router.js";
import type { HoldshelfLimits } from "./server-limits.js";

/** What a broker's status is read from. */
export interface BrokerStatusParts {
  readonly broker: Broker;
  readonly limits: HoldshelfLimits;
  readonly storage: "leveldb" | "postgres";
  /** Whether storage takes writes: false while a storage recovery is under way. */
  readonly storageAvailable: () => boolean;
  readonly self: () => ClusterPeer;
  /** Epoch ms. */
  readonly startedAt: number;
}

/** This broker's status as GetBrokerStatus answers it, read at each call. */
export function brokerStatusOf(parts: BrokerStatusParts): () => BrokerStatus {
  return () => {
    const { broker, limits } = parts;
    const queues = broker.allQueues();
    let stored = 0;
    for (const queue of queues) stored += queue.counts.visible + queue.counts.inFlight + queue.counts.delayed;
    const budget = (name: string, used: number, limit: number, unit: string) => ({
      name,
      used: BigInt(used),
      limit: BigInt(limit),
      unit,
    });
    const streams = broker.streams;
    return create(BrokerStatusSchema, {
      nodeId: parts.self().nodeId,
      address: parts.self().address,
      version: holdshelfVersion(),
      startedAtMs: BigInt(parts.startedAt),
      storage: parts.storage,
      state: parts.storageAvailable() ? "serving" : "recovering",
      budgets: [
        budget("max-stored-messages", stored, limits.maxStoredMessages, "messages"),
        budget("max-queues", queues.length, limits.maxQueues, "queues"),
        budget("max-deduplication-ids", broker.deduplicationIdCount, limits.maxDeduplicationIds, "messages"),
        budget("max-waiting-receives", broker.waitingReceiveCount, limits.maxWaitingReceives, "streams"),
      ],
      heartbeatStreams: BigInt(streams.count - streams.subscriberCount),
      subscribeStreams: BigInt(streams.subscriberCount),
    });
  };
}

let version: string | undefined;

/** The version in holdshelf's package.json: two levels up from src/server/, three from dist/src/server/. */
function holdshelfVersion(): string {
  if (version !== undefined) return version;
  for (const path of ["../../package.json", "../../../package.json"]) {
    try {
      const read = JSON.parse(readFileSync(fileURLToPath(new URL(path, import.meta.url)), "utf8")) as {
        name?: unknown;
        version?: unknown;
      };
      if (read.name === "holdshelf" && typeof read.version === "string") return (version = read.version);
    } catch {
      // Not there: the other layout.
    }
  }
  return (version = "unknown");
}
