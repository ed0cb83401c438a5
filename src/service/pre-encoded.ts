/**
 * A response already in its wire form, for the hot RPCs whose answers are
 * built straight into bytes rather than through protobuf-es's reflective
 * encoder (see receive-response-encoding.ts). The server's serializer sends
 * the bytes as they are. `T` names the message the bytes encode, so that a
 * handler can return one only where that message is the answer.
 */
export class PreEncoded<T> {
  declare private readonly encodes: T;

  constructor(readonly bytes: Buffer) {}
}
