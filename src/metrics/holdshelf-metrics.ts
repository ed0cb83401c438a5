import { collectDefaultMetrics, Registry } from "prom-client";
import { BrokerMetrics } from "./broker-metrics.js";
import { createGrpcServerMetrics, type GrpcServerMetrics } from "./grpc-server-metrics.js";
import { createSqsServerMetrics, type SqsServerMetrics } from "./sqs-server-metrics.js";
import { createStorageMetrics, type StorageMetrics } from "./storage-metrics.js";

/** Every metric a broker exports, on a registry of its own. */
export interface HoldshelfMetrics {
  readonly registry: Registry;
  /** Fed by the broker's events; reads the broker for its gauges. */
  readonly broker: BrokerMetrics;
  /** What the store tells of each group-commit batch, and whether storage takes writes. */
  readonly storage: StorageMetrics;
  readonly grpc: GrpcServerMetrics;
  /** The SQS endpoint's request metrics (registered with no series until it serves). */
  readonly sqs: SqsServerMetrics;
}

/**
 * Creates the metrics of one broker. The registry is its own, never the
 * global one, so that two brokers in one process (tests, embedding) do not
 * count into each other.
 */
export function createHoldshelfMetrics(): HoldshelfMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  // prom-client names these gauges with a counter's "_total", which
  // `promtool check metrics` rejects; the same counts stay exported, by
  // type, as nodejs_active_handles, nodejs_active_requests and nodejs_active_resources.
  for (const misnamed of [
    "nodejs_active_handles_total",
    "nodejs_active_requests_total",
    "nodejs_active_resources_total",
  ]) {
    registry.removeSingleMetric(misnamed);
  }
  return {
    registry,
    broker: new BrokerMetrics(registry),
    storage: createStorageMetrics(registry),
    grpc: createGrpcServerMetrics(registry),
    sqs: createSqsServerMetrics(registry),
  };
}
