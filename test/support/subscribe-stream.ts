import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { Client, credentials, Metadata, type ClientDuplexStream, type ServiceError } from "@grpc/grpc-js";
import {
  SubscribeRequestSchema,
  type SubscribeRequest,
  type SubscribeResponse,
} from "../../gen/holdshelf/v1/queue_service_pb.js";
import { RpcError } from "../../src/client/rpc-error.js";
import { queueServiceDefinition } from "../../src/protocol/queue-service-definition.js";

/** A raw Subscribe stream for tests: write requests, read responses one at a time, see how it ended. */
export interface SubscribeStream {
  send(request: MessageInitShape<typeof SubscribeRequestSchema>): void;
  /** Writes bytes that are not a SubscribeRequest. */
  sendBytes(bytes: Buffer): void;
  /** The next response, in arrival order. */
  next(): Promise<SubscribeResponse>;
  /** Responses until `count` deliveries came (more if a response brought more). */
  deliveries(count: number): Promise<SubscribeResponse["messages"]>;
  /** Half-closes the stream: the client is done. */
  end(): void;
  /** Cancels the call: what a crash or a lost connection looks like to the server. */
  cancel(): void;
  /** Stops reading responses (a slow client); `next` resumes. */
  pause(): void;
  /** Responses read but not taken by `next` yet. */
  readonly buffered: SubscribeResponse[];
  /** Resolves with undefined on OK, or the error the stream ended with. */
  readonly closed: Promise<RpcError | undefined>;
  close(): void;
}

/** How a test's Subscribe stream is opened besides its address. */
export interface SubscribeStreamOptions {
  /** Ends the call with DEADLINE_EXCEEDED this long after it opens, so that a hang fails the test. */
  readonly deadlineMs?: number;
  /** Opens the stream on this client's connection (which `close` then leaves open) instead of its own. */
  readonly client?: Client;
}

/** Opens a Subscribe stream to a broker; `token` rides as its bearer token. */
export function openSubscribeStream(
  address: string,
  token?: string,
  options: SubscribeStreamOptions = {},
): SubscribeStream {
  const client = options.client ?? new Client(address, credentials.createInsecure());
  const method = queueServiceDefinition.subscribe!;
  const metadata = new Metadata();
  if (token !== undefined) metadata.set("authorization", `Bearer ${token}`);
  const call: ClientDuplexStream<SubscribeRequest | Buffer, SubscribeResponse> = client.makeBidiStreamRequest(
    method.path,
    (value: SubscribeRequest | Buffer) =>
      Buffer.isBuffer(value) ? value : (method.requestSerialize as (value: SubscribeRequest) => Buffer)(value),
    method.responseDeserialize as (bytes: Buffer) => SubscribeResponse,
    metadata,
    options.deadlineMs === undefined ? {} : { deadline: Date.now() + options.deadlineMs },
  );
  const responses: SubscribeResponse[] = [];
  const readers: ((response: SubscribeResponse) => void)[] = [];
  call.on("data", (response: SubscribeResponse) => {
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
  const next = (): Promise<SubscribeResponse> => {
    call.resume();
    const ready = responses.shift();
    if (ready) return Promise.resolve(ready);
    return new Promise((resolve) => readers.push(resolve));
  };
  return {
    send: (request) => call.write(create(SubscribeRequestSchema, request)),
    sendBytes: (bytes) => call.write(bytes),
    pause: () => call.pause(),
    next,
    async deliveries(count) {
      const messages: SubscribeResponse["messages"] = [];
      while (messages.length < count) messages.push(...(await next()).messages);
      return messages;
    },
    buffered: responses,
    end: () => call.end(),
    cancel: () => call.cancel(),
    closed,
    close: () => {
      if (options.client === undefined) client.close();
      else call.cancel();
    },
  };
}

/**
 * Sends a renewal of a handle that names nothing and waits for its answer, which proves every request before
 * it served (the first one's subscription open); returns the deliveries that came meanwhile. Throws the
 * stream's error if it ends first.
 */
export async function probeSubscribeStream(stream: SubscribeStream): Promise<SubscribeResponse["messages"]> {
  stream.send({ leases: [{ receiptHandle: "probe" }] });
  const ended = stream.closed.then((error) => {
    throw error ?? new Error("the stream ended OK before its probe was answered");
  });
  const delivered: SubscribeResponse["messages"] = [];
  for (;;) {
    const response = await Promise.race([stream.next(), ended]);
    delivered.push(...response.messages);
    if (response.leases.some((lease) => lease.receiptHandle === "probe")) return delivered;
  }
}
