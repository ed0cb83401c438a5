// SigV4 verification against botocore's own signer, from Debian's python3:
// SigV4Auth on JSON and query calls (form POST to a queue URL's path, GET
// with a query string, the Date header instead of X-Amz-Date), SigV4QueryAuth
// presigned URLs, and boto3's SQS client (the query protocol of Debian's
// boto3) with its generate_presigned_url. Each request goes over HTTP to a
// capturing server, so what is checked is what the listener will receive.
import { execFile, spawnSync } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseSqsCredentials, SqsKeyring } from "../../src/sqs/auth/sqs-credentials.js";
import { verifySignature, type SignedRequest } from "../../src/sqs/auth/verify-signature.js";
import { SqsError } from "../../src/sqs/sqs-error.js";
import { systemPython } from "../support/python-package.js";
import { skipWithout } from "../support/required-tools.js";

const run = promisify(execFile);
const missing =
  spawnSync(systemPython, ["-c", "import botocore, boto3"]).status === 0
    ? []
    : ["python3-botocore, python3-boto3 (Debian's python3)"];

const accessKeyId = "AKIAHOLDSHELFBOTO01";
const secret = "botocore/Signs+This0123456789abcdefghij";
const keys = (secretAccessKey: string) =>
  new SqsKeyring(
    "(test)",
    parseSqsCredentials(
      JSON.stringify({
        keys: [
          {
            name: "boto",
            accessKeyId,
            secretAccessKey,
            permissions: [{ queues: "*", allow: ["send", "receive", "admin"] }],
          },
        ],
      }),
      "(test)",
    ),
  );
const keyring = keys(secret);

// Each step sends one request, in this order; the test reads them by name.
const steps = [
  "json",
  "query-post",
  "query-get",
  "query-get-params",
  "date-header",
  "other-region",
  "sns-scope",
  "presigned",
  "boto3-send-message",
  "boto3-list-queues",
  "boto3-unknown-key",
  "boto3-presigned",
] as const;

const script = String.raw`
import json, sys, urllib.request
import boto3
from botocore.auth import SigV4Auth, SigV4QueryAuth
from botocore.awsrequest import AWSRequest
from botocore.config import Config
from botocore.credentials import Credentials
from botocore.httpsession import URLLib3Session

base, key, secret = sys.argv[1], sys.argv[2], sys.argv[3]
creds = Credentials(key, secret)
http = URLLib3Session()

def send(request, auth):
    auth.add_auth(request)
    http.send(request.prepare())

def header_signed(method, url, service="sqs", region="eu-west-1", **kwargs):
    send(AWSRequest(method=method, url=url, **kwargs), SigV4Auth(creds, service, region))

queue = base + "/000000000000/orders-1"
header_signed("POST", base + "/", data=json.dumps({"QueueUrl": queue, "MessageBody": "h\u00e9 \"there\""}).encode(),
              headers={"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "AmazonSQS.SendMessage"})
header_signed("POST", queue, data="Action=SendMessage&MessageBody=a%20b%2Bc%26d&Version=2012-11-05",
              headers={"Content-Type": "application/x-www-form-urlencoded; charset=utf-8"})
header_signed("GET", queue + "?Action=ReceiveMessage&AttributeName.1=All&Version=2012-11-05")
header_signed("GET", queue, params={"Action": "SendMessage", "MessageBody": "a b+c/d=\u00e9*~!'()", "Version": "2012-11-05"})
header_signed("POST", base + "/", data=b"Action=ListQueues&Version=2012-11-05",
              headers={"Content-Type": "application/x-www-form-urlencoded; charset=utf-8", "Date": "set by the signer"})
header_signed("POST", base + "/", region="ap-southeast-2", data=b"Action=ListQueues&Version=2012-11-05",
              headers={"Content-Type": "application/x-www-form-urlencoded; charset=utf-8"})
header_signed("POST", base + "/", service="sns", data=b"Action=ListQueues&Version=2012-11-05",
              headers={"Content-Type": "application/x-www-form-urlencoded; charset=utf-8"})
send(AWSRequest(method="GET", url=queue, params={"Action": "ReceiveMessage", "Version": "2012-11-05"}),
     SigV4QueryAuth(creds, "sqs", "eu-west-1", expires=300))

def client(access_key):
    return boto3.client("sqs", endpoint_url=base, region_name="eu-west-1", aws_access_key_id=access_key,
                        aws_secret_access_key=secret, config=Config(retries={"max_attempts": 0}))
for call in (lambda c: c.send_message(QueueUrl=queue, MessageBody="hello & <w\u00f6rld> +"),
             lambda c: c.list_queues(QueueNamePrefix="orders")):
    try:
        call(client(key))
    except Exception:
        pass
try:
    client("AKIANOSUCHKEY0000001").list_queues()
except Exception:
    pass
# A URL to be opened by GET is signed for GET: the operation's own method, POST, would not match.
url = client(key).generate_presigned_url("list_queues", Params={"QueueNamePrefix": "orders"}, ExpiresIn=120,
                                        HttpMethod="GET")
try:
    urllib.request.urlopen(url)
except Exception:
    pass
`;

