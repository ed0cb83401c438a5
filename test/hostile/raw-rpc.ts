import { Client, credentials, Metadata, type ServiceError } from "@grpc/grpc-js";
import { RpcError } from "../../src/client/rpc-error.js";

/** How a raw call ended: its response bytes, or the error it failed with. */
export type RawOutcome = { ok: true; response: Buffer } | { ok: false; error: RpcError };

/** A grpc-js client that sends request bytes as they are, so that tests can send what no valid message encodes. */
export interface RawRpc {
  /** Calls `/holdshelf.v1.QueueService/<method>` with raw request bytes; fails the test's promise only on a local fault. */
  unary(method: string, request: Buffer, deadlineMs?: number): Promise<RawOutcome>;
  /** Opens a Heartbeat stream, writes each request, half-closes, and collects the responses and the status. */
  heartbeat(requests: Buffer[], deadlineMs?: number): Promise<RawStreamOutcome>;
  close(): void;
}

/** How a raw Heartbeat stream ended: the responses it got, and the error unless it ended OK. */
export interface RawStreamOutcome {
  responses: Buffer[];
  error: RpcError | undefined;
}

const identity = (bytes: Buffer): Buffer => bytes;

/** Opens a raw client of the broker at `address`. */
export function createRawRpc(address: string): RawRpc {
  const client = new Client(address, credentials.createInsecure(), {
    "grpc.max_send_message_length": 64 * 1024 * 1024,
    "grpc.max_receive_message_length": 64 * 1024 * 1024,
  });
  return {
    unary(method, request, deadlineMs = 10_000) {
      return new Promise((resolve) => {
        client.makeUnaryRequest(
          `/holdshelf.v1.QueueService/${method}`,
          identity,
          identity,
          request,
          new Metadata(),
          { deadline: Date.now() + deadlineMs },
          (error: ServiceError | null, response?: Buffer) => {
            if (error) resolve({ ok: false, error: RpcError.fromServiceError(error) });
            else resolve({ ok: true, response: response ?? Buffer.alloc(0) });
          },
        );
      });
    },
    heartbeat(requests, deadlineMs = 10_000) {
      return new Promise((resolve) => {
        const call = client.makeBidiStreamRequest(
          "/holdshelf.v1.QueueService/Heartbeat",
          identity,
          identity,
          new Metadata(),
          { deadline: Date.now() + deadlineMs },
        );
        const responses: Buffer[] = [];
        call.on("data", (response: Buffer) => responses.push(response));
        call.on("error", (error: ServiceError) => resolve({ responses, error: RpcError.fromServiceError(error) }));
        call.on("status", (status: { code: number }) => {
          if (status.code === 0) resolve({ responses, error: undefined });
        });
        for (const request of requests) call.write(request);
        call.end();
      });
    },
    close: () => client.close(),
  };
}
