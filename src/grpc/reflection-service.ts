import { create, toBinary, type DescFile, type DescMessage, type DescService } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { status, type Server, type ServerDuplexStream } from "@grpc/grpc-js";
import { file_grpc_health_v1_health } from "../../gen/grpc/health/v1/health_pb.js";
import * as v1 from "../../gen/grpc/reflection/v1/reflection_pb.js";
import * as v1alpha from "../../gen/grpc/reflection/v1alpha/reflection_pb.js";
import { createServerServiceDefinition, MalformedRequest } from "./service-definition.js";

/** The grpc-js definition of grpc.reflection.v1.ServerReflection. */
export const reflectionServiceDefinition = createServerServiceDefinition(v1.ServerReflection);

/** The grpc-js definition of grpc.reflection.v1alpha.ServerReflection: grpcurl falls back to it, older tools speak only it. */
export const reflectionV1alphaServiceDefinition = createServerServiceDefinition(v1alpha.ServerReflection);

// The services the server offers besides those of the given files.
const builtInFiles = [
  file_grpc_health_v1_health,
  v1.file_grpc_reflection_v1_reflection,
  v1alpha.file_grpc_reflection_v1alpha_reflection,
];

// The answer to one request, alike in both versions of the protocol.
type Answer =
  | { case: "fileDescriptorResponse"; value: { fileDescriptorProto: Uint8Array[] } }
  | { case: "listServicesResponse"; value: { service: { name: string }[] } }
  | { case: "errorResponse"; value: { errorCode: number; errorMessage: string } };

type Query = v1.ServerReflectionRequest["messageRequest"] | v1alpha.ServerReflectionRequest["messageRequest"];

/**
 * Serves gRPC server reflection, v1 and v1alpha, so that grpcurl and similar
 * tools work without proto files: the services of `files` (and the health and
 * reflection services), and the descriptors of every file they reach. No
 * extensions are indexed: holdshelf's protos declare none.
 */
export function addReflectionService(server: Pick<Server, "addService">, files: readonly DescFile[]): void {
  const index = new ReflectionIndex([...files, ...builtInFiles]);
  server.addService(reflectionServiceDefinition, {
    serverReflectionInfo: answerEach((request: v1.ServerReflectionRequest | MalformedRequest) =>
      create(v1.ServerReflectionResponseSchema, index.respond(request)),
    ),
  });
  server.addService(reflectionV1alphaServiceDefinition, {
    serverReflectionInfo: answerEach((request: v1alpha.ServerReflectionRequest | MalformedRequest) =>
      create(v1alpha.ServerReflectionResponseSchema, index.respond(request)),
    ),
  });
}

// Errors are answers, not the end of the stream: a tool goes on asking after a miss.
const malformed: Answer = {
  case: "errorResponse",
  value: { errorCode: status.INVALID_ARGUMENT, errorMessage: "request: is not a valid protobuf message" },
};

function answerEach<Request>(
  respond: (request: Request | MalformedRequest) => unknown,
): (call: ServerDuplexStream<Request | MalformedRequest, unknown>) => void {
  return (call) => {
    call.on("data", (request: Request | MalformedRequest) => {
      // A client that asks without reading is slowed by flow control, not buffered for.
      if (!call.write(respond(request)) && !call.isPaused()) {
        call.pause();
        call.once("drain", () => call.resume());
      }
    });
    call.on("end", () => call.end());
  };
}

/** The files and symbols reflection answers about, with each file's serialized descriptor. */
class ReflectionIndex {
  private readonly serviceNames = new Set<string>();
  private readonly byFilename = new Map<string, DescFile>();
  private readonly bySymbol = new Map<string, DescFile>();
  private readonly serialized = new Map<DescFile, Uint8Array>();

  constructor(files: readonly DescFile[]) {
    for (const file of files) {
      for (const service of file.services) this.serviceNames.add(service.typeName);
      this.addFile(file);
    }
  }

  /** The fields of the response to a request: the request itself, echoed, and its answer. */
  respond<Request extends { host: string; messageRequest: Query }>(request: Request | MalformedRequest) {
    if (request instanceof MalformedRequest) return { messageResponse: malformed };
    return { validHost: request.host, originalRequest: request, messageResponse: this.answer(request.messageRequest) };
  }

  private answer(query: Query): Answer {
    switch (query.case) {
      case "listServices":
        return { case: "listServicesResponse", value: { service: [...this.serviceNames].map((name) => ({ name })) } };
      case "fileByFilename":
        return this.fileAnswer(this.byFilename.get(query.value), `file not found: ${query.value}`);
      case "fileContainingSymbol":
        return this.fileAnswer(this.bySymbol.get(query.value), `symbol not found: ${query.value}`);
      case "fileContainingExtension":
        return notFound(`extension not found: ${query.value.containingType} ${query.value.extensionNumber}`);
      case "allExtensionNumbersOfType":
        return notFound(`no extensions of type: ${query.value}`);
      case undefined:
        return {
          case: "errorResponse",
          value: { errorCode: status.INVALID_ARGUMENT, errorMessage: "message_request: no request is set" },
        };
    }
  }

  // The file comes first, then each file it imports, directly or not, once:
  // a client cannot build a descriptor without its imports.
  private fileAnswer(file: DescFile | undefined, missing: string): Answer {
    if (file === undefined) return notFound(missing);
    const files = new Set<DescFile>();
    const visit = (each: DescFile): void => {
      if (files.has(each)) return;
      files.add(each);
      each.dependencies.forEach(visit);
    };
    visit(file);
    return {
      case: "fileDescriptorResponse",
      value: { fileDescriptorProto: [...files].map((each) => this.serialized.get(each)!) },
    };
  }

  private addFile(file: DescFile): void {
    if (this.serialized.has(file)) return;
    this.serialized.set(file, toBinary(FileDescriptorProtoSchema, file.proto));
    // DescFile.name drops ".proto"; tools ask by the full file name.
    this.byFilename.set(file.proto.name, file);
    file.services.forEach((service) => {
      this.addService(file, service);
    });
    file.messages.forEach((message) => {
      this.addMessage(file, message);
    });
    for (const enumeration of file.enums) this.bySymbol.set(enumeration.typeName, file);
    file.dependencies.forEach((dependency) => {
      this.addFile(dependency);
    });
  }

  private addService(file: DescFile, service: DescService): void {
    this.bySymbol.set(service.typeName, file);
    for (const method of service.methods) this.bySymbol.set(`${service.typeName}.${method.name}`, file);
  }

  private addMessage(file: DescFile, message: DescMessage): void {
    this.bySymbol.set(message.typeName, file);
    message.nestedMessages.forEach((nested) => {
      this.addMessage(file, nested);
    });
    for (const enumeration of message.nestedEnums) this.bySymbol.set(enumeration.typeName, file);
  }
}

function notFound(message: string): Answer {
  return { case: "errorResponse", value: { errorCode: status.NOT_FOUND, errorMessage: message } };
}