describe.skipIf(skipWithout(missing))("requests signed by botocore", () => {
  let server: Server;
  const captured = new Map<(typeof steps)[number], SignedRequest>();
  let sentAt = 0;

  beforeAll(async () => {
    expect(missing, "Debian packages missing").toEqual([]);
    const received: SignedRequest[] = [];
    server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () => {
        const url = request.url ?? "/";
        const question = url.indexOf("?");
        received.push({
          method: request.method ?? "GET",
          path: question === -1 ? url : url.slice(0, question),
          rawQuery: question === -1 ? "" : url.slice(question + 1),
          headers: request.headers,
          body: Buffer.concat(chunks),
        });
        response.writeHead(400, { "content-type": "text/xml" });
        response.end(
          "<ErrorResponse><Error><Type>Sender</Type><Code>AccessDenied</Code><Message>captured</Message></Error><RequestId>0</RequestId></ErrorResponse>",
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    sentAt = Date.now();
    await run(systemPython, ["-c", script, `http://127.0.0.1:${port}`, accessKeyId, secret], { timeout: 60_000 });
    expect(received).toHaveLength(steps.length);
    steps.forEach((step, index) => {
      captured.set(step, received[index]!);
    });
  }, 90_000);
  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
  });

  const request = (step: (typeof steps)[number]) => captured.get(step)!;
  const verify = (step: (typeof steps)[number], nowMs = Date.now()) =>
    verifySignature(request(step), keyring, nowMs).name;
  const refusal = (candidate: SignedRequest, nowMs = Date.now(), ring = keyring): SqsError => {
    try {
      verifySignature(candidate, ring, nowMs);
    } catch (error) {
      expect(error).toBeInstanceOf(SqsError);
      return error as SqsError;
    }
    throw new Error("verified");
  };
  /** When botocore signed the request: its X-Amz-Date (header or query), or its Date header. */
  const signedAt = (candidate: SignedRequest): number => {
    const amzDate =
      (candidate.headers["x-amz-date"] as string | undefined) ??
      /X-Amz-Date=(\d{8}T\d{6}Z)/.exec(candidate.rawQuery)?.[1];
    if (amzDate === undefined) return Date.parse(candidate.headers.date as string);
    return Date.parse(amzDate.replace(/(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z/, "$1-$2-$3T$4:$5:$6Z"));
  };

  it("verifies a JSON-protocol call (POST / with X-Amz-Target), signed without x-amz-content-sha256", () => {
    expect(request("json").headers["x-amz-content-sha256"]).toBeUndefined();
    expect(request("json").headers["x-amz-target"]).toBe("AmazonSQS.SendMessage");
    expect(verify("json")).toBe("boto");
  });

  it("verifies query-protocol calls: a form POST to a queue URL's path, GETs with raw and encoded query strings", () => {
    expect(request("query-post").path).toBe("/000000000000/orders-1");
    expect(verify("query-post")).toBe("boto");
    expect(verify("query-get")).toBe("boto");
    expect(request("query-get-params").rawQuery).toContain("%2B");
    expect(verify("query-get-params")).toBe("boto");
  });

  it("verifies a request dated by its Date header (botocore writes it with -0000), and any region", () => {
    expect(request("date-header").headers["x-amz-date"]).toBeUndefined();
    expect(request("date-header").headers.date).toMatch(/ -0000$/);
    expect(verify("date-header")).toBe("boto");
    expect(verify("other-region")).toBe("boto");
  });

  it("verifies a presigned URL of SigV4QueryAuth until X-Amz-Expires, then answers RequestExpired", () => {
    const presigned = request("presigned");
    expect(presigned.headers.authorization).toBeUndefined();
    const at = signedAt(presigned);
    expect(verify("presigned", at + 300_000)).toBe("boto");
    expect(refusal(presigned, at + 301_000).legacyCode).toBe("RequestExpired");
  });

  it("verifies boto3's own SQS client calls and its generate_presigned_url", () => {
    expect(verify("boto3-send-message")).toBe("boto");
    expect(request("boto3-send-message").body.toString()).toContain("MessageBody=hello");
    expect(verify("boto3-list-queues")).toBe("boto");
    expect(request("boto3-presigned").rawQuery).toContain("X-Amz-Signature=");
    expect(verify("boto3-presigned")).toBe("boto");
  });

  it("was sent just now: the real clock's requests are within the window", () => {
    for (const step of steps) {
      if (step === "sns-scope" || step === "boto3-unknown-key") continue;
      expect(Math.abs(signedAt(request(step)) - sentAt), step).toBeLessThan(60_000);
    }
  });

  it("answers InvalidClientTokenId for an unknown key, and SignatureDoesNotMatch for another secret or a scope of another service", () => {
    expect(refusal(request("boto3-unknown-key")).legacyCode).toBe("InvalidClientTokenId");
    expect(refusal(request("json"), Date.now(), keys("not the secret")).legacyCode).toBe("SignatureDoesNotMatch");
    expect(refusal(request("sns-scope")).message).toBe("Credential should be scoped to correct service: 'sqs'.");
  });

  it("answers SignatureDoesNotMatch for a body, a query, a path or a signed header changed after signing", () => {
    const post = request("query-post");
    expect(
      refusal({ ...post, body: Buffer.from(post.body.toString().replace("SendMessage", "DeleteQueue")) }).legacyCode,
    ).toBe("SignatureDoesNotMatch");
    expect(refusal({ ...post, path: "/000000000000/orders-2" }).legacyCode).toBe("SignatureDoesNotMatch");
    const json = request("json");
    expect(refusal({ ...json, headers: { ...json.headers, "x-amz-target": "AmazonSQS.PurgeQueue" } }).legacyCode).toBe(
      "SignatureDoesNotMatch",
    );
    expect(refusal({ ...json, headers: { ...json.headers, host: "127.0.0.1:1" } }).legacyCode).toBe(
      "SignatureDoesNotMatch",
    );
    const get = request("query-get");
    expect(refusal({ ...get, rawQuery: get.rawQuery.replace("All", "None") }).legacyCode).toBe("SignatureDoesNotMatch");
  });

  it("answers SignatureDoesNotMatch for a clock 16 minutes off either way, in both date headers", () => {
    for (const step of ["json", "date-header"] as const) {
      const at = signedAt(request(step));
      expect(refusal(request(step), at + 16 * 60_000).message, step).toMatch(/^Signature expired: /);
      expect(refusal(request(step), at - 16 * 60_000).message, step).toMatch(/^Signature not yet current: /);
    }
  });
});
