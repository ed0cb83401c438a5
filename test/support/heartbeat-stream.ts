import { create, type MessageInitShape } from "@bufbuild/protobuf";
import {
  Client,
  credentials,
  Metadata,
  type ClientDuplexStream,
  type ClientOptions,
  type ServiceError,
} from "@grpc/grpc-js";
import {
  HeartbeatRequestSchema,
  type HeartbeatRequest,
  type HeartbeatResponse,
} from "../../gen/holdshelf/v1/queue_service_pb.js";
import { RpcError } from "../../src/client/rpc-error.js";
import { queueServiceDefinition } from "../../src/protocol/queue-service-definition.js";

/** A raw Heartbeat stream for tests: write requests, read responses one at a time, see how it ended. */
export interface HeartbeatStream {
  send(request: MessageInitShape<typeof HeartbeatRequestSchema>): void;
  /** The next response, in arrival order. */
  next(): Promise<HeartbeatResponse>;
  /** Half-closes the stream: the client is done. */
  end(): void;
  /** Cancels the call: what a crash or a lost connection looks like to the server. */
  cancel(): void;
  /** Stops reading responses (a slow client); `next` resumes. */
  pause(): void;
  /** Resolves with undefined on OK, or the error the stream ended with. */
  readonly closed: Promise<RpcError | undefined>;
  close(): void;
}

/** Opens a Heartbeat stream to a broker. */
export function openHeartbeatStream(address: string, options: ClientOptions = {}, deadline?: Date): HeartbeatStream {
  const client = new Client(address, credentials.createInsecure(), options);
  const method = queueServiceDefinition.heartbeat!;
  const call: ClientDuplexStream<HeartbeatRequest, HeartbeatResponse> = client.makeBidiStreamRequest(
    method.path,
    method.requestSerialize as (value: HeartbeatRequest) => Buffer,
    method.responseDeserialize as (bytes: Buffer) => HeartbeatResponse,
    new Metadata(),
    deadline === undefined ? {} : { deadline },
  );
  const responses: HeartbeatResponse[] = [];
  const readers: ((response: HeartbeatResponse) => void)[] = [];
  call.on("data", (response: HeartbeatResponse) => {
    const reader = readers.shift();
    if (reader) reader(response);
    else responses.push(response);
  });
  const closed = new Promise<RpcError | undefined>((resolve) => {
    call.on("error", (error: ServiceError) => resolve(RpcError.fromServiceError(error)));
    call.on("status", (status) => {
      if (status.code === 0) resolve(undefined);
    });
  });
  return {
    send: (request) => call.write(create(HeartbeatRequestSchema, request)),
    pause: () => call.pause(),
    next: () => {
      call.resume();
      const ready = responses.shift();
      if (ready) return Promise.resolve(ready);
      return new Promise((resolve) => readers.push(resolve));
    },
    end: () => call.end(),
    cancel: () => call.cancel(),
    closed,
    close: () => client.close(),
  };
}
