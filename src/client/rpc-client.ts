import { create, type DescMessage, type MessageInitShape, type MessageShape } from "@bufbuild/protobuf";
import type { GenServiceMethods } from "@bufbuild/protobuf/codegenv2";
import {
  Client,
  credentials,
  Metadata,
  status,
  type CallOptions,
  type ChannelCredentials,
  type ClientDuplexStream,
  type ClientOptions,
  type ServiceError,
} from "@grpc/grpc-js";
import {
  QueueService,
  type HeartbeatRequest,
  type HeartbeatResponse,
  type SubscribeRequest,
  type SubscribeResponse,
} from "../../gen/holdshelf/v1/queue_service_pb.js";
import { isLoopbackAddress } from "../net/loopback-address.js";
import { queueServiceDefinition } from "../protocol/queue-service-definition.js";
import { queueOfCall } from "../protocol/queue-of-call.js";
import { bearerTokenInterceptor } from "./bearer-token.js";
import { OwnerChannels } from "./owner-channels.js";
import { RpcError } from "./rpc-error.js";
import { receiveWindowBytes } from "../net/http2-receive-window.js";

type Methods = typeof QueueService extends { method: infer M extends GenServiceMethods } ? M : never;

/** grpc-js call options, plus a signal that cancels the call when it aborts. */
export type RpcCallOptions = CallOptions & { readonly signal?: AbortSignal | undefined };

/** One promise-returning function per unary RPC of QueueService, taking plain request objects. */
export type QueueServiceRpc = {
  [K in keyof Methods as Methods[K]["methodKind"] extends "unary" ? K : never]: (
    request: MessageInitShape<Methods[K]["input"]>,
    options?: RpcCallOptions,
  ) => Promise<MessageShape<Methods[K]["output"]>>;
} & {
  /** Opens a Heartbeat stream: the raw grpc-js duplex of generated messages. */
  heartbeat(options?: CallOptions): ClientDuplexStream<HeartbeatRequest, HeartbeatResponse>;
  /** Opens a Subscribe stream: the raw grpc-js duplex of generated messages. */
  subscribe(options?: CallOptions): ClientDuplexStream<SubscribeRequest, SubscribeResponse>;
};

/** Options of createQueueServiceRpc. */
export interface QueueServiceRpcOptions {
  readonly credentials?: ChannelCredentials;
  readonly channelOptions?: ClientOptions;
  /** A bearer token (`holdshelf token`) sent on every call, for a broker started with --auth-file. */
  readonly token?: string;
  /**
   * Sends the token over a plaintext channel to an address that is not
   * loopback (say, to a TLS-terminating proxy beside the client). Off by
   * default: anyone on the path could read the token.
   */
  readonly allowPlaintextToken?: boolean;
  /**
   * Sends a queue's calls straight to the broker that served its last call
   * (cluster mode's `holdshelf-owner` hint), saving a forwarding hop. On by
   * default; the embedded mode sends no hints. Heartbeat and Subscribe
   * streams stay on the given address, which passes them to the owner.
   */
  readonly followOwnerHints?: boolean;
}

/**
 * A low-level client of QueueService over grpc-js: the generated request and
 * response types, promises, and failures as RpcError with the stable reason.
 */
export function createQueueServiceRpc(
  address: string,
  options: QueueServiceRpcOptions = {},
): QueueServiceRpc & { close(): void } {
  const channelCredentials = options.credentials ?? credentials.createInsecure();
  const plaintextTokenTo = (target: string): boolean =>
    options.token !== undefined &&
    !channelCredentials._isSecure() &&
    !isLoopbackAddress(target) &&
    options.allowPlaintextToken !== true;
  if (plaintextTokenTo(address)) {
    throw new Error(
      `refusing to send a bearer token in plaintext to ${address}, which is not a loopback address: ` +
        "connect over TLS (credentials; --tls-ca on the command line), or set allowPlaintextToken",
    );
  }
  const connect = (target: string): Client => new Client(target, channelCredentials, channelOptions);
  const channelOptions: ClientOptions = {
    // A Receive answer may be up to 4 MiB plus framing.
    "grpc.max_receive_message_length": 8 * 1024 * 1024,
    // Large answers in one round trip, not sixteen: see receiveWindowBytes.
    "grpc-node.flow_control_window": receiveWindowBytes,
    ...options.channelOptions,
    ...(options.token === undefined
      ? {}
      : { interceptors: [...(options.channelOptions?.interceptors ?? []), bearerTokenInterceptor(options.token)] }),
  };
  const client = connect(address);
  // A hinted broker gets the token only as the given address would: never in plaintext beyond loopback.
  const owners = new OwnerChannels(client, address, (target) =>
    plaintextTokenTo(target) ? undefined : connect(target),
  );
  const follow = options.followOwnerHints !== false;
  const heartbeat = queueServiceDefinition["heartbeat"]!;
  const subscribe = queueServiceDefinition["subscribe"]!;
  const rpc: Record<string, unknown> = {
    close: () => {
      owners.close();
      client.close();
    },
    heartbeat: (callOptions: CallOptions = {}) =>
      client.makeBidiStreamRequest(
        heartbeat.path,
        heartbeat.requestSerialize,
        heartbeat.responseDeserialize,
        new Metadata(),
        callOptions,
      ),
    subscribe: (callOptions: CallOptions = {}) =>
      client.makeBidiStreamRequest(
        subscribe.path,
        subscribe.requestSerialize,
        subscribe.responseDeserialize,
        new Metadata(),
        callOptions,
      ),
  };
  for (const method of QueueService.methods) {
    if (method.methodKind !== "unary") continue;
    const definition = queueServiceDefinition[method.localName]!;
    rpc[method.localName] = (request: MessageInitShape<DescMessage>, callOptions: RpcCallOptions = {}) =>
      new Promise((resolve, reject) => {
        const { signal, ...grpcOptions } = callOptions;
        if (signal?.aborted) {
          reject(
            new RpcError(status.CANCELLED, "", "the call was aborted before it started", [], { cause: signal.reason }),
          );
          return;
        }
        const onAbort = (): void => call.cancel();
        const queue = follow ? queueOfCall(method.localName, request) : undefined;
        const call = owners
          .channelFor(queue)
          .makeUnaryRequest(
            definition.path,
            definition.requestSerialize,
            definition.responseDeserialize,
            create(method.input, request),
            new Metadata(),
            grpcOptions,
            (error: ServiceError | null, response?: unknown) => {
              signal?.removeEventListener("abort", onAbort);
              if (error) reject(RpcError.fromServiceError(error));
              else resolve(response);
            },
          );
        call.on("status", (finished) => owners.learn(queue, finished.code, finished.metadata, status.UNAVAILABLE));
        signal?.addEventListener("abort", onAbort, { once: true });
      });
  }
  return rpc as QueueServiceRpc & { close(): void };
}
