// SigV4 verification against requests signed by @smithy/signature-v4, the
// signer inside @aws-sdk/client-sqs: JSON and query calls, GET with a query
// string, queue-URL paths, presigned URLs; then every way a request is
// refused, with the code AWS answers, and never a crash on malformed input.
import { createHash } from "node:crypto";
import { Hash } from "@smithy/core/serde";
import { buildQueryString, HttpRequest } from "@smithy/core/protocols";
import { SignatureV4 } from "@smithy/signature-v4";
import type { HttpRequest as SignableRequest } from "@smithy/types";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseSqsCredentials, SqsKeyring } from "../../src/sqs/auth/sqs-credentials.js";
import { verifySignature, type SignedRequest } from "../../src/sqs/auth/verify-signature.js";
import { SqsError } from "../../src/sqs/sqs-error.js";

const accessKeyId = "AKIAHOLDSHELFTEST01";
const secret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYholdshelf";
const keyring = new SqsKeyring(
  "(test)",
  parseSqsCredentials(
    JSON.stringify({
      keys: [
        {
          name: "orders-service",
          accessKeyId,
          secretAccessKey: secret,
          permissions: [{ queues: "orders-*", allow: ["send", "receive"] }],
        },
        {
          name: "ops",
          accessKeyId: "AKIAHOLDSHELFOPS0001",
          secretAccessKey: "another secret",
          permissions: [{ queues: "*", allow: ["admin"] }],
        },
      ],
    }),
    "(test)",
  ),
);
const host = "127.0.0.1:9324";
const signedAt = new Date("2025-03-14T15:09:26Z");
const at = signedAt.getTime();
const minute = 60_000;

function signer(
  options: { secretAccessKey?: string; service?: string; region?: string; applyChecksum?: boolean } = {},
): SignatureV4 {
  return new SignatureV4({
    applyChecksum: options.applyChecksum ?? true,
    credentials: { accessKeyId, secretAccessKey: options.secretAccessKey ?? secret },
    region: options.region ?? "eu-west-1",
    service: options.service ?? "sqs",
    sha256: Hash.bind(null, "sha256"),
  });
}

interface Call {
  method?: string;
  path?: string;
  query?: Record<string, string | string[]>;
  headers?: Record<string, string>;
  body?: string;
}

function httpRequest(call: Call): HttpRequest {
  return new HttpRequest({
    method: call.method ?? "POST",
    protocol: "http:",
    hostname: "127.0.0.1",
    port: 9324,
    path: call.path ?? "/",
    query: call.query ?? {},
    headers: { host, ...call.headers },
    ...(call.body === undefined ? {} : { body: call.body }),
  });
}

/** The request as the listener receives it: what node-http-handler sends, with Node's lowercase header names. */
function received(request: SignableRequest): SignedRequest {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) headers[name.toLowerCase()] = value;
  return {
    method: request.method,
    path: request.path,
    rawQuery: buildQueryString(request.query ?? {}),
    headers,
    body: Buffer.from((request.body as string | undefined) ?? "", "utf8"),
  };
}

async function sign(call: Call, options: Parameters<typeof signer>[0] & { date?: Date } = {}): Promise<SignedRequest> {
  return received(await signer(options).sign(httpRequest(call), { signingDate: options.date ?? signedAt }));
}

async function presign(call: Call, expiresIn = 300, date = signedAt): Promise<SignedRequest> {
  return received(await signer().presign(httpRequest(call), { signingDate: date, expiresIn }));
}

const jsonCall = (
  target = "SendMessage",
  body = '{"QueueUrl":"http://127.0.0.1:9324/000000000000/orders-1","MessageBody":"hi"}',
): Call => ({
  headers: {
    "content-type": "application/x-amz-json-1.0",
    "x-amz-target": `AmazonSQS.${target}`,
    "x-amz-user-agent": "aws-sdk-js/3",
  },
  body,
});
const queryCall = (): Call => ({
  path: "/000000000000/orders-1",
  headers: { "content-type": "application/x-www-form-urlencoded; charset=utf-8" },
  body: "Action=SendMessage&MessageBody=a%20b%2Bc%26d%3De&Version=2012-11-05",
});

