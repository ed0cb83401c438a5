// Dead-letter triage through the console's API: the bounded search, and one
// message's delete, move and edited copy, each checked by the broker as the
// session's token and audited in the log.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createQueueServiceRpc, type QueueServiceRpc } from "../../src/client/rpc-client.js";
import { createLogger } from "../../src/logging/logger.js";
import type { HoldshelfServer } from "../../src/server/holdshelf-server.js";
import { authFileText, makeToken, type TestToken } from "../security/auth-harness.js";
import { queueOn } from "../support/cluster-brokers.js";
import { skipWithoutPostgres, startPostgres, type PostgresServer } from "../support/postgres-server.js";
import { makeTempDir } from "../support/temp-dir.js";
import { settledRoutes, startClusterMember } from "../support/test-cluster.js";
import { ConsoleBrowser, startConsoleHarness, type ConsoleHarness } from "./console-harness.js";

const text = (body: string) => new TextEncoder().encode(body);

/** Fills `dlq` from `work` (maxReceiveCount 1): each message received once, given back, and dead-lettered by the next receive. */
async function deadLetter(rpc: QueueServiceRpc, work: string, dlq: string, count: number): Promise<void> {
  const first = await rpc.receive({ queue: work, maxMessages: count });
  expect(first.messages).toHaveLength(count);
  await rpc.changeVisibilityBatch({
    queue: work,
    receiptHandles: first.messages.map((m) => m.receiptHandle),
    visibilityTimeout: {},
  });
  await rpc.receive({ queue: work, maxMessages: count });
  await expect.poll(async () => (await rpc.getQueue({ name: dlq })).queue!.stats!.visible).toBe(BigInt(count));
}

