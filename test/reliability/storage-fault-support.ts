import { create } from "@bufbuild/protobuf";
import { Client, credentials, type ServiceError } from "@grpc/grpc-js";
import {
  HealthCheckRequestSchema,
  HealthCheckResponse_ServingStatus as ServingStatus,
  type HealthCheckResponse,
} from "../../gen/grpc/health/v1/health_pb.js";
import type { QueueServiceRpc } from "../../src/client/rpc-client.js";
import { healthServiceDefinition } from "../../src/grpc/health-service.js";
import { createLogger, type Logger } from "../../src/logging/logger.js";
import { parseExposition, sampleValue } from "../support/prometheus-text.js";

export { ServingStatus };

/** A logger that keeps every line it is given, parsed. */
export function recordingLogger(): { logger: Logger; lines: { level: string; msg: string }[] } {
  const lines: { level: string; msg: string }[] = [];
  const logger = createLogger({ level: "debug", write: (line) => void lines.push(JSON.parse(line)) });
  return { logger, lines };
}

/** Asks the server's gRPC health service for the status of the whole server. */
export function healthOf(address: string): Promise<ServingStatus> {
  const client = new Client(address, credentials.createInsecure());
  const check = healthServiceDefinition["check"]!;
  return new Promise<ServingStatus>((resolve, reject) => {
    client.makeUnaryRequest(
      check.path,
      check.requestSerialize,
      check.responseDeserialize,
      create(HealthCheckRequestSchema, { service: "" }),
      (error: ServiceError | null, response?: unknown) =>
        error ? reject(error) : resolve((response as HealthCheckResponse).status),
    );
  }).finally(() => client.close());
}

/** The value of holdshelf_storage_available as the metrics listener serves it. */
export async function storageAvailableGauge(metricsAddress: string): Promise<number | undefined> {
  const response = await fetch(`http://${metricsAddress}/metrics`);
  return sampleValue(parseExposition(await response.text()), "holdshelf_storage_available");
}

/** The status /readyz answers. */
export async function readyzStatus(metricsAddress: string): Promise<number> {
  return (await fetch(`http://${metricsAddress}/readyz`)).status;
}

/**
 * Polls until `condition` holds; fails after `timeoutMs`. For real-time
 * recovery only (the broker's own backoff on the system clock), with
 * margins for a loaded machine.
 */
export async function waitFor(condition: () => Promise<boolean>, timeoutMs: number, what: string): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await condition().catch(() => false)) return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Receives (leasing for a minute) until the queue answers empty; returns every body received, in order. */
export async function drainBodies(rpc: QueueServiceRpc, queue: string): Promise<string[]> {
  const bodies: string[] = [];
  for (;;) {
    const { messages } = await rpc.receive({
      queue,
      maxMessages: 100,
      visibilityTimeout: { seconds: 60n },
    });
    if (messages.length === 0) return bodies;
    for (const message of messages) bodies.push(Buffer.from(message.body).toString("utf8"));
  }
}

/** An error as a failing disk gives it: LevelDB's "IO error: <path>: <strerror>". */
export function diskError(strerror: string): Error {
  return Object.assign(new Error(`IO error: /somewhere/secret-path/000003.log: ${strerror}`), {
    code: "LEVEL_IO_ERROR",
  });
}
