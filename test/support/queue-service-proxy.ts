import {
  Client,
  credentials,
  Server,
  ServerCredentials,
  status,
  type ClientDuplexStream,
  type MethodDefinition,
  type ServerDuplexStream,
  type ServerUnaryCall,
  type sendUnaryData,
  type ServiceError,
  type UntypedServiceImplementation,
} from "@grpc/grpc-js";
import { queueServiceDefinition } from "../../src/protocol/queue-service-definition.js";

/** A stand-in in front of a real broker: it passes every call through, and can serve no Subscribe or cut its streams. */
export interface QueueServiceProxy {
  /** Where clients connect. */
  readonly address: string;
  /** Subscribe calls the proxy took, passed through or not. */
  readonly subscribeCalls: number;
  /**
   * Ends every Subscribe stream now with UNAVAILABLE, as a broker handing
   * its queue over would: the broker's side is half-closed (its leases stay
   * as they are), not broken (which would release them).
   */
  endSubscribeStreams(): void;
  stop(): Promise<void>;
}

const identity = (bytes: Buffer): Buffer => bytes;

/**
 * Starts a QueueService proxy on a free loopback port in front of `target`,
 * passing requests and answers through as bytes, metadata and statuses
 * included. With `subscribe: false` it serves QueueService as a broker from
 * before Subscribe does: a Subscribe call gets UNIMPLEMENTED.
 */
export async function startQueueServiceProxy(
  target: string,
  options: { readonly subscribe: boolean },
): Promise<QueueServiceProxy> {
  const upstream = new Client(target, credentials.createInsecure());
  const definition: Record<string, MethodDefinition<Buffer, Buffer>> = {};
  const implementation: UntypedServiceImplementation = {};
  const subscribeStreams = new Set<() => void>();
  let subscribeCalls = 0;
  for (const [name, method] of Object.entries(queueServiceDefinition)) {
    const passthrough = {
      ...method,
      requestSerialize: identity,
      requestDeserialize: identity,
      responseSerialize: identity,
      responseDeserialize: identity,
    };
    if (name === "subscribe") {
      // A broker without Subscribe has no handler for its path: grpc-js answers UNIMPLEMENTED.
      definition[name] = passthrough;
      implementation[name] = (call: ServerDuplexStream<Buffer, Buffer>) => {
        subscribeCalls++;
        if (!options.subscribe) {
          call.emit("error", { code: status.UNIMPLEMENTED, details: "no Subscribe here" });
          return;
        }
        subscribeStreams.add(forwardStream(upstream, method.path, call));
      };
    } else if (method.requestStream) {
      definition[name] = passthrough;
      implementation[name] = (call: ServerDuplexStream<Buffer, Buffer>) => {
        forwardStream(upstream, method.path, call);
      };
    } else {
      definition[name] = passthrough;
      implementation[name] = (call: ServerUnaryCall<Buffer, Buffer>, callback: sendUnaryData<Buffer>) => {
        upstream.makeUnaryRequest(method.path, identity, identity, call.request, call.metadata, (error, response) =>
          callback(error, response),
        );
      };
    }
  }
  const server = new Server();
  server.addService(definition, implementation);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    ),
  );
  return {
    address: `127.0.0.1:${port}`,
    get subscribeCalls() {
      return subscribeCalls;
    },
    endSubscribeStreams() {
      for (const end of subscribeStreams) end();
      subscribeStreams.clear();
    },
    async stop() {
      await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
      server.forceShutdown();
      upstream.close();
    },
  };
}

/** Passes one stream through both ways; returns what ends it with UNAVAILABLE (the broker's side half-closed). */
function forwardStream(upstream: Client, path: string, call: ServerDuplexStream<Buffer, Buffer>): () => void {
  const up: ClientDuplexStream<Buffer, Buffer> = upstream.makeBidiStreamRequest(
    path,
    identity,
    identity,
    call.metadata,
  );
  let cut = false;
  call.on("data", (request: Buffer) => up.write(request));
  call.on("end", () => up.end());
  call.on("cancelled", () => up.cancel());
  up.on("data", (response: Buffer) => {
    if (!cut) call.write(response);
  });
  up.on("error", (error: ServiceError) => {
    if (!cut) call.emit("error", error);
  });
  up.on("status", (finished) => {
    if (!cut && finished.code === status.OK) call.end();
  });
  return () => {
    cut = true;
    up.end();
    call.emit("error", { code: status.UNAVAILABLE, details: "the queue is moving (a test's proxy)" });
  };
}
