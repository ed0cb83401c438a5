// gRPC server reflection, v1 and v1alpha, asked what grpcurl asks: the
// service list, the file declaring a symbol (with every import, enough to
// rebuild the schema), a file by name, and misses that leave the stream open.
import { create, createFileRegistry, fromBinary, type DescMessage, type MessageInitShape } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema, FileDescriptorSetSchema, type FileDescriptorProto } from "@bufbuild/protobuf/wkt";
import {
  Client,
  credentials,
  Metadata,
  Server,
  ServerCredentials,
  status,
  type ServiceDefinition,
  type StatusObject,
} from "@grpc/grpc-js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import * as v1 from "../../gen/grpc/reflection/v1/reflection_pb.js";
import * as v1alpha from "../../gen/grpc/reflection/v1alpha/reflection_pb.js";
import { file_holdshelf_v1_queue_service } from "../../gen/holdshelf/v1/queue_service_pb.js";
import {
  addReflectionService,
  reflectionServiceDefinition,
  reflectionV1alphaServiceDefinition,
} from "../../src/grpc/reflection-service.js";

// The versions share their shape; the v1 types stand for both in these tests.
type Request = MessageInitShape<typeof v1.ServerReflectionRequestSchema>;
type Response = v1.ServerReflectionResponse;

// Field 1 (host) announces 5 bytes and has 1: no request decodes from this.
const truncatedRequest = Buffer.from([0x0a, 0x05, 0x61]);

const versions: { name: string; definition: ServiceDefinition; requestSchema: DescMessage }[] = [
  { name: "v1", definition: reflectionServiceDefinition, requestSchema: v1.ServerReflectionRequestSchema },
  {
    name: "v1alpha",
    definition: reflectionV1alphaServiceDefinition,
    requestSchema: v1alpha.ServerReflectionRequestSchema,
  },
];

// Stands for a request that is sent as bytes no request decodes from.
const malformedMarker = {};

/**
 * What grpcurl does with an answer: the first file is the one asked for, and
 * its imports are found by name among the others. Ordered imports first, as
 * a FileDescriptorSet must be; a missing import throws.
 */
function importsFirst(files: FileDescriptorProto[]): FileDescriptorProto[] {
  const byName = new Map(files.map((file) => [file.name, file]));
  const ordered = new Set<FileDescriptorProto>();
  const visit = (file: FileDescriptorProto): void => {
    if (ordered.has(file)) return;
    for (const name of file.dependency) {
      const dependency = byName.get(name);
      if (dependency === undefined) throw new Error(`${file.name} imports ${name}, which the answer lacks`);
      visit(dependency);
    }
    ordered.add(file);
  };
  visit(files[0]!);
  return [...ordered];
}

