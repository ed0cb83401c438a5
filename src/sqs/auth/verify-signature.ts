import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import type { Principal } from "../../auth/permissions.js";
import { sqsErrors, type SqsError } from "../sqs-error.js";
import {
  canonicalHeaderValue,
  canonicalPath,
  canonicalQuery,
  parseQuery,
  type QueryParam,
} from "./canonical-request.js";
import type { SqsKeyring } from "./sqs-credentials.js";

/** An HTTP request as the listener received it, for its signature to be checked. */
export interface SignedRequest {
  method: string;
  /** The raw request target path, as received, without the query. */
  path: string;
  /** The raw query string, without "?". */
  rawQuery: string;
  /**
   * Lowercase names, as Node gives them. Pass `headersDistinct` rather than
   * `headers` where a header may be repeated: SigV4 joins repeated values
   * with ",", while IncomingHttpHeaders joins them with ", ".
   */
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

const algorithm = "AWS4-HMAC-SHA256";
const service = "sqs";
const terminator = "aws4_request";
// AWS's window for a request's time either side of its own clock.
const maxSkewMs = 15 * 60_000;
// A week: the longest a presigned URL may be valid, as for every AWS signer.
const maxExpiresSeconds = 604_800;
const presignParams = [
  "X-Amz-Algorithm",
  "X-Amz-Credential",
  "X-Amz-Signature",
  "X-Amz-Date",
  "X-Amz-SignedHeaders",
  "X-Amz-Expires",
];
const headerName = /^[a-z0-9!#$%&'*+.^_`|~-]+$/;

/**
 * The caller a SigV4-signed request comes from: its access key's principal,
 * once its signature (Authorization header or presigned query) is checked
 * against the keyring's secret at time `nowMs`. Any region is accepted; the
 * service must be "sqs". Throws SqsError as AWS answers: MissingAuthenticationToken,
 * IncompleteSignature, InvalidClientTokenId, SignatureDoesNotMatch (also
 * for a clock more than 15 minutes off, which the SDKs correct and retry),
 * RequestExpired (a presigned URL past X-Amz-Expires).
 */
export function verifySignature(request: SignedRequest, keyring: Pick<SqsKeyring, "find">, nowMs: number): Principal {
  const params = parseQuery(request.rawQuery);
  const authorization = request.headers.authorization;
  const presigned = isPresigned(params);
  if (authorization === undefined && !presigned) throw sqsErrors.missingAuthenticationToken();
  if (authorization !== undefined && presigned) {
    throw incomplete(
      "Only one authentication mechanism is allowed: the X-Amz-Algorithm query parameter or the Authorization header.",
    );
  }
  const claim = presigned ? presignedClaim(params) : headerClaim(authorization!, request.headers);
  const scope = parseScope(claim.credential);
  const signedHeaders = parseSignedHeaders(claim.signedHeaders, request.headers);
  checkTime(claim, scope.date, nowMs);
  const key = keyring.find(scope.accessKeyId);
  if (key === undefined) throw sqsErrors.invalidClientTokenId();
  const canonicalRequest = [
    request.method,
    canonicalPath(request.path),
    // A presigned URL's signature is not part of what it signs.
    canonicalQuery(params, presigned ? (param) => param.name === "X-Amz-Signature" : undefined),
    ...signedHeaders.map((name) => `${name}:${canonicalHeaderValue(request.headers[name]!)}`),
    "",
    signedHeaders.join(";"),
    payloadHash(request),
  ].join("\n");
  const stringToSign = [
    algorithm,
    claim.requestTime,
    `${scope.date}/${scope.region}/${service}/${terminator}`,
    sha256Hex(canonicalRequest),
  ].join("\n");
  let signingKey: Buffer = Buffer.from(`AWS4${key.secret}`, "utf8");
  for (const part of [scope.date, scope.region, service, terminator]) signingKey = hmac(signingKey, part);
  const expected = hmac(signingKey, stringToSign);
  // Compared in constant time: how long it takes says nothing about how close a forgery came.
  if (!/^[0-9a-f]{64}$/.test(claim.signature) || !timingSafeEqual(expected, Buffer.from(claim.signature, "hex"))) {
    throw sqsErrors.signatureDoesNotMatch();
  }
  return key.principal;
}

/** What a request's authentication claims, before any of it is checked. */
interface Claim {
  readonly credential: string;
  readonly signedHeaders: string;
  readonly signature: string;
  /** ISO 8601 basic format, e.g. 20130524T000000Z: the time in the string to sign. */
  readonly requestTime: string;
  /** A presigned URL's X-Amz-Expires; undefined for an Authorization header. */
  readonly expiresSeconds: number | undefined;
}

function isPresigned(params: readonly QueryParam[]): boolean {
  return params.some(
    (param) =>
      param.name === "X-Amz-Algorithm" || param.name === "X-Amz-Credential" || param.name === "X-Amz-Signature",
  );
}

// "AWS4-HMAC-SHA256 Credential=<key>/<date>/<region>/sqs/aws4_request, SignedHeaders=a;b, Signature=<hex>"
function headerClaim(authorization: string | string[], headers: SignedRequest["headers"]): Claim {
  const value =
    typeof authorization === "string" ? authorization : authorization.length === 1 ? authorization[0]! : undefined;
  if (value === undefined) throw incomplete("A request may carry only one Authorization header.");
  const match = /^AWS4-HMAC-SHA256 +(.*)$/s.exec(value);
  if (match === null) {
    throw incomplete(
      "The Authorization header must be a Signature Version 4 one: AWS4-HMAC-SHA256 Credential=…, SignedHeaders=…, Signature=…",
    );
  }
  const fields = new Map<string, string>();
  for (const part of match[1]!.split(",")) {
    const pair = part.trim();
    const equals = pair.indexOf("=");
    if (equals <= 0) throw incomplete("Invalid key=value pair (missing equal-sign) in Authorization header.");
    const name = pair.slice(0, equals);
    if (name !== "Credential" && name !== "SignedHeaders" && name !== "Signature") {
      // Quoted only when it is a plain word: the header is the caller's, and could hold anything.
      throw incomplete(
        /^[A-Za-z0-9-]{1,32}$/.test(name)
          ? `Unknown parameter '${name}' in Authorization header.`
          : "Unknown parameter in Authorization header.",
      );
    }
    if (fields.has(name)) throw incomplete(`Authorization header has more than one '${name}' parameter.`);
    fields.set(name, pair.slice(equals + 1));
  }
  const missing = ["Credential", "Signature", "SignedHeaders"]
    .filter((name) => !fields.get(name))
    .map((name) => `Authorization header requires '${name}' parameter.`);
  const requestTime = requestTimeOf(headers);
  if (requestTime === undefined)
    missing.push("Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header.");
  if (missing.length > 0) throw incomplete(missing.join(" "));
  return {
    credential: fields.get("Credential")!,
    signedHeaders: fields.get("SignedHeaders")!,
    signature: fields.get("Signature")!,
    requestTime: requestTime!,
    expiresSeconds: undefined,
  };
}

// X-Amz-Date wins over Date, as the SDKs send it and AWS reads it.
function requestTimeOf(headers: SignedRequest["headers"]): string | undefined {
  const amzDate = oneHeader(headers, "x-amz-date");
  if (amzDate !== undefined) {
    if (isoMs(amzDate) === undefined)
      throw incomplete("X-Amz-Date must be in ISO 8601 basic format, e.g. 20130524T000000Z.");
    return amzDate;
  }
  const date = oneHeader(headers, "date");
  if (date === undefined) return undefined;
  const ms = httpDateMs(date);
  if (ms === undefined) throw incomplete("The Date header must be an HTTP date, e.g. Fri, 24 May 2013 00:00:00 GMT.");
  return isoBasic(ms);
}

function presignedClaim(params: readonly QueryParam[]): Claim {
  const values = new Map<string, string>();
  for (const param of params) {
    if (!presignParams.includes(param.name)) continue;
    if (values.has(param.name)) throw incomplete(`The query string has more than one '${param.name}' parameter.`);
    values.set(param.name, param.value);
  }
  if (presignParams.some((name) => !values.get(name))) {
    throw incomplete(
      "AWS query-string parameters must include 'X-Amz-Algorithm', 'X-Amz-Credential', 'X-Amz-Signature', 'X-Amz-Date', 'X-Amz-SignedHeaders', 'X-Amz-Expires'. Re-examine the query-string parameters.",
    );
  }
  if (values.get("X-Amz-Algorithm") !== algorithm) throw incomplete(`X-Amz-Algorithm only supports "${algorithm}".`);
  const requestTime = values.get("X-Amz-Date")!;
  if (isoMs(requestTime) === undefined)
    throw incomplete("X-Amz-Date must be in ISO 8601 basic format, e.g. 20130524T000000Z.");
  const expires = values.get("X-Amz-Expires")!;
  if (!/^[0-9]{1,6}$/.test(expires) || Number(expires) < 1 || Number(expires) > maxExpiresSeconds) {
    throw incomplete(`X-Amz-Expires must be a number of seconds from 1 to ${maxExpiresSeconds} (a week).`);
  }
  return {
    credential: values.get("X-Amz-Credential")!,
    signedHeaders: values.get("X-Amz-SignedHeaders")!,
    signature: values.get("X-Amz-Signature")!,
    requestTime,
    expiresSeconds: Number(expires),
  };
}

function parseScope(credential: string): { accessKeyId: string; date: string; region: string } {
  const parts = credential.split("/");
  if (parts.length !== 5)
    throw incomplete("Credential must have exactly 5 slash-delimited elements, e.g. keyid/date/region/service/term.");
  const [accessKeyId, date, region, scopeService, scopeTerminator] = parts as [string, string, string, string, string];
  if (region === "") throw sqsErrors.signatureDoesNotMatch("Credential should be scoped to a valid region.");
  if (scopeService !== service)
    throw sqsErrors.signatureDoesNotMatch(`Credential should be scoped to correct service: '${service}'.`);
  if (scopeTerminator !== terminator) {
    throw sqsErrors.signatureDoesNotMatch(`Credential should be scoped with a valid terminator: '${terminator}'.`);
  }
  return { accessKeyId, date, region };
}

/**
 * The signed header names, in the order the client listed them. Host must be
 * among them (the request is bound to this endpoint), and so must every
 * x-amz-* header sent: x-amz-target chooses the JSON action, and an unsigned
 * one would let a captured request be replayed as another action.
 */
function parseSignedHeaders(list: string, headers: SignedRequest["headers"]): string[] {
  const names = list.split(";");
  if (!names.every((name) => headerName.test(name)))
    throw incomplete("SignedHeaders must be lowercase header names separated by ';'.");
  if (new Set(names).size !== names.length) throw incomplete("SignedHeaders lists a header more than once.");
  if (!names.includes("host"))
    throw incomplete("'Host' or ':authority' must be a 'SignedHeader' in the AWS Authorization.");
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || !name.toLowerCase().startsWith("x-amz-") || names.includes(name.toLowerCase())) continue;
    const rule = "every x-amz-* header must be among the SignedHeaders.";
    throw incomplete(
      headerName.test(name) ? `Header '${name}' must be signed: ${rule}` : `A header must be signed: ${rule}`,
    );
  }
  for (const name of names) {
    const value = headers[name];
    if (value === undefined || (Array.isArray(value) && value.length === 0)) {
      throw sqsErrors.signatureDoesNotMatch(
        `The request signature we calculated does not match the signature you provided: signed header '${name}' is not in the request.`,
      );
    }
  }
  return names;
}

