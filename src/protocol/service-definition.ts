import { fromBinary, toBinary, type DescMessage, type DescService } from "@bufbuild/protobuf";
import type { MethodDefinition, ServiceDefinition } from "@grpc/grpc-js";

/** Turns a request's bytes into what a handler receives; the server's may return a stand-in for bad bytes. */
export type RequestReader = (schema: DescMessage, bytes: Uint8Array) => unknown;

/**
 * Builds a grpc-js service definition from a protobuf-es service descriptor:
 * protoc-gen-es v2 emits descriptors but no grpc-js definitions. The server
 * and the clients both build theirs here, so both speak exactly the generated
 * schema; only the server passes its own `readRequest`.
 */
export function createServiceDefinition(
  service: DescService,
  readRequest: RequestReader = (schema, bytes) => fromBinary(schema, bytes),
): ServiceDefinition {
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
      requestDeserialize: (bytes: Buffer) => readRequest(method.input, bytes),
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
