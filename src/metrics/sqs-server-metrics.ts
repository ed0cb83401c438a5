import { Counter, Histogram, type Registry } from "prom-client";

// The gRPC handling histogram's buckets, so that the two listeners' latencies compare bucket for bucket.
const handlingBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** The SQS endpoint's request metrics: grpc_server_*'s counterparts, labelled by SQS action and error code. */
export interface SqsServerMetrics {
  /** Counts a request as it starts; returns what records its end. */
  started(action: string): (code: string) => void;
  /** Exports zero series for these actions, so rates start at 0. */
  preRegister(actions: readonly string[]): void;
}

/**
 * Registers sqs_server_started_total{sqs_action},
 * sqs_server_handled_total{sqs_action,sqs_code} (code "OK", or the SQS error
 * code the client got, e.g. "AWS.SimpleQueueService.NonExistentQueue") and
 * sqs_server_handling_seconds{sqs_action}. Labels stay bounded: unknown
 * actions count as "unknown", and codes are the endpoint's fixed set.
 */
export function createSqsServerMetrics(registry: Registry): SqsServerMetrics {
  const registers = [registry];
  const startedTotal = new Counter({
    name: "sqs_server_started_total",
    help: "Total number of SQS requests started on the server.",
    labelNames: ["sqs_action"],
    registers,
  });
  const handled = new Counter({
    name: "sqs_server_handled_total",
    help: "Total number of SQS requests completed on the server, by action and the code answered (OK or the SQS error code).",
    labelNames: ["sqs_action", "sqs_code"],
    registers,
  });
  const handling = new Histogram({
    name: "sqs_server_handling_seconds",
    help: "Histogram of response latency (seconds) of SQS requests, from the request body read to its answer.",
    labelNames: ["sqs_action"],
    buckets: handlingBuckets,
    registers,
  });
  return {
    started(action) {
      const startedAt = performance.now();
      startedTotal.inc({ sqs_action: action });
      return (code) => {
        handled.inc({ sqs_action: action, sqs_code: code });
        handling.observe({ sqs_action: action }, (performance.now() - startedAt) / 1000);
      };
    },
    preRegister(actions) {
      for (const action of actions) {
        startedTotal.inc({ sqs_action: action }, 0);
        handled.inc({ sqs_action: action, sqs_code: "OK" }, 0);
      }
    },
  };
}
