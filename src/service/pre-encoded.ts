/**
 * A response in its wire form, for the hot RPCs whose answers are built
 * straight into bytes rather than through protobuf-es's reflective encoder
 * (see receive-response-encoding.ts), and for answers another broker sent.
 * The server's serializer sends the bytes as they are. `T` names the message the bytes encode, so that a
 * handler can return one only where that message is the answer.
 */
export class PreEncoded<T> {
  declare private readonly encodes: T;
  #bytes: Buffer | undefined;
  readonly #encode: (() => Buffer) | undefined;

  /** The bytes, or how to write them when a wire first asks: a caller in the same process may never need them. */
  constructor(bytes: Buffer | (() => Buffer)) {
    if (typeof bytes === "function") this.#encode = bytes;
    else this.#bytes = bytes;
  }

  /** The message's wire form. */
  get bytes(): Buffer {
    return (this.#bytes ??= this.#encode!());
  }
}
