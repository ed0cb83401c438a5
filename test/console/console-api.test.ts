import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { getWithHost, startConsoleHarness, type ConsoleBrowser, type ConsoleHarness } from "./console-harness.js";

describe("the console's API without an auth file", () => {
  let h: ConsoleHarness;
  let browser: ConsoleBrowser;
  beforeEach(async () => {
    // One sample, at start: the queues the tests make are never sampled, whatever the machine's speed.
    h = await startConsoleHarness({ history: { sampleIntervalMs: 3_600_000, samples: 60 } });
    browser = h.browser();
    const session = await browser.session();
    expect(session.status).toBe(200);
    expect(session.body).toMatchObject({ authRequired: false, signedIn: true, principal: null });
  });
  afterEach(() => h.stop());

  it("opens a session in an HttpOnly, SameSite=Strict cookie, and sends the page's security headers", async () => {
    const fresh = h.browser();
    const answer = await fresh.session();
    expect(answer.headers.get("set-cookie")).toMatch(
      /^holdshelf_console=[\w-]{43}; Path=\/; HttpOnly; SameSite=Strict$/,
    );
    expect(answer.headers.get("content-security-policy")).toContain("default-src 'self'");
    expect(answer.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(answer.headers.get("x-content-type-options")).toBe("nosniff");
    expect(answer.headers.get("cache-control")).toBe("no-store");
    // Each session has its own CSRF token.
    expect(answer.body.csrfToken).toMatch(/^[\w-]{43}$/);
    expect(answer.body.csrfToken).not.toBe(browser.csrfToken);
    // A sign-in without an auth file needs no token: it opens a session as the GET does.
    const posted = await h.browser().api("POST", "/api/session", {});
    expect(posted.body).toMatchObject({ authRequired: false, signedIn: true });
    expect(posted.headers.get("set-cookie")).toMatch(/^holdshelf_console=/);
  });

  it("creates a queue, sends a test message, counts it, and browses it without changing its receive count", async () => {
    const created = await browser.api("POST", "/api/queues", {
      name: "jobs",
      config: { visibilityTimeout: "45s", tags: { team: "ops" } },
    });
    expect(created.status).toBe(200);
    expect(created.body.queue).toMatchObject({
      name: "jobs",
      config: { visibilityTimeout: "45s", tags: { team: "ops" } },
      stats: { visible: 0 },
    });
    const sent = await browser.api("POST", "/api/queues/jobs/messages", {
      body: '{"order":7}',
      attributes: { kind: "test" },
    });
    expect(sent.status).toBe(200);
    const list = await browser.api("GET", "/api/queues");
    // Created since the history's last sample: this broker cannot tell yet, so the marks say nothing.
    expect(list.body.queues).toEqual([
      expect.objectContaining({
        name: "jobs",
        visible: 1,
        inFlight: 0,
        delayed: 0,
        deadLettering: null,
        oldestAgeGrowing: null,
      }),
    ]);
    expect(list.body.sampleIntervalMs).toBeGreaterThan(0);
    expect(list.body.truncated).toBe(false);

    const peeked = await browser.api("GET", "/api/queues/jobs/messages");
    expect(peeked.body.messages).toEqual([
      expect.objectContaining({
        messageId: sent.body.messageId,
        bodyText: '{"order":7}',
        body: Buffer.from('{"order":7}').toString("base64"),
        attributes: { kind: "test" },
        receiveCount: 0,
        state: "visible",
        leaseDeadline: null,
        deadLetterSourceQueue: null,
        traceHeader: null,
      }),
    ]);
    expect(peeked.body.nextPageToken).toBe("");
    // Browsing leased nothing: the next receive is the first delivery.
    const { messages } = await h.rpc().receive({ queue: "jobs" });
    expect(messages.map((m) => [m.messageId, m.receiveCount])).toEqual([[sent.body.messageId, 1]]);
    const after = await browser.api("GET", "/api/queues/jobs/messages");
    expect(after.body.messages[0]).toMatchObject({
      receiveCount: 1,
      state: "in_flight",
      leaseDeadline: expect.any(Number),
    });
  });

  it("shows a message's trace header, as sent over gRPC (or SQS's AWSTraceHeader)", async () => {
    await browser.api("POST", "/api/queues", { name: "traced" });
    const traceHeader = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1";
    await h.rpc().send({ queue: "traced", body: Buffer.from("t"), traceHeader });
    const peeked = await browser.api("GET", "/api/queues/traced/messages");
    expect(peeked.body.messages).toEqual([expect.objectContaining({ bodyText: "t", traceHeader })]);
  });

  it("keeps an attribute whatever its name, __proto__ included", async () => {
    await browser.api("POST", "/api/queues", { name: "odd" });
    const sent = await browser.api(
      "POST",
      "/api/queues/odd/messages",
      '{"body":"x","attributes":{"__proto__":"kept","constructor":"too"}}',
    );
    expect(sent.status).toBe(200);
    const { messages } = await h.rpc().receive({ queue: "odd" });
    expect(Object.entries(messages[0]!.attributes).sort()).toEqual([
      ["__proto__", "kept"],
      ["constructor", "too"],
    ]);
  });

  it("sends with a delay, and shows a binary body as no text", async () => {
    await browser.api("POST", "/api/queues", { name: "later" });
    expect((await browser.api("POST", "/api/queues/later/messages", { body: "soon", delaySeconds: 60 })).status).toBe(
      200,
    );
    const page = await browser.api("GET", "/api/queues/later/messages");
    expect(page.body.messages[0]).toMatchObject({ state: "delayed", visibleTime: expect.any(Number) });
    await h.rpc().send({ queue: "later", body: new Uint8Array([0xff, 0xfe, 0x00]) });
    const both = await browser.api("GET", "/api/queues/later/messages");
    expect(both.body.messages[1]).toMatchObject({
      bodyText: null,
      body: Buffer.from([0xff, 0xfe, 0x00]).toString("base64"),
    });
  });

  it("pages the message browser with the broker's page token", async () => {
    await browser.api("POST", "/api/queues", { name: "many" });
    for (let i = 0; i < 5; i++) await browser.api("POST", "/api/queues/many/messages", { body: `m${i}` });
    const first = await browser.api("GET", "/api/queues/many/messages?pageSize=2");
    expect(first.body.messages.map((m: { bodyText: string }) => m.bodyText)).toEqual(["m0", "m1"]);
    const second = await browser.api(
      "GET",
      `/api/queues/many/messages?pageSize=2&pageToken=${encodeURIComponent(first.body.nextPageToken)}`,
    );
    expect(second.body.messages.map((m: { bodyText: string }) => m.bodyText)).toEqual(["m2", "m3"]);
    const bad = await browser.api("GET", "/api/queues/many/messages?pageSize=1000");
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({
      reason: "INVALID_ARGUMENT",
      fields: [expect.objectContaining({ field: "page_size" })],
    });
    const notANumber = await browser.api("GET", "/api/queues/many/messages?pageSize=ten");
    expect(notANumber.body.error.fields[0].field).toBe("page_size");
  });

  it("answers validation errors by field, from the page's JSON and from the broker", async () => {
    const badDuration = await browser.api("POST", "/api/queues", { name: "q", config: { visibilityTimeout: "soon" } });
    expect(badDuration.status).toBe(400);
    expect(badDuration.body.error).toMatchObject({
      reason: "INVALID_ARGUMENT",
      fields: [
        { field: "config.visibility_timeout", reason: "NOT_A_DURATION", message: expect.stringContaining("30s") },
      ],
    });
    const badBackoff = await browser.api("POST", "/api/queues", {
      name: "q",
      config: { retryPolicy: { minBackoff: 5 } },
    });
    expect(badBackoff.body.error.fields[0].field).toBe("config.retry_policy.min_backoff");
    const badNumber = await browser.api("POST", "/api/queues", { name: "q", config: { maxInFlight: "many" } });
    expect(badNumber.body.error.fields[0].field).toBe("config.max_in_flight");
    const unknown = await browser.api("POST", "/api/queues", { name: "q", config: { colour: "red" } });
    expect(unknown.body.error.fields).toEqual([
      { field: "config.colour", reason: "UNKNOWN_FIELD", message: "is not a queue setting" },
    ]);
    // The broker's own bounds.
    const tooLong = await browser.api("POST", "/api/queues", { name: "q", config: { visibilityTimeout: "100000s" } });
    expect(tooLong.body.error).toMatchObject({
      reason: "INVALID_ARGUMENT",
      fields: [expect.objectContaining({ field: "config.visibility_timeout" })],
    });
    const badName = await browser.api("POST", "/api/queues", { name: "no spaces" });
    expect(badName.body.error.fields[0].field).toBe("name");
    const missingName = await browser.api("POST", "/api/queues", { config: {} });
    expect(missingName.body.error.fields).toEqual([
      { field: "name", reason: "WRONG_TYPE", message: "must be a string" },
    ]);
    const badAttributes = await browser
      .api("POST", "/api/queues", { name: "q" })
      .then(() => browser.api("POST", "/api/queues/q/messages", { body: "x", attributes: { n: 1 } }));
    expect(badAttributes.body.error.fields[0].field).toBe('attributes["n"]');
    const badDelay = await browser.api("POST", "/api/queues/q/messages", { body: "x", delaySeconds: -1 });
    expect(badDelay.body.error.fields[0].field).toBe("delaySeconds");
    // Nothing of the refused requests was stored.
    expect((await browser.api("GET", "/api/queues")).body.queues.map((q: { name: string }) => q.name)).toEqual(["q"]);
    expect((await browser.api("GET", "/api/queues/q")).body.queue.stats.visible).toBe(0);
  });

  it("edits a queue's configuration, including its redrive and retry policies", async () => {
    await browser.api("POST", "/api/queues", { name: "jobs-dlq" });
    await browser.api("POST", "/api/queues", { name: "jobs" });
    const updated = await browser.api("PUT", "/api/queues/jobs", {
      config: {
        visibilityTimeout: "20s",
        redrivePolicy: { deadLetterQueue: "jobs-dlq", maxReceiveCount: 3 },
        retryPolicy: { minBackoff: "1s", maxBackoff: "30s" },
      },
    });
    expect(updated.status).toBe(200);
    expect(updated.body.queue.config).toMatchObject({
      visibilityTimeout: "20s",
      redrivePolicy: { deadLetterQueue: "jobs-dlq", maxReceiveCount: 3 },
      retryPolicy: { minBackoff: "1s", maxBackoff: "30s" },
    });
    const dlq = await browser.api("GET", "/api/queues/jobs-dlq");
    expect(dlq.body.queue.deadLetterSourceQueues).toEqual(["jobs"]);
    expect(dlq.body.history).toMatchObject({
      t: expect.any(Array),
      visible: expect.any(Array),
      sent: expect.any(Array),
    });
    expect(dlq.body.processing).toBeNull();
    const missingDlq = await browser.api("PUT", "/api/queues/jobs", {
      config: { redrivePolicy: { deadLetterQueue: "nope", maxReceiveCount: 3 } },
    });
    expect(missingDlq.status).toBe(409);
    expect(missingDlq.body.error.reason).toBe("DEAD_LETTER_QUEUE_NOT_FOUND");
  });

  it("changes only the settings a save names in fields, so another operator's change stays", async () => {
    await browser.api("POST", "/api/queues", { name: "jobs-dlq" });
    await browser.api("POST", "/api/queues", {
      name: "jobs",
      config: { redrivePolicy: { deadLetterQueue: "jobs-dlq", maxReceiveCount: 3 }, tags: { team: "ops" } },
    });
    // The form was loaded before this change made elsewhere (the CLI), and sends its whole draft.
    await h.rpc().updateQueue({ name: "jobs", config: { maxInFlight: 500 }, updateMask: { paths: ["max_in_flight"] } });
    const saved = await browser.api("PUT", "/api/queues/jobs", {
      config: { visibilityTimeout: "60s", maxInFlight: 120000, tags: { team: "ops" } },
      fields: ["visibility_timeout"],
    });
    expect(saved.status).toBe(200);
    expect(saved.body.queue.config).toMatchObject({
      visibilityTimeout: "60s",
      maxInFlight: 500,
      redrivePolicy: { deadLetterQueue: "jobs-dlq", maxReceiveCount: 3 },
      tags: { team: "ops" },
    });
    // A named setting left out takes its default.
    const cleared = await browser.api("PUT", "/api/queues/jobs", { config: {}, fields: ["redrive_policy"] });
    expect(cleared.body.queue.config.redrivePolicy).toBeUndefined();
    expect(cleared.body.queue.config.maxInFlight).toBe(500);
    for (const [fields, field] of [
      [[], "fields"],
      ["visibility_timeout", "fields"],
      [["visibilityTimeout"], "update_mask"],
    ] as const) {
      const refused = await browser.api("PUT", "/api/queues/jobs", { config: {}, fields });
      expect(refused.status).toBe(400);
      expect(refused.body.error.fields[0].field).toBe(field);
    }
    expect((await browser.api("GET", "/api/queues/jobs")).body.queue.config.visibilityTimeout).toBe("60s");
  });

  it("purges with the count, deletes, and answers 404 for a queue that is gone", async () => {
    await browser.api("POST", "/api/queues", { name: "jobs" });
    for (let i = 0; i < 3; i++) await browser.api("POST", "/api/queues/jobs/messages", { body: `m${i}` });
    const purged = await browser.api("POST", "/api/queues/jobs/purge", {});
    expect(purged.body).toEqual({ purgedCount: 3 });
    expect((await browser.api("DELETE", "/api/queues/jobs")).status).toBe(200);
    const gone = await browser.api("GET", "/api/queues/jobs");
    expect(gone.status).toBe(404);
    expect(gone.body.error).toMatchObject({ reason: "QUEUE_NOT_FOUND", message: expect.stringContaining("jobs") });
  });

  it("runs a dead-letter redrive as a move task: started, listed with progress, and cancelled", async () => {
    await browser.api("POST", "/api/queues", { name: "dlq" });
    await browser.api("POST", "/api/queues", {
      name: "work",
      config: { redrivePolicy: { deadLetterQueue: "dlq", maxReceiveCount: 1 } },
    });
    const target = await browser.api("POST", "/api/queues", { name: "target" });
    expect(target.status).toBe(200);
    for (let i = 0; i < 5; i++) await h.rpc().send({ queue: "dlq", body: new TextEncoder().encode(`d${i}`) });
    const started = await browser.api("POST", "/api/queues/dlq/move-tasks", {
      destinationQueue: "target",
      maxPerSecond: 1,
    });
    expect(started.status).toBe(200);
    const listed = await browser.api("GET", "/api/queues/dlq/move-tasks");
    expect(listed.body.tasks[0]).toMatchObject({
      taskHandle: started.body.taskHandle,
      status: "RUNNING",
      sourceQueue: "dlq",
      destinationQueue: "target",
      maxPerSecond: 1,
      toMoveCount: 5,
    });
    const second = await browser.api("POST", "/api/queues/dlq/move-tasks", {});
    expect(second.status).toBe(409);
    expect(second.body.error.reason).toBe("MOVE_TASK_RUNNING");
    const cancelled = await browser.api("POST", "/api/move-tasks/cancel", { taskHandle: started.body.taskHandle });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.movedCount).toBeLessThan(5);
    const after = await browser.api("GET", "/api/queues/dlq/move-tasks");
    expect(after.body.tasks[0]).toMatchObject({ status: "CANCELLED", taskHandle: null, ratePerSecond: null });
    const again = await browser.api("POST", "/api/move-tasks/cancel", { taskHandle: started.body.taskHandle });
    expect(again.body.error.reason).toBe("MOVE_TASK_NOT_FOUND");
  });

  it("refuses changes without the session's CSRF token, form posts, and requests from other sites", async () => {
    const without = await browser.api("POST", "/api/queues", { name: "x" }, { "x-holdshelf-csrf": "" });
    expect(without.status).toBe(403);
    expect(without.body.error.reason).toBe("CSRF_TOKEN_INVALID");
    const other = h.browser();
    await other.session();
    const wrong = await browser.api("POST", "/api/queues", { name: "x" }, { "x-holdshelf-csrf": other.csrfToken! });
    expect(wrong.body.error.reason).toBe("CSRF_TOKEN_INVALID");
    const form = await browser.api("POST", "/api/queues", "name=x", {
      "content-type": "application/x-www-form-urlencoded",
    });
    expect(form.status).toBe(415);
    const crossSite = await browser.api("GET", "/api/queues", undefined, { "sec-fetch-site": "cross-site" });
    expect(crossSite.body.error.reason).toBe("CSRF_TOKEN_INVALID");
    // Another port of this host is same-site, but not the console's origin.
    const sameSite = await browser.api("GET", "/api/queues", undefined, { "sec-fetch-site": "same-site" });
    expect(sameSite.body.error.reason).toBe("CSRF_TOKEN_INVALID");
    expect((await browser.api("GET", "/api/queues", undefined, { "sec-fetch-site": "same-origin" })).status).toBe(200);
    // No session at all.
    const stranger = h.browser();
    const noSession = await stranger.api("GET", "/api/queues");
    expect(noSession.status).toBe(401);
    expect(noSession.body.error.reason).toBe("SESSION_REQUIRED");
    expect((await browser.api("GET", "/api/queues")).body.queues).toEqual([]);
  });

  it("refuses names that could be a DNS rebinding, bad JSON, bodies too large, and unknown paths", async () => {
    const rebound = await getWithHost(h.consoleUrl, "/api/session", "evil.example:80");
    expect(rebound.status).toBe(421);
    expect(JSON.parse(rebound.body).error.reason).toBe("HOST_NOT_ALLOWED");
    expect((await getWithHost(h.consoleUrl, "/", "evil.example")).status).toBe(421);
    expect((await getWithHost(h.consoleUrl, "/api/session", `localhost:${new URL(h.consoleUrl).port}`)).status).toBe(
      200,
    );
    expect((await getWithHost(h.consoleUrl, "/api/session", `[::1]:${new URL(h.consoleUrl).port}`)).status).toBe(200);
    const badJson = await browser.api("POST", "/api/queues", "{not json");
    expect(badJson.body.error).toMatchObject({
      reason: "INVALID_ARGUMENT",
      fields: [{ field: "request", reason: "MALFORMED", message: "the body is not valid JSON" }],
    });
    const huge = await browser.api("POST", "/api/queues/x/messages", { body: "x".repeat(5 * 1024 * 1024) });
    expect(huge.status).toBe(413);
    // Without a session the body is never read: the refusal is the session's, whatever the size.
    const stranger = await h.browser().api("POST", "/api/queues/x/messages", { body: "x".repeat(5 * 1024 * 1024) });
    expect(stranger.body.error.reason).toBe("SESSION_REQUIRED");
    // A sign-in's body is small.
    expect((await h.browser().api("POST", "/api/session", { token: "x".repeat(20_000) })).status).toBe(413);
    expect((await browser.api("GET", "/api/nothing")).status).toBe(404);
    expect((await browser.api("PATCH", "/api/queues")).status).toBe(405);
    expect((await browser.api("GET", "/api/queues/jobs/elsewhere")).status).toBe(404);
  });

  it("serves the built page with its security headers, or says how to build it", async () => {
    const response = await fetch(h.consoleUrl);
    // CI builds the console (npm run build) before the tests, so the page is there.
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(response.headers.get("x-frame-options")).toBe("DENY");
    const html = await response.text();
    const script = /src="\.?(\/assets\/[^"]+\.js)"/.exec(html);
    expect(script).not.toBeNull();
    const asset = await fetch(new URL(script![1]!, h.consoleUrl));
    expect(asset.status).toBe(200);
    expect(asset.headers.get("cache-control")).toContain("immutable");
    const again = await fetch(new URL(script![1]!, h.consoleUrl), {
      headers: { "if-none-match": asset.headers.get("etag")! },
    });
    expect(again.status).toBe(304);
    expect((await fetch(new URL("/nothing.js", h.consoleUrl))).status).toBe(404);
    expect((await fetch(h.consoleUrl, { method: "POST" })).status).toBe(405);
  });
});

