/**
 * Idle Subscribe streams opened raw, with grpc-js and the generated
 * definitions (as heartbeat-streams.ts opens Heartbeat streams), for
 * scenario 18: thousands of Consumers would cost this process far more than
 * the broker, and only the broker is measured.
 */
import { create } from "@bufbuild/protobuf";
import { Client, credentials, Metadata, type ClientDuplexStream, type ServiceError } from "@grpc/grpc-js";
import {
  SubscribeRequestSchema,
  type SubscribeRequest,
  type SubscribeResponse,
} from "../gen/holdshelf/v1/queue_service_pb.js";
import { queueServiceDefinition } from "../src/protocol/queue-service-definition.js";

const subscribeMethod = queueServiceDefinition["subscribe"]!;
// A handle no message has: its ack is answered (not found, or invalid) without touching any message,
// which tells the stream is open on the broker.
const probeHandle = "bench-idle-probe";

/** Where the idle streams go. */
export interface IdleStreamsOptions {
  readonly address: string;
  readonly streams: number;
  /** gRPC channels (HTTP/2 connections) the streams are spread over, in turn. */
  readonly connections: number;
  /** Queues the streams subscribe to, in turn; each must exist. */
  readonly queues: readonly string[];
  /** The credit of each stream: how many deliveries it would take. */
  readonly maxOutstandingMessages: number;
}

/** Open idle streams. */
export interface IdleStreams {
  /** Errors the streams ended with while open, as "code: details". */
  readonly errors: readonly string[];
  /** Half-closes every stream, waits for the server to end them, and closes the channels. */
  close(): Promise<void>;
}

/**
 * Opens `streams` Subscribe streams and resolves once the broker has
 * answered a probe ack on every one of them, so each is subscribed. Rejects
 * (after closing what it opened) if any stream ends first.
 */
export async function openIdleSubscribeStreams(options: IdleStreamsOptions): Promise<IdleStreams> {
  // Separate connections: grpc-js would otherwise share one subchannel among channels to the same address.
  const clients = Array.from(
    { length: options.connections },
    () => new Client(options.address, credentials.createInsecure(), { "grpc.use_local_subchannel_pool": 1 }),
  );
  const errors: string[] = [];
  const streams = Array.from({ length: options.streams }, (_, index) =>
    openStream(clients[index % clients.length]!, options.queues[index % options.queues.length]!, options, errors),
  );
  const close = async (): Promise<void> => {
    for (const stream of streams) stream.call.end();
    await Promise.all(streams.map((stream) => stream.ended));
    for (const client of clients) client.close();
  };
  try {
    await Promise.all(streams.map((stream) => stream.probed));
  } catch (error) {
    for (const stream of streams) stream.call.cancel();
    for (const client of clients) client.close();
    throw error;
  }
  return { errors, close };
}

interface OpenStream {
  readonly call: ClientDuplexStream<SubscribeRequest, SubscribeResponse>;
  /** Resolves with the probe's answer; rejects if the stream ends before it. */
  readonly probed: Promise<void>;
  /** Resolves when the stream has ended, whichever way. */
  readonly ended: Promise<void>;
}

function openStream(client: Client, queue: string, options: IdleStreamsOptions, errors: string[]): OpenStream {
  const call: ClientDuplexStream<SubscribeRequest, SubscribeResponse> = client.makeBidiStreamRequest(
    subscribeMethod.path,
    subscribeMethod.requestSerialize as (value: SubscribeRequest) => Buffer,
    subscribeMethod.responseDeserialize as (bytes: Buffer) => SubscribeResponse,
    new Metadata(),
    {},
  );
  let answered!: () => void;
  let failed!: (error: Error) => void;
  const probed = new Promise<void>((resolve, reject) => {
    answered = resolve;
    failed = reject;
  });
  call.on("data", (response: SubscribeResponse) => {
    if (response.acks.length > 0) answered();
  });
  const ended = new Promise<void>((resolve) => {
    call.on("error", (error: ServiceError) => {
      errors.push(`${error.code}: ${error.details}`);
      failed(new Error(`a Subscribe stream to ${queue} ended: ${error.code} ${error.details}`));
      resolve();
    });
    call.on("status", () => {
      failed(new Error(`a Subscribe stream to ${queue} ended before its probe was answered`));
      resolve();
    });
  });
  call.write(
    create(SubscribeRequestSchema, {
      queue,
      flowControl: { maxOutstandingMessages: options.maxOutstandingMessages },
      ackReceiptHandles: [probeHandle],
    }),
  );
  return { call, probed, ended };
}