/** The SqsError verifySignature throws (failing if it returns or throws anything else). */
function refusal(request: SignedRequest, nowMs = at): SqsError {
  let caught: unknown;
  try {
    verifySignature(request, keyring, nowMs);
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(SqsError);
  return caught as SqsError;
}

const with_ = (request: SignedRequest, headers: Record<string, string | string[] | undefined>): SignedRequest => ({
  ...request,
  headers: { ...request.headers, ...headers },
});

describe("requests signed by @smithy/signature-v4", () => {
  it("verifies a JSON-protocol call (POST / with x-amz-target and x-amz-content-sha256) as its key's principal", async () => {
    const request = await sign(jsonCall());
    expect(request.headers["x-amz-content-sha256"]).toMatch(/^[0-9a-f]{64}$/);
    const principal = verifySignature(request, keyring, at);
    expect(principal.name).toBe("orders-service");
    expect(principal.may("send", "orders-1")).toBe(true);
    expect(principal.may("admin", "orders-1")).toBe(false);
  });

  it("verifies a query-protocol call posted to a queue URL's path, with a form body", async () => {
    expect(verifySignature(await sign(queryCall()), keyring, at).name).toBe("orders-service");
  });

  it("verifies a GET whose parameters are in the query string, repeated, empty, and needing escapes", async () => {
    const request = await sign({
      method: "GET",
      path: "/000000000000/orders-1",
      query: {
        Action: "ReceiveMessage",
        "AttributeName.1": "All",
        MessageBody: "a b+c/d=e&f*(g)!~'ü😀",
        Repeated: ["z", "a", "m"],
        Empty: "",
        "Name With Space": "v",
      },
    });
    expect(request.rawQuery).toContain("%2B");
    expect(verifySignature(request, keyring, at).name).toBe("orders-service");
  });

  it("takes '+' in a raw query as a space, as the form encoding the query protocol reads does", async () => {
    const request = await sign({ method: "GET", query: { Action: "SendMessage", MessageBody: "two words" } });
    expect(request.rawQuery).toContain("two%20words");
    expect(
      verifySignature({ ...request, rawQuery: request.rawQuery.replace("two%20words", "two+words") }, keyring, at).name,
    ).toBe("orders-service");
  });

  it("signs the path encoded a second time, normalized, as every SDK does for SQS (not S3's single encoding)", async () => {
    for (const path of [
      "/000000000000/orders-1",
      "/000000000000/a%20b%2Fc",
      "/x/:@!*()'~é",
      "/a//b/./c/../d/",
      "/%E2%82%AC/",
    ]) {
      const request = await sign({ ...queryCall(), path });
      expect(verifySignature(request, keyring, at).name, path).toBe("orders-service");
    }
  });

  it("accepts any region, which is part of what the client signed", async () => {
    for (const region of ["us-east-1", "elasticmq", "holdshelf-local"]) {
      expect(verifySignature(await sign(jsonCall(), { region }), keyring, at).name).toBe("orders-service");
    }
  });

  it("accepts a request time up to 15 minutes either side of now", async () => {
    const request = await sign(jsonCall());
    expect(verifySignature(request, keyring, at + 15 * minute).name).toBe("orders-service");
    expect(verifySignature(request, keyring, at - 15 * minute).name).toBe("orders-service");
  });

  it("joins a repeated header's values with ',' (headersDistinct), as the signers do", async () => {
    const request = await sign({ ...jsonCall(), headers: { ...jsonCall().headers, "x-amz-meta": "one,two" } });
    expect(verifySignature(with_(request, { "x-amz-meta": ["one", "two"] }), keyring, at).name).toBe("orders-service");
  });

  it("trims header values and collapses their runs of spaces, as the signers do", async () => {
    const request = await sign({ ...jsonCall(), headers: { ...jsonCall().headers, "x-amz-spaced": "a   b \t c" } });
    expect(verifySignature(request, keyring, at).name).toBe("orders-service");
  });

  it("verifies a presigned URL (GET with X-Amz-* in the query) while it is valid, and a presigned POST with its body", async () => {
    const request = await presign(
      { method: "GET", path: "/000000000000/orders-1", query: { Action: "ReceiveMessage", Version: "2012-11-05" } },
      3600,
    );
    expect(request.headers.authorization).toBeUndefined();
    expect(request.rawQuery).toContain("X-Amz-Signature=");
    expect(verifySignature(request, keyring, at + 59 * minute).name).toBe("orders-service");
    const post = await presign(queryCall(), 60);
    expect(verifySignature(post, keyring, at).name).toBe("orders-service");
  });

  it("holds every signed request of random paths, queries and header values", async () => {
    const text = fc.string({ unit: "grapheme", maxLength: 12 });
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.stringMatching(/^[A-Za-z0-9._~%!*'()@:-]{1,8}$/), { maxLength: 4 }),
        fc.dictionary(fc.string({ unit: "grapheme", minLength: 1, maxLength: 8 }), text, { maxKeys: 4 }),
        fc.string({ unit: "grapheme-ascii", maxLength: 20 }),
        text,
        async (segments, query, headerValue, body) => {
          // A path as a client sends it: its segments percent-encoded where needed.
          const path = `/${segments.map((segment) => encodeURIComponent(decodeSafe(segment))).join("/")}`;
          const request = await sign({
            method: "POST",
            path,
            query,
            headers: { "x-amz-extra": headerValue || "x" },
            body,
          });
          expect(verifySignature(request, keyring, at).name).toBe("orders-service");
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe("refusals, with the code AWS answers", () => {
  it("MissingAuthenticationToken for a request with no signature at all", () => {
    const unsigned: SignedRequest = {
      method: "POST",
      path: "/",
      rawQuery: "Action=ListQueues",
      headers: { host },
      body: Buffer.alloc(0),
    };
    const error = refusal(unsigned);
    expect([error.legacyCode, error.httpStatus, error.message]).toEqual([
      "MissingAuthenticationToken",
      403,
      "Request is missing Authentication Token",
    ]);
  });

  it("InvalidClientTokenId for an access key the keyring does not hold", async () => {
    const request = await sign(jsonCall());
    const unknown = with_(request, {
      authorization: (request.headers.authorization as string).replace(accessKeyId, "AKIANOSUCHKEY000000"),
    });
    expect([refusal(unknown).legacyCode, refusal(unknown).httpStatus]).toEqual(["InvalidClientTokenId", 403]);
  });

  it("SignatureDoesNotMatch for a wrong secret", async () => {
    const error = refusal(await sign(jsonCall(), { secretAccessKey: "not the secret" }));
    expect([error.legacyCode, error.httpStatus]).toEqual(["SignatureDoesNotMatch", 403]);
  });

  it("SignatureDoesNotMatch for a body changed after signing, whether or not x-amz-content-sha256 was sent", async () => {
    const request = await sign(jsonCall());
    const tampered = { ...request, body: Buffer.from(request.body.toString().replace("hi", "ho")) };
    expect(refusal(tampered).message).toBe(
      "The provided 'x-amz-content-sha256' header does not match what was computed.",
    );
    // A forger who also puts the new body's hash in the header: the header is signed.
    const rehashed = with_(tampered, {
      "x-amz-content-sha256": createHash("sha256").update(tampered.body).digest("hex"),
    });
    expect(refusal(rehashed).legacyCode).toBe("SignatureDoesNotMatch");
    // Signed without the header (as botocore signs): the body's own hash is what was signed.
    const query = await sign(queryCall(), { applyChecksum: false });
    expect(query.headers["x-amz-content-sha256"]).toBeUndefined();
    expect(verifySignature(query, keyring, at).name).toBe("orders-service");
    expect(refusal({ ...query, body: Buffer.from("Action=DeleteQueue&Version=2012-11-05") }).legacyCode).toBe(
      "SignatureDoesNotMatch",
    );
  });

  it("SignatureDoesNotMatch for a signed header changed, a query parameter changed, the path or the method changed", async () => {
    const request = await sign(jsonCall());
    expect(refusal(with_(request, { "x-amz-target": "AmazonSQS.DeleteQueue" })).legacyCode).toBe(
      "SignatureDoesNotMatch",
    );
    expect(refusal(with_(request, { host: "evil.example:9324" })).legacyCode).toBe("SignatureDoesNotMatch");
    expect(refusal({ ...request, path: "/000000000000/orders-2" }).legacyCode).toBe("SignatureDoesNotMatch");
    expect(refusal({ ...request, method: "PUT" }).legacyCode).toBe("SignatureDoesNotMatch");
    expect(refusal({ ...request, rawQuery: "Action=DeleteQueue" }).legacyCode).toBe("SignatureDoesNotMatch");
    const get = await sign({ method: "GET", query: { Action: "ReceiveMessage", QueueUrl: "q1" } });
    expect(refusal({ ...get, rawQuery: get.rawQuery.replace("q1", "q2") }).legacyCode).toBe("SignatureDoesNotMatch");
  });

  it("SignatureDoesNotMatch naming a signed header the request lacks", async () => {
    const request = await sign(jsonCall());
    expect(refusal(with_(request, { "content-type": undefined })).message).toContain(
      "signed header 'content-type' is not in the request",
    );
  });

  it("IncompleteSignature when an x-amz-* header is sent unsigned (x-amz-target would choose another action)", async () => {
    const request = await sign(queryCall());
    const error = refusal(with_(request, { "x-amz-target": "AmazonSQS.DeleteQueue" }));
    expect([error.legacyCode, error.httpStatus, error.message]).toEqual([
      "IncompleteSignature",
      400,
      "Header 'x-amz-target' must be signed: every x-amz-* header must be among the SignedHeaders.",
    ]);
  });

  it("IncompleteSignature when host is not among the SignedHeaders", async () => {
    const request = await signer().sign(httpRequest(jsonCall()), {
      signingDate: signedAt,
      unsignableHeaders: new Set(["host"]),
    });
    const error = refusal(received(request));
    expect([error.legacyCode, error.message]).toEqual([
      "IncompleteSignature",
      "'Host' or ':authority' must be a 'SignedHeader' in the AWS Authorization.",
    ]);
  });

  it("SignatureDoesNotMatch for a scope of another service, or another terminator", async () => {
    expect(refusal(await sign(jsonCall(), { service: "sns" })).message).toBe(
      "Credential should be scoped to correct service: 'sqs'.",
    );
    const request = await sign(jsonCall());
    const auth = request.headers.authorization as string;
    expect(refusal(with_(request, { authorization: auth.replace("aws4_request", "aws5_request") })).message).toBe(
      "Credential should be scoped with a valid terminator: 'aws4_request'.",
    );
    expect(refusal(with_(request, { authorization: auth.replace("/eu-west-1/", "//") })).message).toBe(
      "Credential should be scoped to a valid region.",
    );
  });

  it("SignatureDoesNotMatch when the scope's date is not the request's", async () => {
    const request = await sign(jsonCall());
    const error = refusal(
      with_(request, { authorization: (request.headers.authorization as string).replace("/20250314/", "/20250313/") }),
    );
    expect([error.legacyCode, error.message]).toEqual([
      "SignatureDoesNotMatch",
      "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '20250313' != '20250314', from '20250314T150926Z'.",
    ]);
  });

  it("SignatureDoesNotMatch, worded as SQS words it, for a clock 16 minutes off either way (the JS SDK's clock-skew code)", async () => {
    const request = await sign(jsonCall());
    const late = refusal(request, at + 16 * minute);
    expect([late.legacyCode, late.httpStatus, late.message]).toEqual([
      "SignatureDoesNotMatch",
      403,
      "Signature expired: 20250314T150926Z is now earlier than 20250314T151026Z (20250314T152526Z - 15 min.)",
    ]);
    const early = refusal(request, at - 16 * minute);
    expect([early.legacyCode, early.message]).toEqual([
      "SignatureDoesNotMatch",
      "Signature not yet current: 20250314T150926Z is still later than 20250314T150826Z (20250314T145326Z + 15 min.)",
    ]);
  });

  it("RequestExpired for a presigned URL past X-Amz-Expires; SignatureDoesNotMatch for one dated over 15 minutes ahead", async () => {
    const request = await presign({ method: "GET", query: { Action: "ListQueues" } }, 300);
    expect(verifySignature(request, keyring, at + 300_000).name).toBe("orders-service");
    const expired = refusal(request, at + 300_001);
    expect([expired.legacyCode, expired.httpStatus]).toEqual(["RequestExpired", 400]);
    expect(refusal(request, at - 16 * minute).message).toMatch(/^Signature not yet current/);
    expect(
      refusal(
        { ...request, rawQuery: request.rawQuery.replace("X-Amz-Expires=300", "X-Amz-Expires=900") },
        at + 600_000,
      ).legacyCode,
    ).toBe("SignatureDoesNotMatch");
  });

  it("IncompleteSignature for presigned URLs missing or mangling a parameter", async () => {
    const request = await presign({ method: "GET", query: { Action: "ListQueues" } });
    const without = (name: string) =>
      request.rawQuery
        .split("&")
        .filter((pair) => !pair.startsWith(`${name}=`))
        .join("&");
    for (const name of [
      "X-Amz-Algorithm",
      "X-Amz-Credential",
      "X-Amz-Signature",
      "X-Amz-Date",
      "X-Amz-SignedHeaders",
      "X-Amz-Expires",
    ]) {
      expect(refusal({ ...request, rawQuery: without(name) }).legacyCode, name).toBe("IncompleteSignature");
    }
    const replaced = (from: RegExp, to: string) =>
      refusal({ ...request, rawQuery: request.rawQuery.replace(from, to) });
    expect(replaced(/X-Amz-Algorithm=[^&]*/, "X-Amz-Algorithm=AWS4-HMAC-SHA1").message).toBe(
      'X-Amz-Algorithm only supports "AWS4-HMAC-SHA256".',
    );
    expect(replaced(/X-Amz-Expires=[^&]*/, "X-Amz-Expires=604801").legacyCode).toBe("IncompleteSignature");
    expect(replaced(/X-Amz-Expires=[^&]*/, "X-Amz-Expires=0").legacyCode).toBe("IncompleteSignature");
    expect(replaced(/X-Amz-Date=[^&]*/, "X-Amz-Date=2025-03-14T15%3A09%3A26Z").legacyCode).toBe("IncompleteSignature");
    expect(refusal({ ...request, rawQuery: `${request.rawQuery}&X-Amz-Date=20250314T150926Z` }).message).toBe(
      "The query string has more than one 'X-Amz-Date' parameter.",
    );
    expect(refusal(with_(request, { authorization: "AWS4-HMAC-SHA256 Credential=x" })).message).toMatch(
      /^Only one authentication mechanism/,
    );
  });

  it("IncompleteSignature for unsigned and streaming payloads", async () => {
    for (const hash of ["UNSIGNED-PAYLOAD", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD", "abc"]) {
      const request = await sign({ ...jsonCall(), headers: { ...jsonCall().headers, "x-amz-content-sha256": hash } });
      expect(refusal(request).legacyCode, hash).toBe("IncompleteSignature");
    }
  });

  it("IncompleteSignature, in AWS's words, for malformed Authorization headers of many kinds", async () => {
    const request = await sign(jsonCall());
    const auth = request.headers.authorization as string;
    const expectations: Array<[string | string[], string]> = [
      [
        "",
        "The Authorization header must be a Signature Version 4 one: AWS4-HMAC-SHA256 Credential=…, SignedHeaders=…, Signature=…",
      ],
      [
        "Bearer abc",
        "The Authorization header must be a Signature Version 4 one: AWS4-HMAC-SHA256 Credential=…, SignedHeaders=…, Signature=…",
      ],
      [
        "AWS AKIAHOLDSHELFTEST01:c2lnbmF0dXJl",
        "The Authorization header must be a Signature Version 4 one: AWS4-HMAC-SHA256 Credential=…, SignedHeaders=…, Signature=…",
      ],
      [
        auth.replace("AWS4-HMAC-SHA256", "aws4-hmac-sha256"),
        "The Authorization header must be a Signature Version 4 one: AWS4-HMAC-SHA256 Credential=…, SignedHeaders=…, Signature=…",
      ],
      ["AWS4-HMAC-SHA256 ", "Invalid key=value pair (missing equal-sign) in Authorization header."],
      [auth.replace(/, Signature=.*/, ""), "Authorization header requires 'Signature' parameter."],
      [
        auth.replace(/Credential=[^,]*, /, "").replace(/SignedHeaders=[^,]*, /, ""),
        "Authorization header requires 'Credential' parameter. Authorization header requires 'SignedHeaders' parameter.",
      ],
      [`${auth}, Signature=abc`, "Authorization header has more than one 'Signature' parameter."],
      [`${auth}, Foo=bar`, "Unknown parameter 'Foo' in Authorization header."],
      [`${auth}, junk`, "Invalid key=value pair (missing equal-sign) in Authorization header."],
      [
        auth.replace(/Credential=[^/]*\//, "Credential="),
        "Credential must have exactly 5 slash-delimited elements, e.g. keyid/date/region/service/term.",
      ],
      [
        auth.replace("/aws4_request", "/aws4_request/extra"),
        "Credential must have exactly 5 slash-delimited elements, e.g. keyid/date/region/service/term.",
      ],
      [
        auth.replace(/SignedHeaders=[^,]*/, "SignedHeaders=Host;X-Amz-Date"),
        "SignedHeaders must be lowercase header names separated by ';'.",
      ],
      [auth.replace(/SignedHeaders=/, "SignedHeaders=host;"), "SignedHeaders lists a header more than once."],
      [
        auth.replace(/SignedHeaders=[^,]*/, "SignedHeaders=x-amz-date"),
        "'Host' or ':authority' must be a 'SignedHeader' in the AWS Authorization.",
      ],
      [[auth, auth], "A request may carry only one Authorization header."],
    ];
    for (const [authorization, message] of expectations) {
      const error = refusal(with_(request, { authorization }));
      expect([error.legacyCode, error.httpStatus, error.message], String(authorization)).toEqual([
        "IncompleteSignature",
        400,
        message,
      ]);
    }
    // Well formed but not the signature: no crash, and no IncompleteSignature either.
    for (const signature of ["abc", "0".repeat(64), auth.slice(-64).toUpperCase(), `${auth.slice(-64)}00`]) {
      const error = refusal(with_(request, { authorization: auth.replace(/Signature=.*/, `Signature=${signature}`) }));
      expect(error.legacyCode, signature).toBe("SignatureDoesNotMatch");
    }
  });

  it("IncompleteSignature for a missing, malformed or repeated request time", async () => {
    const request = await sign(jsonCall());
    expect(refusal(with_(request, { "x-amz-date": undefined })).message).toBe(
      "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header.",
    );
    for (const date of ["2025-03-14T15:09:26Z", "20250230T150926Z", "20250314T250926Z", "20250314T150926", ""]) {
      expect(refusal(with_(request, { "x-amz-date": date })).message, date).toBe(
        "X-Amz-Date must be in ISO 8601 basic format, e.g. 20130524T000000Z.",
      );
    }
    expect(refusal(with_(request, { "x-amz-date": ["20250314T150926Z", "20250314T150926Z"] })).message).toBe(
      "The request has more than one 'x-amz-date' header.",
    );
    for (const date of ["Fri, 14 Mar 2025 15:09:26", "Fri, 31 Feb 2025 15:09:26 GMT", "yesterday"]) {
      expect(refusal(with_(request, { "x-amz-date": undefined, date })).legacyCode, date).toBe("IncompleteSignature");
    }
  });

  it("never throws anything but an SqsError, whatever the Authorization header or the X-Amz-* query holds", async () => {
    const request = await sign(jsonCall());
    const auth = request.headers.authorization as string;
    const piece = fc.oneof(
      fc.string({ unit: "binary", maxLength: 30 }),
      fc.constantFrom(
        "AWS4-HMAC-SHA256 ",
        "Credential=",
        "SignedHeaders=",
        "Signature=",
        ",",
        ", ",
        "/",
        ";",
        "=",
        "host",
        "aws4_request",
        "%",
        "%zz",
        "+",
      ),
    );
    const codes = new Set([
      "IncompleteSignature",
      "SignatureDoesNotMatch",
      "InvalidClientTokenId",
      "MissingAuthenticationToken",
      "RequestExpired",
    ]);
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), fc.nat(auth.length), fc.boolean(), (pieces, cut, presigned) => {
        const junk = pieces.join("");
        // Mutations of a real header as well as pure junk.
        const authorization = pieces.length % 2 === 0 ? junk : `${auth.slice(0, cut)}${junk}${auth.slice(cut)}`;
        const candidate = presigned
          ? {
              ...request,
              headers: { ...request.headers, authorization: undefined },
              rawQuery: `X-Amz-Algorithm=${junk}&X-Amz-Credential=${junk}&${junk}`,
            }
          : with_(request, { authorization });
        // Some insertions are harmless (spaces around the parameters): those verify, as they should.
        try {
          expect(verifySignature(candidate, keyring, at).name).toBe("orders-service");
        } catch (error) {
          expect(error).toBeInstanceOf(SqsError);
          expect(codes.has((error as SqsError).legacyCode)).toBe(true);
        }
      }),
      { numRuns: 2000 },
    );
  });
});

// decodeURIComponent of a random segment, or the segment itself where it holds no valid escapes.
function decodeSafe(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