describe("the message browser's search", () => {
  let h: ConsoleHarness;
  let browser: ConsoleBrowser;
  beforeEach(async () => {
    h = await startConsoleHarness({ history: { sampleIntervalMs: 3_600_000, samples: 60 } });
    browser = h.browser();
    await browser.session();
    await h.rpc().createQueue({ name: "jobs" });
  });
  afterEach(() => h.stop());

  it("finds messages by id, body text and attribute, case-insensitively, leasing nothing", async () => {
    const rpc = h.rpc();
    const invoice = await rpc.send({
      queue: "jobs",
      body: text('{"Customer": "ACME Corp"}'),
      attributes: { kind: "Invoice" },
    });
    const refund = await rpc.send({
      queue: "jobs",
      body: text("refund for acme"),
      typedAttributes: { amount: { dataType: "Number", value: { case: "stringValue", value: "42" } } },
    });
    // Not UTF-8: no text to search, though its bytes hold "acme".
    await rpc.send({ queue: "jobs", body: Uint8Array.from([0xff, 0x61, 0x63, 0x6d, 0x65]) });
    const search = (field: string, q: string) =>
      browser.api("GET", `/api/queues/jobs/messages/search?${new URLSearchParams({ field, q })}`);
    const ids = async (field: string, q: string) =>
      (await search(field, q)).body.matches.map((m: { messageId: string }) => m.messageId);

    expect(await ids("body", "acme")).toEqual([invoice.messageId, refund.messageId]);
    expect(await ids("body", "CUSTOMER")).toEqual([invoice.messageId]);
    // The id's random tail: its head is the send time, which two messages sent together share.
    expect(await ids("id", refund.messageId.slice(-12).toUpperCase())).toEqual([refund.messageId]);
    expect(await ids("attribute", "kind=invoice")).toEqual([invoice.messageId]);
    expect(await ids("attribute", "kind=refund")).toEqual([]);
    expect(await ids("attribute", "amount=")).toEqual([refund.messageId]);
    expect(await ids("attribute", "=42")).toEqual([refund.messageId]);
    expect(await ids("attribute", "INVOICE")).toEqual([invoice.messageId]);

    const answer = await search("body", "refund");
    expect(answer.body).toMatchObject({ scanned: 3, scanLimit: 10_000, nextPageToken: "" });
    expect(answer.body.matches[0]).toMatchObject({
      messageId: refund.messageId,
      bodyText: "refund for acme",
      receiveCount: 0,
      sendTime: expect.any(Number),
      deadLetter: null,
    });
    // Nothing was leased or counted.
    const { messages } = await rpc.receive({ queue: "jobs", maxMessages: 10 });
    expect(messages.map((m) => m.receiveCount)).toEqual([1, 1, 1]);
  });

  it("reads at most 10,000 messages a request, and its token continues the scan where it stopped", async () => {
    const rpc = h.rpc();
    for (let batch = 0; batch < 100; batch++) {
      await rpc.sendBatch({
        queue: "jobs",
        entries: Array.from({ length: 100 }, (_, i) => ({ id: `m${i}`, body: text(`hay ${batch * 100 + i}`) })),
      });
    }
    const needle = await rpc.send({ queue: "jobs", body: text("the needle") });
    const first = await browser.api("GET", "/api/queues/jobs/messages/search?field=body&q=needle");
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ matches: [], scanned: 10_000, scanLimit: 10_000 });
    expect(first.body.nextPageToken).not.toBe("");
    const rest = await browser.api(
      "GET",
      `/api/queues/jobs/messages/search?field=body&q=needle&pageToken=${encodeURIComponent(first.body.nextPageToken)}`,
    );
    expect(rest.body).toMatchObject({ scanned: 1, nextPageToken: "" });
    expect(rest.body.matches.map((m: { messageId: string }) => m.messageId)).toEqual([needle.messageId]);
  });

  it("stops after the page that brings 100 matches, and goes on from there", async () => {
    const rpc = h.rpc();
    for (let batch = 0; batch < 3; batch++) {
      await rpc.sendBatch({
        queue: "jobs",
        entries: Array.from({ length: 100 }, (_, i) => ({ id: `m${i}`, body: text(`match ${batch * 100 + i}`) })),
      });
    }
    let pageToken = "";
    const seen: string[] = [];
    do {
      const answer = await browser.api(
        "GET",
        `/api/queues/jobs/messages/search?field=body&q=MATCH&pageToken=${encodeURIComponent(pageToken)}`,
      );
      expect(answer.body.scanned).toBe(100);
      seen.push(...answer.body.matches.map((m: { bodyText: string }) => m.bodyText));
      pageToken = answer.body.nextPageToken;
    } while (pageToken !== "");
    expect(seen).toEqual(Array.from({ length: 300 }, (_, i) => `match ${i}`));
  });

  it("refuses an unknown field, an empty text, a bad page token and an unknown queue, with stable reasons", async () => {
    const cases = [
      ["field=subject&q=x", "field", "NOT_A_CHOICE"],
      ["q=x", "field", "NOT_A_CHOICE"],
      ["field=body&q=", "q", "REQUIRED"],
      ["field=body&q=x&pageToken=not-a-token", "page_token", expect.any(String)],
    ] as const;
    for (const [query, field, fieldReason] of cases) {
      const refused = await browser.api("GET", `/api/queues/jobs/messages/search?${query}`);
      expect(refused.status, query).toBe(400);
      expect(refused.body.error.reason, query).toBe("INVALID_ARGUMENT");
      expect(refused.body.error.fields, query).toEqual([{ field, reason: fieldReason, message: expect.any(String) }]);
    }
    const absent = await browser.api("GET", "/api/queues/absent/messages/search?field=id&q=x");
    expect(absent.status).toBe(404);
    expect(absent.body.error.reason).toBe("QUEUE_NOT_FOUND");
    expect((await browser.api("POST", "/api/queues/jobs/messages/search?field=id&q=x", {})).status).toBe(405);
    expect((await browser.api("GET", "/api/queues/jobs/messages/a/b/c")).status).toBe(404);
  });
});

