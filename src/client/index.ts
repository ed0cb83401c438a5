export { QueueClient, type QueueClientOptions } from "./queue-client.js";
export {
  Consumer,
  type ConsumerClient,
  type ConsumerOptions,
  type HandlerContext,
  type MessageHandler,
} from "./consumer.js";
export { HeartbeatStream } from "./heartbeat-stream.js";
export { SubscribeStream } from "./subscribe-stream.js";
export type { BatchingOptions } from "./publish-batcher.js";
export { LeaseLostError } from "./lease-lost-error.js";
export { RetryLater } from "./retry-later.js";
export { stopOnSignals, type Stoppable } from "./stop-on-signals.js";
export { RpcError } from "./rpc-error.js";
export {
  createQueueServiceRpc,
  type QueueServiceRpc,
  type QueueServiceRpcOptions,
  type RpcCallOptions,
} from "./rpc-client.js";
export type * from "./types.js";
export { loadClientCredentials, type ClientTlsFiles } from "./load-client-credentials.js";
export { TlsConfigError } from "../net/tls-file-checks.js";
export { LeaseEnding, type LeaseStateReason } from "../protocol/lease-state-reason.js";
export type { Reason } from "../protocol/error-reasons.js";
export type { Clock, Timer } from "../time/clock.js";
