/**
 * The canonical forms of Signature Version 4 for a service other than S3, as
 * botocore and @smithy/signature-v4 compute them on the client: the path
 * normalized and encoded once more (so "%20" is signed as "%2520"), the query
 * decoded and encoded again in one strict form and sorted, header values
 * trimmed with runs of spaces collapsed. All work on bytes, so no input,
 * however malformed its escapes or UTF-8, can make them throw.
 */

/** One parameter of a query string: its name and value, percent-decoded ('+' as a space). */
export interface QueryParam {
  readonly name: string;
  readonly value: string;
  /** Name and value in SigV4's encoding: what the canonical query string is made of. */
  readonly encodedName: string;
  readonly encodedValue: string;
}

/** The parameters of a raw query string (without "?"), in their order. */
export function parseQuery(rawQuery: string): QueryParam[] {
  const params: QueryParam[] = [];
  for (const piece of rawQuery.split("&")) {
    // No signer puts an empty piece in a URL ("a=1&&b=2"); it carries nothing, so nothing is signed for it.
    if (piece === "") continue;
    const equals = piece.indexOf("=");
    const name = percentDecode(equals === -1 ? piece : piece.slice(0, equals));
    const value = percentDecode(equals === -1 ? "" : piece.slice(equals + 1));
    params.push({
      name: name.toString("utf8"),
      value: value.toString("utf8"),
      encodedName: uriEncode(name, false),
      encodedValue: uriEncode(value, false),
    });
  }
  return params;
}

/** The canonical query string: every parameter but those left out, sorted by encoded name, then by encoded value. */
export function canonicalQuery(params: readonly QueryParam[], leaveOut?: (param: QueryParam) => boolean): string {
  return params
    .filter((param) => leaveOut === undefined || !leaveOut(param))
    .sort((a, b) => compare(a.encodedName, b.encodedName) || compare(a.encodedValue, b.encodedValue))
    .map((param) => `${param.encodedName}=${param.encodedValue}`)
    .join("&");
}

/**
 * The canonical URI of a raw request path: empty and "." segments dropped,
 * ".." taking the one before it away (RFC 3986 5.2.4, and AWS's rule that
 * consecutive slashes count as one), then every byte but the unreserved ones
 * and "/" percent-encoded: a second encoding, as every SDK signs for SQS.
 */
export function canonicalPath(rawPath: string): string {
  if (rawPath === "") return "/";
  const segments: string[] = [];
  for (const segment of rawPath.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") segments.pop();
    else segments.push(segment);
  }
  const first = rawPath.startsWith("/") ? "/" : "";
  const last = segments.length > 0 && rawPath.endsWith("/") ? "/" : "";
  return uriEncode(Buffer.from(`${first}${segments.join("/")}${last}`, "utf8"), true);
}

/** A header's canonical value: each value trimmed, runs of spaces and tabs made one space, several values joined by ",". */
export function canonicalHeaderValue(value: string | readonly string[]): string {
  const values = typeof value === "string" ? [value] : value;
  return values.map((one) => one.replace(/[ \t]+/g, " ").replace(/^ | $/g, "")).join(",");
}

// '+' is a space, as in the form encoding the query protocol's parameters are
// read with: the signature must cover the values the endpoint will act on.
// A '%' not followed by two hex digits stands for itself.
function percentDecode(text: string): Buffer {
  const source = Buffer.from(text, "utf8");
  const bytes = Buffer.alloc(source.length);
  let length = 0;
  for (let i = 0; i < source.length; i++) {
    const byte = source[i]!;
    if (byte === 0x2b) {
      bytes[length++] = 0x20;
    } else if (byte === 0x25 && i + 2 < source.length && isHexDigit(source[i + 1]!) && isHexDigit(source[i + 2]!)) {
      bytes[length++] = Number.parseInt(String.fromCharCode(source[i + 1]!, source[i + 2]!), 16);
      i += 2;
    } else {
      bytes[length++] = byte;
    }
  }
  return bytes.subarray(0, length);
}

/** Every byte but A-Z a-z 0-9 - _ . ~ (and "/" if kept) as %XX, uppercase. */
function uriEncode(bytes: Buffer, keepSlash: boolean): string {
  let out = "";
  for (const byte of bytes) {
    if (isUnreserved(byte) || (keepSlash && byte === 0x2f)) out += String.fromCharCode(byte);
    else out += `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

function isUnreserved(byte: number): boolean {
  return (
    (byte >= 0x41 && byte <= 0x5a) || // A-Z
    (byte >= 0x61 && byte <= 0x7a) || // a-z
    (byte >= 0x30 && byte <= 0x39) || // 0-9
    byte === 0x2d || // -
    byte === 0x5f || // _
    byte === 0x2e || // .
    byte === 0x7e // ~
  );
}

function isHexDigit(byte: number): boolean {
  return (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x46) || (byte >= 0x61 && byte <= 0x66);
}

// By UTF-16 code unit, which for the ASCII of encoded strings is byte order, as the signers sort.
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
