import { CreateQueueCommand, ReceiveMessageCommand, SendMessageCommand } from "@aws-sdk/client-sqs";
import { request as httpRequest } from "node:http";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseExposition, samplesOf } from "../support/prometheus-text.js";
import { startSqsHarness, type SqsHarness } from "./sqs-harness.js";

/** A raw request to the endpoint: what old SDKs, curl and hostile clients send. */
async function post(
  endpoint: string,
  path: string,
  body: string | Buffer,
  headers: Record<string, string>,
): Promise<{ status: number; text: string; headers: Headers }> {
  const response = await fetch(`${endpoint}${path}`, { method: "POST", body, headers });
  return { status: response.status, text: await response.text(), headers: response.headers };
}

const form = { "content-type": "application/x-www-form-urlencoded" };
const json = (action: string) => ({
  "content-type": "application/x-amz-json-1.0",
  "x-amz-target": `AmazonSQS.${action}`,
});

describe("the SQS listener, on the real clock", () => {
  let h: SqsHarness;
  let url: string;
  beforeEach(async () => {
    h = await startSqsHarness();
    url = (await h.sqs.send(new CreateQueueCommand({ QueueName: "work" }))).QueueUrl!;
  });
  afterEach(async () => {
    await h.stop();
  });

  it("long-polls: an empty wait ends after WaitTimeSeconds, and a message sent meanwhile ends it early", async () => {
    const startedEmpty = Date.now();
    expect(
      (await h.sqs.send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 1 }))).Messages,
    ).toBeUndefined();
    expect(Date.now() - startedEmpty).toBeGreaterThanOrEqual(900);

    const startedFull = Date.now();
    const waiting = h.sqs.send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 20 }));
    setTimeout(() => void h.rpc.send({ queue: "work", body: Buffer.from("late") }), 200);
    const { Messages } = await waiting;
    expect(Messages!.map((message) => message.Body)).toEqual(["late"]);
    expect(Date.now() - startedFull).toBeLessThan(10_000);
  });

  it("takes nothing for a long poll whose client went away", async () => {
    const abort = new AbortController();
    const abandoned = h.sqs.send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 20 }), {
      abortSignal: abort.signal,
    });
    // Wait until the poll is waiting at the broker, then hang up: the broker stops waiting for it.
    await until(() => h.server.broker.waitingReceiveCount === 1);
    abort.abort();
    await expect(abandoned).rejects.toThrow();
    await until(() => h.server.broker.waitingReceiveCount === 0);
    await h.rpc.send({ queue: "work", body: Buffer.from("for someone else") });
    const { messages } = await h.rpc.receive({ queue: "work" });
    expect(messages.map((message) => Buffer.from(message.body).toString())).toEqual(["for someone else"]);
  });

  it("serves the query protocol posted to a queue URL's path, and by GET", async () => {
    const path = new URL(url).pathname;
    const sent = await post(h.endpoint, path, "Action=SendMessage&MessageBody=by+path&Version=2012-11-05", form);
    expect(sent.status).toBe(200);
    expect(sent.text).toContain("<MD5OfMessageBody>");
    const received = await fetch(`${h.endpoint}${path}?Action=ReceiveMessage&Version=2012-11-05`);
    expect(received.status).toBe(200);
    expect(received.headers.get("content-type")).toBe("text/xml");
    expect(await received.text()).toContain("<Body>by path</Body>");
  });

  it("answers unknown and unsupported actions in the request's own protocol, never crashing", async () => {
    const viaJson = await post(h.endpoint, "/", "{}", json("NoSuchAction"));
    expect(viaJson.status).toBe(400);
    expect(JSON.parse(viaJson.text)).toEqual({
      __type: "com.amazonaws.sqs#InvalidAction",
      message: expect.stringContaining("NoSuchAction"),
    });
    expect(viaJson.headers.get("x-amzn-query-error")).toBe("InvalidAction;Sender");
    const viaQuery = await post(h.endpoint, "/", "Action=NoSuchAction", form);
    expect(viaQuery.status).toBe(400);
    expect(viaQuery.text).toMatch(/<Code>InvalidAction<\/Code>/);
    const noTarget = await post(h.endpoint, "/", "{}", { "content-type": "application/x-amz-json-1.0" });
    expect(noTarget.status).toBe(400);
    const noAction = await post(h.endpoint, "/", "Version=2012-11-05", form);
    expect(noAction.text).toMatch(/<Code>MissingAction<\/Code>/);
    // Still serving.
    await h.sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "fine" }));
  });

  it("refuses a body over the request limit with 413 before reading it all", async () => {
    // The client announces 9 MiB and sends only the first bytes: the answer must come without the rest.
    const answer = await new Promise<{ status: number; queryError: string | undefined }>((resolve, reject) => {
      const request = httpRequest(
        `${h.endpoint}/`,
        { method: "POST", headers: { ...json("SendMessage"), "content-length": String(9 * 1024 * 1024) } },
        (response) => {
          response.resume();
          resolve({
            status: response.statusCode!,
            queryError: response.headers["x-amzn-query-error"] as string | undefined,
          });
        },
      );
      request.on("error", reject);
      request.write("{");
    });
    expect(answer).toEqual({ status: 413, queryError: "RequestEntityTooLarge;Sender" });
    await h.sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "still serving" }));
  });

  it("counts requests by action and code, with a latency histogram", async () => {
    await h.sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "m" }));
    await h.sqs.send(new SendMessageCommand({ QueueUrl: h.urlOf("absent"), MessageBody: "m" })).catch(() => undefined);
    await post(h.endpoint, "/", "{}", json("NoSuchAction"));
    const samples = parseExposition(await h.server.metrics.metrics());
    const handled = (labels: Record<string, string>) =>
      samplesOf(samples, "sqs_server_handled_total", labels)[0]?.value;
    expect(handled({ sqs_action: "SendMessage", sqs_code: "OK" })).toBe(1);
    expect(handled({ sqs_action: "SendMessage", sqs_code: "AWS.SimpleQueueService.NonExistentQueue" })).toBe(1);
    expect(handled({ sqs_action: "unknown", sqs_code: "InvalidAction" })).toBe(1);
    // Pre-registered at zero, so rates start at 0.
    expect(handled({ sqs_action: "PurgeQueue", sqs_code: "OK" })).toBe(0);
    expect(samplesOf(samples, "sqs_server_started_total", { sqs_action: "SendMessage" })[0]?.value).toBe(2);
    expect(samplesOf(samples, "sqs_server_handling_seconds_count", { sqs_action: "SendMessage" })[0]?.value).toBe(2);
  });
});

/** Polls `condition` every 10 ms for up to 5 s; fails if it never holds. */
async function until(condition: () => boolean): Promise<void> {
  for (let waited = 0; !condition(); waited += 10) {
    if (waited > 5000) throw new Error("condition never held");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
