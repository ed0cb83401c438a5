export { QueueClient, type QueueClientOptions } from "./client/queue-client.js";
export {
  Consumer,
  type ConsumerClient,
  type ConsumerOptions,
  type HandlerContext,
  type MessageHandler,
} from "./client/consumer.js";
export { HeartbeatStream } from "./client/heartbeat-stream.js";
export { LeaseLostError } from "./client/lease-lost-error.js";
export { RetryLater } from "./client/retry-later.js";
export { RpcError } from "./client/rpc-error.js";
export {
  createQueueServiceRpc,
  type QueueServiceRpc,
  type QueueServiceRpcOptions,
  type RpcCallOptions,
} from "./client/rpc-client.js";
export type * from "./client/types.js";
export { loadClientCredentials, type ClientTlsFiles } from "./security/tls-client.js";
export { TlsConfigError } from "./security/tls-files.js";