describe("one message's actions", () => {
  let h: ConsoleHarness;
  let lines: Record<string, unknown>[];
  let ops: TestToken;
  let triager: TestToken;
  let sender: TestToken;
  beforeEach(async () => {
    lines = [];
    ops = makeToken("ops", { queues: "*", allow: ["admin", "send", "receive"] });
    // Admin on the dead-letter queue only: it may read and act on dead letters, and send nowhere else.
    triager = makeToken("triager", { queues: "work-dlq", allow: ["admin"] });
    sender = makeToken("sender", { queues: "*", allow: ["send"] });
    h = await startConsoleHarness({
      tokens: [ops, triager, sender],
      history: { sampleIntervalMs: 3_600_000, samples: 60 },
      logger: createLogger({ write: (line) => lines.push(JSON.parse(line)) }),
    });
    const rpc = h.rpc(ops.token);
    await rpc.createQueue({ name: "work-dlq" });
    await rpc.createQueue({
      name: "work",
      config: { redrivePolicy: { deadLetterQueue: "work-dlq", maxReceiveCount: 1 } },
    });
    await rpc.createQueue({ name: "other" });
  });
  afterEach(() => h.stop());

  const signedIn = async (token: TestToken) => {
    const browser = h.browser();
    await browser.signIn(token.token);
    return browser;
  };

  it("shows a dead letter's kept history: receive count, first receive, dead-lettered time, source and reason", async () => {
    const rpc = h.rpc(ops.token);
    const before = Date.now();
    const { messageId } = await rpc.send({ queue: "work", body: text("job") });
    await deadLetter(rpc, "work", "work-dlq", 1);
    const browser = await signedIn(ops);
    const [message] = (await browser.api("GET", "/api/queues/work-dlq/messages")).body.messages;
    expect(message).toMatchObject({
      messageId,
      receiveCount: 1,
      deadLetter: {
        sourceQueue: "work",
        reason: expect.any(String),
        receiveCount: 1,
        firstReceiveTime: expect.any(Number),
        deadLetteredAt: expect.any(Number),
      },
    });
    expect(message.deadLetter.reason).not.toBe("");
    expect(message.deadLetter.firstReceiveTime).toBeGreaterThanOrEqual(before);
    expect(message.deadLetter.deadLetteredAt).toBeGreaterThanOrEqual(message.deadLetter.firstReceiveTime);
    const found = await browser.api("GET", `/api/queues/work-dlq/messages/search?field=id&q=${messageId}`);
    expect(found.body.matches).toEqual([message]);
  });

  it("deletes one message and moves others back to their source or to a named queue, each audited by the broker", async () => {
    const rpc = h.rpc(ops.token);
    const ids: string[] = [];
    for (const body of ["a", "b", "c"]) ids.push((await rpc.send({ queue: "work", body: text(body) })).messageId);
    await deadLetter(rpc, "work", "work-dlq", 3);
    const [a, b, c] = ids as [string, string, string];
    const browser = await signedIn(ops);

    expect((await browser.api("DELETE", `/api/queues/work-dlq/messages/${a}`)).status).toBe(200);
    const back = await browser.api("POST", `/api/queues/work-dlq/messages/${b}/move`, { destinationQueue: "" });
    expect(back.body).toEqual({ destinationQueue: "work" });
    const named = await browser.api("POST", `/api/queues/work-dlq/messages/${c}/move`, { destinationQueue: "other" });
    expect(named.body).toEqual({ destinationQueue: "other" });
    expect((await rpc.getQueue({ name: "work-dlq" })).queue!.stats!.visible).toBe(0n);
    // A moved message starts its receive history again, as a redrive does.
    const moved = (await browser.api("GET", "/api/queues/work/messages")).body.messages;
    expect(moved).toEqual([expect.objectContaining({ messageId: b, receiveCount: 0, deadLetter: null })]);
    expect((await rpc.receive({ queue: "other" })).messages.map((m) => m.messageId)).toEqual([c]);

    expect(lines.filter((line) => line.msg === "message action")).toEqual([
      expect.objectContaining({ action: "DiscardMessage", queue: "work-dlq", messageId: a, caller: "ops" }),
      expect.objectContaining({ action: "MoveMessage", messageId: b, destinationQueue: "work", caller: "ops" }),
      expect.objectContaining({ action: "MoveMessage", messageId: c, destinationQueue: "other", caller: "ops" }),
    ]);
    expect(JSON.stringify(lines)).not.toContain(ops.token);
  });

  it("refuses an unknown or malformed message id, an unknown destination and a wrong method, with stable reasons", async () => {
    const rpc = h.rpc(ops.token);
    const { messageId } = await rpc.send({ queue: "work", body: text("job") });
    await deadLetter(rpc, "work", "work-dlq", 1);
    const browser = await signedIn(ops);
    const unknownId = "00000000-0000-4000-8000-000000000000";
    const cases = [
      ["DELETE", `/api/queues/work-dlq/messages/${unknownId}`, undefined, 404, "MESSAGE_NOT_FOUND"],
      ["POST", `/api/queues/work-dlq/messages/${unknownId}/move`, {}, 404, "MESSAGE_NOT_FOUND"],
      ["DELETE", "/api/queues/work-dlq/messages/not-an-id", undefined, 400, "INVALID_ARGUMENT"],
      [
        "POST",
        `/api/queues/work-dlq/messages/${messageId}/move`,
        { destinationQueue: "absent" },
        404,
        "QUEUE_NOT_FOUND",
      ],
      ["POST", `/api/queues/work-dlq/messages/${messageId}/move`, { destinationQueue: 7 }, 400, "INVALID_ARGUMENT"],
      ["DELETE", `/api/queues/absent/messages/${messageId}`, undefined, 404, "QUEUE_NOT_FOUND"],
      ["GET", `/api/queues/work-dlq/messages/${messageId}`, undefined, 405, "METHOD_NOT_ALLOWED"],
      ["GET", `/api/queues/work-dlq/messages/${messageId}/move`, undefined, 405, "METHOD_NOT_ALLOWED"],
      ["POST", `/api/queues/work-dlq/messages/${messageId}/redrive`, {}, 404, "NOT_FOUND"],
      ["DELETE", "/api/queues/work-dlq/messages/", undefined, 404, "NOT_FOUND"],
    ] as const;
    for (const [method, path, body, status, reason] of cases) {
      const refused = await browser.api(method, path, body);
      expect(refused.status, `${method} ${path}`).toBe(status);
      expect(refused.body.error.reason, `${method} ${path}`).toBe(reason);
    }
    // A message never dead-lettered has no source to go back to.
    const { messageId: plain } = await rpc.send({ queue: "other", body: text("x") });
    const sourceless = await browser.api("POST", `/api/queues/other/messages/${plain}/move`, { destinationQueue: "" });
    expect(sourceless.status).toBe(400);
    expect(sourceless.body.error.fields.map((f: { field: string }) => f.field)).toEqual(["destination_queue"]);
    expect((await rpc.getQueue({ name: "work-dlq" })).queue!.stats!.visible).toBe(1n);
  });

  it("lets a send-only token delete or move nothing, and an admin of the dead-letter queue move only where it is admin", async () => {
    const rpc = h.rpc(ops.token);
    const { messageId } = await rpc.send({ queue: "work", body: text("job") });
    await deadLetter(rpc, "work", "work-dlq", 1);
    const sending = await signedIn(sender);
    for (const [method, path, body] of [
      ["DELETE", `/api/queues/work-dlq/messages/${messageId}`, undefined],
      ["POST", `/api/queues/work-dlq/messages/${messageId}/move`, { destinationQueue: "" }],
    ] as const) {
      const refused = await sending.api(method, path, body);
      expect(refused.status, path).toBe(403);
      expect(refused.body.error.reason).toBe("PERMISSION_DENIED");
    }
    const triaging = await signedIn(triager);
    const elsewhere = await triaging.api("POST", `/api/queues/work-dlq/messages/${messageId}/move`, {
      destinationQueue: "other",
    });
    expect(elsewhere.status).toBe(403);
    expect(elsewhere.body.error.message).toContain('"other"');
    expect((await rpc.getQueue({ name: "work-dlq" })).queue!.stats!.visible).toBe(1n);
    expect((await triaging.api("DELETE", `/api/queues/work-dlq/messages/${messageId}`)).status).toBe(200);
    expect(lines.filter((line) => line.msg === "message action")).toEqual([
      expect.objectContaining({ action: "DiscardMessage", caller: "triager" }),
    ]);
  });

  it("sends an edited copy with the original's attributes to its dead-letter source, and audits it without the body or token", async () => {
    const rpc = h.rpc(ops.token);
    const original = await rpc.send({
      queue: "work",
      body: text('{"amount": -1}'),
      attributes: { kind: "payment" },
      typedAttributes: { retries: { dataType: "Number", value: { case: "stringValue", value: "3" } } },
      traceHeader: "Root=1-5759e988-bd862e3fe1be46a994272793",
    });
    await deadLetter(rpc, "work", "work-dlq", 1);
    const browser = await signedIn(ops);
    const copied = await browser.api("POST", `/api/queues/work-dlq/messages/${original.messageId}/copy`, {
      body: '{"amount": 1}',
    });
    expect(copied.status).toBe(200);
    expect(copied.body).toEqual({ messageId: expect.any(String), destinationQueue: "work" });
    const { messages } = await rpc.receive({ queue: "work" });
    expect(messages).toHaveLength(1);
    expect(new TextDecoder().decode(messages[0]!.body)).toBe('{"amount": 1}');
    expect(messages[0]).toMatchObject({
      messageId: copied.body.messageId,
      attributes: { kind: "payment" },
      traceHeader: "Root=1-5759e988-bd862e3fe1be46a994272793",
    });
    expect(messages[0]!.typedAttributes.retries).toMatchObject({ dataType: "Number" });
    // The original stays where it was.
    expect((await rpc.getQueue({ name: "work-dlq" })).queue!.stats!.visible).toBe(1n);

    const audit = lines.filter((line) => line.msg === "message action");
    expect(audit).toEqual([
      expect.objectContaining({
        level: "info",
        action: "SendEditedCopy",
        caller: "ops",
        queue: "work-dlq",
        messageId: original.messageId,
        destinationQueue: "work",
        newMessageId: copied.body.messageId,
      }),
    ]);
    const logged = JSON.stringify(lines);
    expect(logged).not.toContain(ops.token);
    expect(logged).not.toContain("amount");
  });

  it("copies to a named queue, and refuses an unknown message, an unknown destination, and a message with no source", async () => {
    const rpc = h.rpc(ops.token);
    const { messageId } = await rpc.send({ queue: "work", body: text("job") });
    await deadLetter(rpc, "work", "work-dlq", 1);
    const browser = await signedIn(ops);
    const path = `/api/queues/work-dlq/messages/${messageId}/copy`;
    const named = await browser.api("POST", path, { body: "edited", destinationQueue: "other" });
    expect(named.body.destinationQueue).toBe("other");
    expect((await rpc.receive({ queue: "other" })).messages.map((m) => new TextDecoder().decode(m.body))).toEqual([
      "edited",
    ]);

    const unknown = await browser.api(
      "POST",
      "/api/queues/work-dlq/messages/00000000-0000-4000-8000-000000000000/copy",
      { body: "x" },
    );
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.reason).toBe("MESSAGE_NOT_FOUND");
    const nowhere = await browser.api("POST", path, { body: "x", destinationQueue: "absent" });
    expect(nowhere.status).toBe(404);
    expect(nowhere.body.error.reason).toBe("QUEUE_NOT_FOUND");
    const { messageId: plain } = await rpc.send({ queue: "other", body: text("never dead-lettered") });
    const sourceless = await browser.api("POST", `/api/queues/other/messages/${plain}/copy`, { body: "x" });
    expect(sourceless.status).toBe(400);
    expect(sourceless.body.error.fields).toEqual([
      { field: "destinationQueue", reason: "REQUIRED", message: expect.stringContaining("no dead-letter source") },
    ]);
    const noBody = await browser.api("POST", path, {});
    expect(noBody.body.error.fields).toEqual([{ field: "body", reason: "WRONG_TYPE", message: "must be a string" }]);
    expect((await browser.api("GET", path)).status).toBe(405);
  });

  it("keeps a FIFO copy in the original's group unless asked, never taken for a duplicate", async () => {
    const rpc = h.rpc(ops.token);
    await rpc.createQueue({ name: "orders.fifo", config: { fifo: true } });
    const { messageId } = await rpc.send({
      queue: "orders.fifo",
      body: text("order 1"),
      messageGroupId: "customer-7",
      deduplicationId: "d1",
    });
    const browser = await signedIn(ops);
    const path = `/api/queues/orders.fifo/messages/${messageId}/copy`;
    // The same body twice: each copy is a new message.
    for (const group of ["", "", "customer-9"]) {
      const copied = await browser.api("POST", path, {
        body: "order 1",
        destinationQueue: "orders.fifo",
        messageGroupId: group,
      });
      expect(copied.status).toBe(200);
    }
    const peeked = await browser.api("GET", "/api/queues/orders.fifo/messages");
    expect(peeked.body.messages.map((m: { messageGroupId: string }) => m.messageGroupId)).toEqual([
      "customer-7",
      "customer-7",
      "customer-7",
      "customer-9",
    ]);
  });

  it("lets only a token with admin on the queue read it, and send on the destination copy to it", async () => {
    const rpc = h.rpc(ops.token);
    const { messageId } = await rpc.send({ queue: "work", body: text("job") });
    await deadLetter(rpc, "work", "work-dlq", 1);
    const path = `/api/queues/work-dlq/messages/${messageId}/copy`;

    const sending = await signedIn(sender);
    const search = await sending.api("GET", "/api/queues/work-dlq/messages/search?field=id&q=a");
    expect(search.status).toBe(403);
    expect(search.body.error.reason).toBe("PERMISSION_DENIED");
    const notAdmin = await sending.api("POST", path, { body: "x" });
    expect(notAdmin.status).toBe(403);
    expect(notAdmin.body.error.reason).toBe("PERMISSION_DENIED");

    // Admin on the dead-letter queue, but no send on the source the copy goes to.
    const triaging = await signedIn(triager);
    expect(
      (await triaging.api("GET", "/api/queues/work-dlq/messages/search?field=body&q=job")).body.matches,
    ).toHaveLength(1);
    const noSend = await triaging.api("POST", path, { body: "x" });
    expect(noSend.status).toBe(403);
    expect(noSend.body.error.message).toContain('"triager"');
    expect(noSend.body.error.message).toContain('"work"');
    expect((await rpc.getQueue({ name: "work" })).queue!.stats!.visible).toBe(0n);
    expect(lines.filter((line) => line.msg === "message action")).toEqual([]);
  });
});

