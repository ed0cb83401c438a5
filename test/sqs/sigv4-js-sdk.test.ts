// @aws-sdk/client-sqs against a small server that checks each request with
// verifySignature and answers as the endpoint will (JSON, the legacy code in
// x-amzn-query-error, a Date header): its calls are let in as their key's
// principal, bad credentials fail with the code AWS gives, and a client whose
// clock is 20 minutes off the server's corrects it from the refusal and retries.
import { createHash } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { ListQueuesCommand, SendMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseSqsCredentials, SqsKeyring } from "../../src/sqs/auth/sqs-credentials.js";
import { verifySignature } from "../../src/sqs/auth/verify-signature.js";
import { SqsError } from "../../src/sqs/sqs-error.js";

const accessKeyId = "AKIAHOLDSHELFJSSDK01";
const secret = "js/sdk+Secret0123456789abcdefghijklmnop";
const keyring = new SqsKeyring(
  "(test)",
  parseSqsCredentials(
    JSON.stringify({
      keys: [
        {
          name: "js-app",
          accessKeyId,
          secretAccessKey: secret,
          permissions: [{ queues: "orders-*", allow: ["send"] }],
        },
      ],
    }),
    "(test)",
  ),
);
const minute = 60_000;

describe("@aws-sdk/client-sqs", () => {
  let server: Server;
  let endpoint: string;
  /** Each request's outcome: the principal's name, or the code it was refused with. */
  const outcomes: string[] = [];
  /** How far the server's clock is ahead of the client's (the SDK corrects only from a Date header that differs from its own clock). */
  let serverSkewMs = 0;

  beforeAll(async () => {
    server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () => {
        const url = request.url ?? "/";
        const question = url.indexOf("?");
        const body = Buffer.concat(chunks);
        const now = Date.now() + serverSkewMs;
        response.setHeader("date", new Date(now).toUTCString());
        try {
          const principal = verifySignature(
            {
              method: request.method ?? "GET",
              path: question === -1 ? url : url.slice(0, question),
              rawQuery: question === -1 ? "" : url.slice(question + 1),
              headers: request.headersDistinct,
              body,
            },
            keyring,
            now,
          );
          outcomes.push(principal.name);
          const input = JSON.parse(body.toString()) as { MessageBody?: string };
          const output =
            input.MessageBody === undefined
              ? { QueueUrls: [] }
              : {
                  MessageId: "m-1",
                  MD5OfMessageBody: createHash("md5").update(input.MessageBody, "utf8").digest("hex"),
                };
          response.writeHead(200, { "content-type": "application/x-amz-json-1.0" });
          response.end(JSON.stringify(output));
        } catch (error) {
          if (!(error instanceof SqsError)) throw error;
          outcomes.push(error.legacyCode);
          response.writeHead(error.httpStatus, {
            "content-type": "application/x-amz-json-1.0",
            "x-amzn-query-error": `${error.legacyCode};${error.fault}`,
          });
          response.end(JSON.stringify({ __type: `com.amazonaws.sqs#${error.shape}`, message: error.message }));
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
  });

  const client = (options: { accessKeyId?: string; secretAccessKey?: string; maxAttempts?: number } = {}) =>
    new SQSClient({
      endpoint,
      region: "eu-central-1",
      credentials: {
        accessKeyId: options.accessKeyId ?? accessKeyId,
        secretAccessKey: options.secretAccessKey ?? secret,
      },
      maxAttempts: options.maxAttempts ?? 3,
    });
  const queueUrl = () => `${endpoint}/000000000000/orders-1`;
  const outcomesOf = async (send: () => Promise<unknown>): Promise<{ outcomes: string[]; error: unknown }> => {
    outcomes.length = 0;
    let error: unknown;
    await send().catch((caught: unknown) => {
      error = caught;
    });
    return { outcomes: [...outcomes], error };
  };

  it("is let in as its key's principal for JSON calls (x-amz-target, x-amz-content-sha256, x-amz-user-agent all signed)", async () => {
    const sqs = client();
    const sent = await outcomesOf(() =>
      sqs.send(new SendMessageCommand({ QueueUrl: queueUrl(), MessageBody: 'hé "quoted" & <tagged>' })),
    );
    expect(sent).toEqual({ outcomes: ["js-app"], error: undefined });
    expect((await outcomesOf(() => sqs.send(new ListQueuesCommand({ QueueNamePrefix: "orders" })))).outcomes).toEqual([
      "js-app",
    ]);
  });

  it("fails with InvalidClientTokenId for an unknown key and SignatureDoesNotMatch for a wrong secret", async () => {
    const unknown = await outcomesOf(() =>
      client({ accessKeyId: "AKIANOSUCHKEY0000001", maxAttempts: 1 }).send(new ListQueuesCommand({})),
    );
    expect(unknown.outcomes).toEqual(["InvalidClientTokenId"]);
    expect((unknown.error as Error).name).toBe("InvalidClientTokenId");
    const wrong = await outcomesOf(() =>
      client({ secretAccessKey: "not the secret", maxAttempts: 1 }).send(new ListQueuesCommand({})),
    );
    expect(wrong.outcomes).toEqual(["SignatureDoesNotMatch"]);
    expect((wrong.error as Error).name).toBe("SignatureDoesNotMatch");
  });

  it("corrects a clock 20 minutes slow or fast from the refusal's Date header, and retries", async () => {
    try {
      for (const skew of [20 * minute, -20 * minute]) {
        serverSkewMs = skew;
        const sqs = client();
        const result = await outcomesOf(() =>
          sqs.send(new SendMessageCommand({ QueueUrl: queueUrl(), MessageBody: "late" })),
        );
        expect(result, String(skew)).toEqual({ outcomes: ["SignatureDoesNotMatch", "js-app"], error: undefined });
        expect(Math.abs(sqs.config.systemClockOffset - skew), "the corrected offset").toBeLessThan(minute);
      }
    } finally {
      serverSkewMs = 0;
    }
  });
});
