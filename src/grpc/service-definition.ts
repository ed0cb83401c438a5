import { fromBinary, toBinary, type DescMessage, type DescService } from "@bufbuild/protobuf";
import type { MethodDefinition, ServiceDefinition } from "@grpc/grpc-js";

/**
 * What the server's deserializer returns for bytes that are not a valid
 * request. grpc-js would answer a throwing deserializer with INTERNAL; bad
 * input must get INVALID_ARGUMENT, so the handler bridge answers this one.
 */
export class MalformedRequest {
  constructor(
    readonly cause: unknown,
    /** The request message's full name, e.g. holdshelf.v1.SendRequest. */
    readonly typeName: string,
  ) {}

  /** What is wrong with the bytes, as the field violation of "request" says it. */
  get description(): string {
    // protobuf-es reads proto3 strings with a fatal TextDecoder, whose
    // TypeError is the one decode error not about the encoding's structure.
    if (this.cause instanceof TypeError && /utf-?8/i.test(this.cause.message)) {
      return "has a string field that is not valid UTF-8";
    }
    return `is not a valid protobuf encoding of ${this.typeName}`;
  }
}

/**
 * Builds a grpc-js service definition from a protobuf-es service descriptor:
 * protoc-gen-es v2 emits descriptors but no grpc-js definitions. The server
 * and the client both use it, so both speak exactly the generated schema.
 */
export function createServiceDefinition(service: DescService): ServiceDefinition {
  const definition: Record<string, MethodDefinition<unknown, unknown>> = {};
  for (const method of service.methods) {
    const streamsRequests = method.methodKind === "client_streaming" || method.methodKind === "bidi_streaming";
    const streamsResponses = method.methodKind === "server_streaming" || method.methodKind === "bidi_streaming";
    definition[method.localName] = {
      path: `/${service.typeName}/${method.name}`,
      originalName: method.name,
      requestStream: streamsRequests,
      responseStream: streamsResponses,
      requestSerialize: serializer(method.input),
      requestDeserialize: (bytes: Buffer) => {
        try {
          return fromBinary(method.input, bytes);
        } catch (error) {
          return new MalformedRequest(error, method.input.typeName);
        }
      },
      responseSerialize: serializer(method.output),
      responseDeserialize: (bytes: Buffer) => fromBinary(method.output, bytes),
    };
  }
  return definition;
}

function serializer(schema: DescMessage): (message: unknown) => Buffer {
  return (message) => {
    const bytes = toBinary(schema, message as never);
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  };
}
