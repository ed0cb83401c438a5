import { connect, type Socket } from "node:net";
import { leakIn } from "./error-leaks.js";

/** A request as bytes we choose: any method, path and headers (repeated ones too), the body whole or in pieces. */
export interface RawRequest {
  readonly method: string;
  readonly path: string;
  /** In order, repeats allowed; Host and Connection: close are added, Content-Length too unless one is given or the body is absent. */
  readonly headers: readonly (readonly [string, string])[];
  readonly body?: Buffer | string;
}

/** An HTTP answer as it came off the socket. */
export interface RawAnswer {
  readonly status: number;
  /** Lower-cased names; a repeated header keeps its last value. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
  readonly text: string;
}

/** The wire an SQS endpoint must answer a request in, by the rule the brief gives: X-Amz-Target or an amz-json content type means JSON. */
export type SqsProtocol = "json" | "query";

/** Which protocol `request` speaks. Node keeps the first of two Content-Types and joins repeated X-Amz-Targets, so any target counts. */
export function protocolOf(request: Pick<RawRequest, "headers">): SqsProtocol {
  const named = (name: string) =>
    request.headers.filter(([key]) => key.toLowerCase() === name).map(([, value]) => value);
  const contentType = named("content-type")[0] ?? "";
  return named("x-amz-target").length > 0 || contentType.includes("amz-json") ? "json" : "query";
}

/**
 * Sends one request on a new connection (Connection: close) and reads the
 * answer to the end. Rejects if no complete answer comes within `timeoutMs`:
 * a hang is a failure as much as a crash.
 */
export function exchange(endpoint: string, request: RawRequest, timeoutMs = 10_000): Promise<RawAnswer> {
  const { hostname, port } = new URL(endpoint);
  const body =
    request.body === undefined
      ? undefined
      : Buffer.isBuffer(request.body)
        ? request.body
        : Buffer.from(request.body, "utf8");
  const hasLength = request.headers.some(([name]) => name.toLowerCase() === "content-length");
  const head = [
    `${request.method} ${request.path} HTTP/1.1`,
    `Host: ${hostname}:${port}`,
    ...request.headers.map(([name, value]) => `${name}: ${value}`),
    ...(body === undefined || hasLength ? [] : [`Content-Length: ${body.length}`]),
    "Connection: close",
    "",
    "",
  ].join("\r\n");
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within ${timeoutMs} ms to ${request.method} ${request.path.slice(0, 200)}`));
    }, timeoutMs);
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("error", () => undefined);
    socket.on("close", () => {
      clearTimeout(timer);
      const answer = parseAnswer(Buffer.concat(chunks), request.method === "HEAD");
      if (answer === undefined)
        reject(new Error(`the connection closed without an answer to ${request.method} ${request.path.slice(0, 200)}`));
      else resolve(answer);
    });
    socket.write(head, "latin1");
    if (body !== undefined) socket.write(body);
  });
}

/** The answer in `bytes`, or undefined if they hold no complete one. */
export function parseAnswer(bytes: Buffer, head = false): RawAnswer | undefined {
  const end = bytes.indexOf("\r\n\r\n");
  if (end === -1) return undefined;
  const [statusLine, ...lines] = bytes.subarray(0, end).toString("latin1").split("\r\n");
  const match = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? "");
  if (match === null) return undefined;
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(":");
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body = bytes.subarray(end + 4);
  const length = headers["content-length"];
  if (head) body = Buffer.alloc(0);
  else if (length !== undefined) {
    if (body.length < Number(length)) return undefined;
    body = body.subarray(0, Number(length));
  }
  return { status: Number(match[1]), headers, body, text: body.toString("utf8") };
}

/** Opens a connection and resolves once it is connected. */
export function openSocket(endpoint: string): Promise<Socket> {
  const { hostname, port } = new URL(endpoint);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => resolve(socket));
    socket.once("error", reject);
  });
}

const jsonErrorTypes = /^com\.amazonaws\.sqs#[A-Za-z]+$/;
const queryErrorHeader = /^[A-Za-z.]+;(Sender|Receiver)$/;
const xmlError =
  /^<\?xml version="1\.0"\?><ErrorResponse xmlns="http:\/\/queue\.amazonaws\.com\/doc\/2012-11-05\/"><Error><Type>(Sender|Receiver)<\/Type><Code>([A-Za-z.]+)<\/Code><Message>([^<>]*)<\/Message><Detail\/><\/Error><RequestId>([0-9a-f-]{36})<\/RequestId><\/ErrorResponse>$/;
const requestId = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The code and message of a well-formed SQS error answer. */
export interface SqsErrorAnswer {
  readonly status: number;
  readonly code: string;
  readonly message: string;
}

/**
 * What is wrong with `answer` as SQS's refusal of a request in `protocol`,
 * or undefined if nothing: a 4xx (a 5xx is the broker's own trouble, which
 * garbage must not cause), a request id, and the body SQS clients parse:
 * JSON `{"__type","message"}` with x-amzn-query-error, or an XML
 * ErrorResponse with escaped text. A HEAD answer has no body to judge.
 */
export function errorProblem(answer: RawAnswer, protocol: SqsProtocol, method = "POST"): string | undefined {
  const parsed = readError(answer, protocol, method);
  if (typeof parsed === "string") return parsed;
  return undefined;
}

/** The error `answer` carries, or a description of why it is no well-formed SQS error. */
export function readError(answer: RawAnswer, protocol: SqsProtocol, method = "POST"): SqsErrorAnswer | string {
  const show = `${answer.status} ${JSON.stringify(answer.headers)} ${answer.text.slice(0, 500)}`;
  if (answer.status < 400 || answer.status > 499) return `status ${answer.status}, not 4xx: ${show}`;
  if (!requestId.test(answer.headers["x-amzn-requestid"] ?? "")) return `no x-amzn-requestid: ${show}`;
  const expectedType = protocol === "json" ? "application/x-amz-json-1.0" : "text/xml";
  if (answer.headers["content-type"] !== expectedType)
    return `content-type ${answer.headers["content-type"]}, not ${expectedType}: ${show}`;
  let code: string;
  let message: string;
  if (protocol === "json") {
    const header = answer.headers["x-amzn-query-error"] ?? "";
    if (!queryErrorHeader.test(header)) return `x-amzn-query-error ${JSON.stringify(header)}: ${show}`;
    code = header.slice(0, header.indexOf(";"));
    if (method === "HEAD") return { status: answer.status, code, message: "" };
    let body: unknown;
    try {
      body = JSON.parse(answer.text);
    } catch {
      return `the JSON error is not JSON: ${show}`;
    }
    const fields = body as Record<string, unknown>;
    if (typeof body !== "object" || body === null || Object.keys(body).sort().join() !== "__type,message")
      return `the JSON error's members: ${show}`;
    if (typeof fields["__type"] !== "string" || !jsonErrorTypes.test(fields["__type"])) return `__type: ${show}`;
    if (typeof fields["message"] !== "string" || fields["message"] === "") return `message: ${show}`;
    message = fields["message"];
  } else {
    if (method === "HEAD") return { status: answer.status, code: "", message: "" };
    const match = xmlError.exec(answer.text);
    if (match === null) return `not an XML ErrorResponse: ${show}`;
    if (match[4] !== answer.headers["x-amzn-requestid"]) return `the XML RequestId is not the header's: ${show}`;
    code = match[2]!;
    message = match[3]!;
    if (message === "" || /&(?!(amp|lt|gt|quot|apos|#\d+|#x[0-9a-fA-F]+);)/.test(message))
      return `the XML message is empty or badly escaped: ${show}`;
  }
  const leak = leakIn(message);
  if (leak !== undefined) return `the message leaks ${leak}: ${show}`;
  return { status: answer.status, code, message };
}