describe.each(versions)("gRPC server reflection $name", ({ definition, requestSchema }) => {
  let server: Server;
  let client: Client;

  beforeEach(async () => {
    server = new Server();
    addReflectionService(server, [file_holdshelf_v1_queue_service]);
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

  /** A ServerReflectionInfo stream on which each request awaits its response, in order. */
  function openStream() {
    const method = definition["serverReflectionInfo"]!;
    const call = client.makeBidiStreamRequest(
      method.path,
      (request: unknown) => (request === malformedMarker ? truncatedRequest : method.requestSerialize(request)),
      method.responseDeserialize,
      new Metadata(),
      {},
    );
    const pending: ((response: Response) => void)[] = [];
    call.on("data", (response: Response) => pending.shift()!(response));
    call.on("error", () => {});
    const ended = new Promise<StatusObject>((resolve) => call.on("status", resolve));
    return {
      ended,
      ask(request: Request): Promise<Response> {
        return new Promise((resolve) => {
          pending.push(resolve);
          call.write(create(requestSchema, request));
        });
      },
      /** Sends bytes that do not decode as a request. */
      askMalformed(): Promise<Response> {
        return new Promise((resolve) => {
          pending.push(resolve);
          call.write(malformedMarker);
        });
      },
      close(): void {
        call.end();
      },
    };
  }

  /** The file descriptors of a response, which must be a file_descriptor_response. */
  function descriptorsOf(response: Response): FileDescriptorProto[] {
    const answer = response.messageResponse;
    expect(answer.case).toBe("fileDescriptorResponse");
    const bytes = answer.case === "fileDescriptorResponse" ? answer.value.fileDescriptorProto : [];
    return bytes.map((each) => fromBinary(FileDescriptorProtoSchema, each));
  }

  it("lists the holdshelf, health and reflection services, echoing the request", async () => {
    const stream = openStream();
    const response = await stream.ask({
      host: "localhost:50051",
      messageRequest: { case: "listServices", value: "*" },
    });
    expect(response.validHost).toBe("localhost:50051");
    expect(response.originalRequest?.messageRequest).toEqual({ case: "listServices", value: "*" });
    expect(response.messageResponse.case).toBe("listServicesResponse");
    const names =
      response.messageResponse.case === "listServicesResponse"
        ? response.messageResponse.value.service.map((service) => service.name)
        : [];
    expect(names).toEqual(
      expect.arrayContaining([
        "holdshelf.v1.QueueService",
        "grpc.health.v1.Health",
        "grpc.reflection.v1.ServerReflection",
        "grpc.reflection.v1alpha.ServerReflection",
      ]),
    );
    stream.close();
    expect((await stream.ended).code).toBe(status.OK);
  });

  it("answers a service name with files from which its schema rebuilds, imports included", async () => {
    const stream = openStream();
    const response = await stream.ask({
      messageRequest: { case: "fileContainingSymbol", value: "holdshelf.v1.QueueService" },
    });
    const files = descriptorsOf(response);
    expect(files[0]!.name).toBe("holdshelf/v1/queue_service.proto");
    const names = files.map((file) => file.name);
    expect(new Set(names).size).toBe(names.length);
    const registry = createFileRegistry(create(FileDescriptorSetSchema, { file: importsFirst(files) }));
    const service = registry.getService("holdshelf.v1.QueueService");
    expect(service?.methods.find((method) => method.name === "Heartbeat")?.methodKind).toBe("bidi_streaming");
    expect(registry.getMessage("holdshelf.v1.ReceiveRequest")?.fields.length).toBeGreaterThan(0);
    expect(registry.getMessage("google.protobuf.Duration")).toBeDefined();
    stream.close();
  });

  it("finds the file of a method, a message and a file name", async () => {
    const stream = openStream();
    for (const symbol of ["holdshelf.v1.QueueService.Heartbeat", "holdshelf.v1.ReceiveRequest"]) {
      const response = await stream.ask({ messageRequest: { case: "fileContainingSymbol", value: symbol } });
      expect(descriptorsOf(response)[0]!.name).toBe("holdshelf/v1/queue_service.proto");
    }
    const health = await stream.ask({
      messageRequest: { case: "fileContainingSymbol", value: "grpc.health.v1.Health" },
    });
    expect(descriptorsOf(health).map((file) => file.name)).toEqual(["grpc/health/v1/health.proto"]);
    const byName = await stream.ask({ messageRequest: { case: "fileByFilename", value: "holdshelf/v1/queue.proto" } });
    const files = descriptorsOf(byName);
    expect(files[0]!.name).toBe("holdshelf/v1/queue.proto");
    expect(files.map((file) => file.name)).toEqual(expect.arrayContaining(files[0]!.dependency));
    stream.close();
  });

  it("answers an unknown symbol with NOT_FOUND in error_response and goes on answering", async () => {
    const stream = openStream();
    const miss = await stream.ask({
      messageRequest: { case: "fileContainingSymbol", value: "holdshelf.v1.NoSuchThing" },
    });
    expect(miss.messageResponse).toMatchObject({ case: "errorResponse", value: { errorCode: status.NOT_FOUND } });
    expect(miss.originalRequest?.messageRequest).toEqual({
      case: "fileContainingSymbol",
      value: "holdshelf.v1.NoSuchThing",
    });
    const missingFile = await stream.ask({ messageRequest: { case: "fileByFilename", value: "no/such.proto" } });
    expect(missingFile.messageResponse).toMatchObject({
      case: "errorResponse",
      value: { errorCode: status.NOT_FOUND },
    });
    const hit = await stream.ask({
      messageRequest: { case: "fileContainingSymbol", value: "holdshelf.v1.QueueService" },
    });
    expect(descriptorsOf(hit)[0]!.name).toBe("holdshelf/v1/queue_service.proto");
    stream.close();
    expect((await stream.ended).code).toBe(status.OK);
  });

  it("answers extension queries with NOT_FOUND, holdshelf having no extensions", async () => {
    const stream = openStream();
    const numbers = await stream.ask({
      messageRequest: { case: "allExtensionNumbersOfType", value: "holdshelf.v1.ReceiveRequest" },
    });
    expect(numbers.messageResponse).toMatchObject({ case: "errorResponse", value: { errorCode: status.NOT_FOUND } });
    const extension = await stream.ask({
      messageRequest: {
        case: "fileContainingExtension",
        value: { containingType: "holdshelf.v1.ReceiveRequest", extensionNumber: 100 },
      },
    });
    expect(extension.messageResponse).toMatchObject({ case: "errorResponse", value: { errorCode: status.NOT_FOUND } });
    stream.close();
  });

  it("answers a malformed or empty request with INVALID_ARGUMENT in error_response and goes on answering", async () => {
    const stream = openStream();
    const malformed = await stream.askMalformed();
    expect(malformed.messageResponse).toMatchObject({
      case: "errorResponse",
      value: { errorCode: status.INVALID_ARGUMENT },
    });
    const empty = await stream.ask({});
    expect(empty.messageResponse).toMatchObject({
      case: "errorResponse",
      value: { errorCode: status.INVALID_ARGUMENT },
    });
    const list = await stream.ask({ messageRequest: { case: "listServices", value: "" } });
    expect(list.messageResponse.case).toBe("listServicesResponse");
    stream.close();
    expect((await stream.ended).code).toBe(status.OK);
  });
});
