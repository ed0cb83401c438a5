// The gRPC health service (grpc.health.v1.Health) as probes and load
// balancers call it: Check, Watch, malformed requests, and shutdown ending
// the Watch calls so that a graceful server shutdown completes.
import { create } from "@bufbuild/protobuf";
import {
  Client,
  credentials,
  Metadata,
  Server,
  ServerCredentials,
  status,
  type ClientReadableStream,
  type ServiceError,
  type StatusObject,
} from "@grpc/grpc-js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  HealthCheckRequestSchema,
  HealthCheckResponse_ServingStatus as ServingStatus,
  type HealthCheckResponse,
} from "../../gen/grpc/health/v1/health_pb.js";
import { addHealthService, healthServiceDefinition, HealthStatus } from "../../src/grpc/health-service.js";

const check = healthServiceDefinition["check"]!;
const watch = healthServiceDefinition["watch"]!;

// Field 1 (service) announces 5 bytes and has 1: no HealthCheckRequest decodes from this.
const truncatedRequest = Buffer.from([0x0a, 0x05, 0x61]);

describe("gRPC health service", () => {
  let server: Server;
  let health: HealthStatus;
  let client: Client;

  beforeEach(async () => {
    server = new Server();
    health = new HealthStatus();
    addHealthService(server, health);
    const port = await new Promise<number>((resolve, reject) => {
      server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (error, bound) =>
        error ? reject(error) : resolve(bound),
      );
    });
    client = new Client(`127.0.0.1:${port}`, credentials.createInsecure());
  });
  afterEach(() => {
    client.close();
    server.forceShutdown();
  });

  function checkStatus(service: string, serialize = check.requestSerialize): Promise<ServingStatus> {
    return new Promise((resolve, reject) => {
      client.makeUnaryRequest(
        check.path,
        serialize,
        check.responseDeserialize,
        create(HealthCheckRequestSchema, { service }),
        (error: ServiceError | null, response?: unknown) =>
          error ? reject(error) : resolve((response as HealthCheckResponse).status),
      );
    });
  }

  /** A Watch call whose messages and final status are recorded as they come. */
  function startWatch(service: string, serialize = watch.requestSerialize) {
    const call: ClientReadableStream<HealthCheckResponse> = client.makeServerStreamRequest(
      watch.path,
      serialize,
      watch.responseDeserialize,
      create(HealthCheckRequestSchema, { service }),
      new Metadata(),
      {},
    );
    const received: ServingStatus[] = [];
    let waiting: { count: number; resolve: () => void }[] = [];
    call.on("data", (response: HealthCheckResponse) => {
      received.push(response.status);
      const due = waiting.filter((each) => received.length >= each.count);
      waiting = waiting.filter((each) => received.length < each.count);
      for (const wait of due) wait.resolve();
    });
    // The error event repeats the status; the status event alone is awaited.
    call.on("error", () => {});
    const ended = new Promise<StatusObject>((resolve) => call.on("status", resolve));
    return {
      call,
      received,
      ended,
      /** Resolves once `count` messages have arrived in all. */
      messages(count: number): Promise<ServingStatus[]> {
        if (received.length >= count) return Promise.resolve([...received]);
        return new Promise((resolve) => waiting.push({ count, resolve: () => resolve(received.slice(0, count)) }));
      },
    };
  }

  it("answers SERVING for the whole server and for holdshelf.v1.QueueService", async () => {
    expect(await checkStatus("")).toBe(ServingStatus.SERVING);
    expect(await checkStatus("holdshelf.v1.QueueService")).toBe(ServingStatus.SERVING);
  });

  it("fails a Check of an unknown service with NOT_FOUND", async () => {
    await expect(checkStatus("holdshelf.v1.NoSuchService")).rejects.toMatchObject({ code: status.NOT_FOUND });
  });

  it("answers NOT_SERVING once the status flips, and SERVING once it flips back", async () => {
    health.setNotServing();
    expect(await checkStatus("")).toBe(ServingStatus.NOT_SERVING);
    expect(await checkStatus("holdshelf.v1.QueueService")).toBe(ServingStatus.NOT_SERVING);
    health.setServing();
    expect(await checkStatus("holdshelf.v1.QueueService")).toBe(ServingStatus.SERVING);
  });

  it("sends a Watch the current status at once, then each change, and nothing for a repeated setting", async () => {
    const watching = startWatch("holdshelf.v1.QueueService");
    expect(await watching.messages(1)).toEqual([ServingStatus.SERVING]);
    health.setNotServing();
    health.setNotServing();
    health.setServing();
    expect(await watching.messages(3)).toEqual([
      ServingStatus.SERVING,
      ServingStatus.NOT_SERVING,
      ServingStatus.SERVING,
    ]);
    watching.call.cancel();
    expect((await watching.ended).code).toBe(status.CANCELLED);
  });

  it("sends a Watch of an unknown service SERVICE_UNKNOWN and keeps the call open", async () => {
    const watching = startWatch("holdshelf.v1.NoSuchService");
    let ended = false;
    void watching.ended.then(() => (ended = true));
    expect(await watching.messages(1)).toEqual([ServingStatus.SERVICE_UNKNOWN]);
    // A call made after the first message has come back: had the server ended
    // the Watch with that message, its status would have arrived by now.
    await checkStatus("");
    expect(ended).toBe(false);
    watching.call.cancel();
    expect((await watching.ended).code).toBe(status.CANCELLED);
    expect(watching.received).toEqual([ServingStatus.SERVICE_UNKNOWN]);
  });

  it("ends open Watch calls with NOT_SERVING on shutdown, so a graceful server shutdown completes", async () => {
    const known = startWatch("");
    const unknown = startWatch("holdshelf.v1.NoSuchService");
    await Promise.all([known.messages(1), unknown.messages(1)]);
    health.shutdown();
    expect((await known.ended).code).toBe(status.OK);
    expect((await unknown.ended).code).toBe(status.OK);
    expect(known.received).toEqual([ServingStatus.SERVING, ServingStatus.NOT_SERVING]);
    expect(unknown.received).toEqual([ServingStatus.SERVICE_UNKNOWN]);
    // Without the Watch calls ended, this would wait for them until the test timed out.
    await new Promise<void>((resolve, reject) => server.tryShutdown((error) => (error ? reject(error) : resolve())));
  });

  it("ends a Watch that starts after shutdown once it has the status", async () => {
    health.shutdown();
    const watching = startWatch("");
    expect((await watching.ended).code).toBe(status.OK);
    expect(watching.received).toEqual([ServingStatus.NOT_SERVING]);
  });

  it("answers a malformed Check or Watch request with INVALID_ARGUMENT", async () => {
    const serializeTruncated = (): Buffer => truncatedRequest;
    await expect(checkStatus("", serializeTruncated)).rejects.toMatchObject({ code: status.INVALID_ARGUMENT });
    const watching = startWatch("", serializeTruncated);
    expect((await watching.ended).code).toBe(status.INVALID_ARGUMENT);
    expect(watching.received).toEqual([]);
  });
});
