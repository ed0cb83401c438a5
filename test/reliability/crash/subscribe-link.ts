import { Client, credentials, Metadata, type ClientDuplexStream, type ServiceError } from "@grpc/grpc-js";
import type { SubscribeRequest, SubscribeResponse } from "../../../gen/holdshelf/v1/queue_service_pb.js";
import { RpcError } from "../../../src/client/rpc-error.js";
import { queueServiceDefinition } from "../../../src/protocol/queue-service-definition.js";

/** One Subscribe call as a crash consumer uses it, whichever process holds its connection. */
export interface SubscribeLink {
  write(request: SubscribeRequest): void;
  /** Half-closes: the broker answers what was sent, then ends the stream with OK. */
  end(): void;
  /** Breaks the call, as a crashed client would. */
  cancel(): void;
  /** Resolves with undefined on OK, or with how the call ended otherwise. */
  readonly closed: Promise<unknown>;
}

/** Opens Subscribe calls: in this process (openSubscribeLink) or in a child process that can be SIGKILLed (SubscribeRelay). */
export interface SubscribeDialer {
  open(address: string, onResponse: (response: SubscribeResponse) => void): SubscribeLink;
  /** SIGKILLs the process that holds the calls and starts another one; absent where the process is this one. */
  kill?(): Promise<void>;
  /** Ends what the dialer started. */
  close(): Promise<void>;
}

/** Opens Subscribe calls in this process, each on a channel of its own. */
export const inProcessDialer: SubscribeDialer = {
  open: openSubscribeLink,
  close: async () => undefined,
};

/** Opens a Subscribe call in this process, on a channel of its own that closes with it. */
export function openSubscribeLink(address: string, onResponse: (response: SubscribeResponse) => void): SubscribeLink {
  const client = new Client(address, credentials.createInsecure());
  const method = queueServiceDefinition.subscribe!;
  // No deadline: a passed deadline is a break, which would release the leases of a release_on_disconnect stream.
  const call: ClientDuplexStream<SubscribeRequest, SubscribeResponse> = client.makeBidiStreamRequest(
    method.path,
    method.requestSerialize as (value: SubscribeRequest) => Buffer,
    method.responseDeserialize as (bytes: Buffer) => SubscribeResponse,
    new Metadata(),
  );
  call.on("data", onResponse);
  const closed = new Promise<unknown>((resolve) => {
    call.on("error", (error: ServiceError) => resolve(RpcError.fromServiceError(error)));
    call.on("status", (status) => {
      if (status.code === 0) resolve(undefined);
    });
  });
  void closed.then(() => client.close());
  return {
    write: (request) => call.write(request),
    end: () => call.end(),
    cancel: () => call.cancel(),
    closed,
  };
}