describe("the console's history through its API", () => {
  let h: ConsoleHarness;
  afterEach(() => h.stop());

  it("shows a sampled queue's rates, marks and processing time once the broker has sampled it", async () => {
    // The list shows the last 30 samples: 15 s at this interval, room enough on a loaded machine.
    h = await startConsoleHarness({ history: { sampleIntervalMs: 500, samples: 60 } });
    const browser = h.browser();
    await browser.session();
    await browser.api("POST", "/api/queues", { name: "jobs" });
    // Sampled once: from here on its events are rates (the first sample only starts the count).
    await vi.waitFor(
      async () => expect((await browser.api("GET", "/api/queues")).body.queues[0].deadLettering).toBe(false),
      { timeout: 10_000, interval: 50 },
    );
    for (let i = 0; i < 3; i++) await browser.api("POST", "/api/queues/jobs/messages", { body: `m${i}` });
    const rpc = h.rpc();
    const { messages } = await rpc.receive({ queue: "jobs", maxMessages: 3 });
    for (const message of messages) await rpc.delete({ queue: "jobs", receiptHandle: message.receiptHandle });
    await vi.waitFor(
      async () => {
        const detail = (await browser.api("GET", "/api/queues/jobs")).body;
        expect(detail.processing).toMatchObject({ count: 3, p50Ms: expect.any(Number), p99Ms: expect.any(Number) });
        expect(detail.history.t.length).toBeGreaterThan(1);
        expect(detail.history.deleted.some((value: number) => value > 0)).toBe(true);
      },
      { timeout: 10_000, interval: 100 },
    );
    const row = (await browser.api("GET", "/api/queues")).body.queues[0];
    expect(row).toMatchObject({ name: "jobs", deadLettering: false, oldestAgeGrowing: false });
    // Three sends, three receives and three deletes appear as rates in the recent samples.
    for (const rate of ["sent", "received", "deleted"]) {
      const perSecond: number[] = row.rates[rate];
      expect(
        perSecond.some((value) => value > 0),
        rate,
      ).toBe(true);
    }
  });
});
