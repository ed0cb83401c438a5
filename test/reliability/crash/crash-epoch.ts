import type { QueueServiceRpc } from "../../../src/client/rpc-client.js";
import type { SqsEndpoint } from "./sqs-endpoint.js";

/** One life of the broker process, from its start to its SIGKILL: the clients' view of it. */
export interface Epoch {
  /** The gRPC address of the broker this life serves on, for clients that open their own channels. */
  readonly address: string;
  readonly rpc: QueueServiceRpc & { close(): void };
  /** The broker's SQS endpoint, where the target serves one (not the cluster). */
  readonly sqs: SqsEndpoint | undefined;
  /** Set as the kill begins: calls that break from then on are expected to, and workers stop. */
  killing: boolean;
}

/** Call options for every harness call: a deadline far beyond any normal answer, so nothing hangs. */
export function callOptions(): { deadline: number } {
  return { deadline: Date.now() + 30_000 };
}