function checkTime(claim: Claim, scopeDate: string, nowMs: number): void {
  const day = claim.requestTime.slice(0, 8);
  if (scopeDate !== day) {
    throw sqsErrors.signatureDoesNotMatch(
      /^[0-9]{8}$/.test(scopeDate)
        ? `Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '${scopeDate}' != '${day}', from '${claim.requestTime}'.`
        : "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP.",
    );
  }
  const requestMs = isoMs(claim.requestTime)!;
  const now = isoBasic(nowMs);
  // SignatureDoesNotMatch, worded as SQS words it: the JS SDK takes that code
  // (with the response's Date header) as clock skew, corrects its clock and retries.
  if (requestMs - nowMs > maxSkewMs) {
    const limit = isoBasic(nowMs + maxSkewMs);
    throw sqsErrors.signatureDoesNotMatch(
      `Signature not yet current: ${claim.requestTime} is still later than ${limit} (${now} + 15 min.)`,
    );
  }
  if (claim.expiresSeconds === undefined) {
    if (nowMs - requestMs > maxSkewMs) {
      const limit = isoBasic(nowMs - maxSkewMs);
      throw sqsErrors.signatureDoesNotMatch(
        `Signature expired: ${claim.requestTime} is now earlier than ${limit} (${now} - 15 min.)`,
      );
    }
  } else if (nowMs > requestMs + claim.expiresSeconds * 1000) {
    throw sqsErrors.requestExpired(
      `Request has expired: signed at ${claim.requestTime} for ${claim.expiresSeconds} seconds, and it is now ${now}.`,
    );
  }
}

