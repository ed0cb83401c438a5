import { fromBinary, type DescService } from "@bufbuild/protobuf";
import type { ServiceDefinition } from "@grpc/grpc-js";
import { createServiceDefinition } from "../protocol/service-definition.js";
import { PreEncoded } from "../service/pre-encoded.js";

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
 * The protocol's service definition as a server serves it: a request that
 * cannot be decoded reaches the handler as a MalformedRequest, and a
 * response a handler encoded itself (PreEncoded) is sent as it is. Clients
 * never deserialize requests, so this stays out of src/protocol.
 */
export function createServerServiceDefinition(service: DescService): ServiceDefinition {
  const definition = createServiceDefinition(service, (schema, bytes) => {
    try {
      return fromBinary(schema, bytes);
    } catch (error) {
      return new MalformedRequest(error, schema.typeName);
    }
  });
  for (const method of Object.values(definition)) {
    const serialize = method.responseSerialize;
    method.responseSerialize = (response: unknown) =>
      response instanceof PreEncoded ? response.bytes : serialize(response);
  }
  return definition;
}