// The console on a broker that owns no shards: the search's pages, the
// actions and the copy's send are all served, and checked again, by the
// brokers that own the queues; each action's audit line is the owner's.
describe.skipIf(skipWithoutPostgres)("triage in cluster mode", () => {
  const ops = makeToken("ops", { queues: "*", allow: ["admin", "send", "receive"] });
  const triager = makeToken("triager", { queues: "pay-dlq*", allow: ["admin"] });
  const ownerLines: Record<string, unknown>[] = [];
  let postgres: PostgresServer;
  let dir: Awaited<ReturnType<typeof makeTempDir>>;
  let owners: HoldshelfServer[];
  let entry: HoldshelfServer;
  let rpc: QueueServiceRpc & { close(): void };
  beforeAll(async () => {
    postgres = await startPostgres();
    dir = await makeTempDir();
    const authFile = join(dir.path, "auth.json");
    await writeFile(authFile, authFileText([ops, triager]));
    const url = await postgres.createDatabase();
    const logger = createLogger({ write: (line) => ownerLines.push(JSON.parse(line)) });
    owners = [
      await startClusterMember(url, "owner-1", { authFile, logger }),
      await startClusterMember(url, "owner-2", { authFile, logger }),
    ];
    entry = await startClusterMember(url, "entry", { authFile, routeOnly: true, consoleListen: "127.0.0.1:0" });
    await settledRoutes(entry, owners);
    rpc = createQueueServiceRpc(entry.address, { token: ops.token });
  }, 60_000);
  afterAll(async () => {
    rpc?.close();
    await entry?.shutdown();
    await Promise.all((owners ?? []).map((owner) => owner.shutdown()));
    await postgres?.stop();
    await dir?.remove();
  });

  it("searches, copies, moves and deletes on queues other brokers own, as the signed-in token", async () => {
    const members = ["owner-1", "owner-2"];
    const work = queueOn("owner-1", members, "pay");
    const dlq = queueOn("owner-2", members, "pay-dlq");
    await rpc.createQueue({ name: dlq });
    await rpc.createQueue({ name: work, config: { redrivePolicy: { deadLetterQueue: dlq, maxReceiveCount: 1 } } });
    const ids: string[] = [];
    for (const body of ["a", "b", "c"]) ids.push((await rpc.send({ queue: work, body: text(body) })).messageId);
    await deadLetter(rpc, work, dlq, 3);
    const [a, b, c] = ids as [string, string, string];

    const browser = new ConsoleBrowser(entry.consoleUrl!);
    await browser.signIn(triager.token);
    const found = await browser.api("GET", `/api/queues/${dlq}/messages/search?field=body&q=B`);
    expect(found.body).toMatchObject({ scanned: 3, nextPageToken: "" });
    expect(found.body.matches).toEqual([
      expect.objectContaining({
        messageId: b,
        deadLetter: expect.objectContaining({ sourceQueue: work, receiveCount: 1, deadLetteredAt: expect.any(Number) }),
      }),
    ]);
    // The owner of the source checks the copy's send: the triager may not send there.
    const copy = await browser.api("POST", `/api/queues/${dlq}/messages/${b}/copy`, { body: "b2" });
    expect(copy.status).toBe(403);
    expect(copy.body.error.message).toContain(`"${work}"`);
    expect((await browser.api("DELETE", `/api/queues/${dlq}/messages/${a}`)).status).toBe(200);
    expect((await browser.api("POST", `/api/queues/${dlq}/messages/${b}/move`, { destinationQueue: "" })).body).toEqual(
      {
        destinationQueue: work,
      },
    );

    const admin = new ConsoleBrowser(entry.consoleUrl!);
    await admin.signIn(ops.token);
    const copied = await admin.api("POST", `/api/queues/${dlq}/messages/${c}/copy`, { body: "c2" });
    expect(copied.body.destinationQueue).toBe(work);
    const inWork = (await rpc.peekMessages({ queue: work })).messages.map((m) => new TextDecoder().decode(m.body));
    expect(inWork.sort()).toEqual(["b", "c2"]);
    expect((await rpc.peekMessages({ queue: dlq })).messages.map((m) => m.messageId)).toEqual([c]);
    // DiscardMessage and MoveMessage are logged by the broker that made the change: the owner.
    expect(ownerLines.filter((line) => line.msg === "message action")).toEqual([
      expect.objectContaining({ action: "DiscardMessage", queue: dlq, messageId: a, caller: "triager" }),
      expect.objectContaining({ action: "MoveMessage", queue: dlq, messageId: b, caller: "triager" }),
    ]);
  });
});