/**
 * The payload hash of the canonical request. A client's x-amz-content-sha256
 * is used as it signed it, but only if it is the body's hash: otherwise the
 * signature would cover a claim about the body rather than the body. Unsigned
 * payloads are refused: an SQS body is the whole call.
 */
function payloadHash(request: SignedRequest): string {
  const actual = createHash("sha256").update(request.body).digest("hex");
  const declared = oneHeader(request.headers, "x-amz-content-sha256");
  if (declared === undefined) return actual;
  if (!/^[0-9a-fA-F]{64}$/.test(declared)) {
    throw incomplete(
      "x-amz-content-sha256 must be the hex SHA-256 of the body: unsigned and streaming payloads are not accepted.",
    );
  }
  if (declared.toLowerCase() !== actual) {
    throw sqsErrors.signatureDoesNotMatch(
      "The provided 'x-amz-content-sha256' header does not match what was computed.",
    );
  }
  return declared;
}

/** A header that must appear at most once. */
function oneHeader(headers: SignedRequest["headers"], name: string): string | undefined {
  const value = headers[name];
  if (value === undefined || typeof value === "string") return value;
  if (value.length > 1) throw incomplete(`The request has more than one '${name}' header.`);
  return value[0];
}

/** The time of an ISO 8601 basic-format timestamp (20130524T000000Z), or undefined if it is not one or no such time exists. */
function isoMs(text: string): number | undefined {
  const match = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(text);
  if (match === null) return undefined;
  const ms = Date.UTC(
    Number(match[1]),
    Number(match[2]) - 1,
    Number(match[3]),
    Number(match[4]),
    Number(match[5]),
    Number(match[6]),
  );
  return isoBasic(ms) === text ? ms : undefined;
}

function isoBasic(ms: number): string {
  return new Date(ms).toISOString().replace(/[-:]|\.\d{3}/g, "");
}

const months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

// RFC 9110's IMF-fixdate; botocore writes its Date header with "-0000" for the zone (email.utils.formatdate).
function httpDateMs(text: string): number | undefined {
  const match =
    /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), (\d{2}) ([A-Z][a-z]{2}) (\d{4}) (\d{2}):(\d{2}):(\d{2}) (?:GMT|[-+]0000)$/.exec(
      text,
    );
  const month = match === null ? -1 : months.indexOf(match[2]!);
  if (match === null || month === -1) return undefined;
  const ms = Date.UTC(Number(match[3]), month, Number(match[1]), Number(match[4]), Number(match[5]), Number(match[6]));
  return new Date(ms).getUTCDate() === Number(match[1]) &&
    isoBasic(ms).slice(9, 15) === `${match[4]}${match[5]}${match[6]}`
    ? ms
    : undefined;
}

function sha256Hex(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

function hmac(key: Buffer, text: string): Buffer {
  return createHmac("sha256", key).update(text, "utf8").digest();
}

function incomplete(message: string): SqsError {
  return sqsErrors.incompleteSignature(message);
}
