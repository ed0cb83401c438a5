// gRPC over node:http2 with nothing in between, so that tests can send what
// grpc-js never would: wrong message framing, lying length prefixes, the
// compressed flag without an encoding, and streams that are never read.
import http2 from "node:http2";
import { fromBinary } from "@bufbuild/protobuf";
import { anyUnpack } from "@bufbuild/protobuf/wkt";
import { BadRequestSchema, ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb.js";
import { StatusSchema } from "../../gen/google/rpc/status_pb.js";

/** The 5-byte gRPC message prefix and the message: `flag` 1 means compressed; `length` may lie. */
export function grpcFrame(message: Uint8Array, options: { flag?: number; length?: number } = {}): Buffer {
  const prefix = Buffer.alloc(5);
  prefix[0] = options.flag ?? 0;
  prefix.writeUInt32BE(options.length ?? message.byteLength, 1);
  return Buffer.concat([prefix, message]);
}

/** How a raw gRPC call ended, from its headers and trailers (or trailers-only response). */
export interface RawStatus {
  /** grpc-status, or undefined if the stream ended without one. */
  code: number | undefined;
  message: string;
  /** The ErrorInfo reason of grpc-status-details-bin; empty when there is none. */
  reason: string;
  /** BadRequest field names. */
  fields: string[];
  /** Bytes of response data received. */
  dataBytes: number;
}

/** Opens an HTTP/2 session to a broker at host:port. */
export function connect(address: string): Promise<http2.ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`http://${address}`);
    session.once("connect", () => resolve(session));
    session.once("error", reject);
  });
}

/** Opens a gRPC request stream on `session` (headers only; the caller writes the body). */
export function openCall(
  session: http2.ClientHttp2Session,
  method: string,
  headers: Record<string, string> = {},
): http2.ClientHttp2Stream {
  return session.request({
    ":method": "POST",
    ":path": `/holdshelf.v1.QueueService/${method}`,
    "content-type": "application/grpc",
    te: "trailers",
    ...headers,
  });
}

/** Sends `body` as a whole request stream (then END_STREAM) and waits for the status, or `timeoutMs`. */
export function rawCall(
  session: http2.ClientHttp2Session,
  method: string,
  body: Buffer,
  headers: Record<string, string> = {},
  timeoutMs = 10_000,
): Promise<RawStatus> {
  const stream = openCall(session, method, headers);
  const status = callStatus(stream, timeoutMs);
  stream.end(body);
  return status;
}

/** Resolves with the stream's gRPC status once it closes; rejects after `timeoutMs`. */
export function callStatus(stream: http2.ClientHttp2Stream, timeoutMs = 10_000): Promise<RawStatus> {
  return new Promise((resolve, reject) => {
    let fields: http2.IncomingHttpHeaders = {};
    let dataBytes = 0;
    const timer = setTimeout(() => {
      stream.close(http2.constants.NGHTTP2_CANCEL);
      reject(new Error(`no status within ${timeoutMs} ms`));
    }, timeoutMs);
    stream.on("response", (headers) => (fields = { ...fields, ...headers }));
    stream.on("trailers", (trailers) => (fields = { ...fields, ...trailers }));
    stream.on("data", (chunk: Buffer) => (dataBytes += chunk.byteLength));
    stream.on("error", () => undefined);
    stream.on("close", () => {
      clearTimeout(timer);
      resolve(parseStatus(fields, dataBytes));
    });
  });
}

function parseStatus(fields: http2.IncomingHttpHeaders, dataBytes: number): RawStatus {
  const code = fields["grpc-status"] === undefined ? undefined : Number(fields["grpc-status"]);
  const message = decodeURIComponent(String(fields["grpc-message"] ?? ""));
  let reason = "";
  const names: string[] = [];
  const details = fields["grpc-status-details-bin"];
  if (typeof details === "string") {
    const status = fromBinary(StatusSchema, Buffer.from(details, "base64"));
    for (const any of status.details) {
      reason = anyUnpack(any, ErrorInfoSchema)?.reason ?? reason;
      names.push(...(anyUnpack(any, BadRequestSchema)?.fieldViolations.map((v) => v.field) ?? []));
    }
  }
  return { code, message, reason, fields: names, dataBytes };
}

/** The HTTP/2 client connection preface. */
export const http2Preface = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");

/** An HTTP/2 frame: 24-bit length (may lie), type, flags, 31-bit stream id, payload. */
export function http2Frame(
  type: number,
  flags: number,
  streamId: number,
  payload: Buffer,
  length = payload.length,
): Buffer {
  const header = Buffer.alloc(9);
  header.writeUIntBE(length, 0, 3);
  header[3] = type;
  header[4] = flags;
  header.writeUInt32BE(streamId & 0x7fffffff, 5);
  return Buffer.concat([header, payload]);
}
