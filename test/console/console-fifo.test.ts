// FIFO queues through the console's API (issue #19): created, shown, sent to
// with a message group and deduplication id, browsed with their sequence
// numbers, updated without losing FIFO, and every refusal by its field.
import { createHash } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { startConsoleHarness, type ConsoleBrowser, type ConsoleHarness } from "./console-harness.js";

const fifoConfig = { fifo: true, deduplicationScope: "DEDUPLICATION_SCOPE_QUEUE" };

describe("FIFO queues through the console's API", () => {
  let h: ConsoleHarness;
  let browser: ConsoleBrowser;
  beforeEach(async () => {
    h = await startConsoleHarness({ history: { sampleIntervalMs: 3_600_000, samples: 60 } });
    browser = h.browser();
    await browser.session();
  });
  afterEach(() => h.stop());

  /** Sends to `queue` through the console and returns the answer. */
  const send = (queue: string, message: Record<string, unknown>) =>
    browser.api("POST", `/api/queues/${queue}/messages`, message);

  it("creates a FIFO queue, and shows it as FIFO with its settings in the list and on its page", async () => {
    const created = await browser.api("POST", "/api/queues", {
      name: "orders.fifo",
      config: { ...fifoConfig, contentBasedDeduplication: true },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body.queue).toMatchObject({
      name: "orders.fifo",
      config: { fifo: true, contentBasedDeduplication: true, deduplicationScope: "DEDUPLICATION_SCOPE_QUEUE" },
      fifo: { contentBasedDeduplication: true, deduplicationScope: "queue" },
    });
    await browser.api("POST", "/api/queues", { name: "plain" });
    await browser.api("POST", "/api/queues", {
      name: "grouped",
      config: { fifo: true, deduplicationScope: "DEDUPLICATION_SCOPE_MESSAGE_GROUP" },
    });
    const list = await browser.api("GET", "/api/queues");
    expect(list.body.queues.map((row: { name: string; fifo: unknown }) => [row.name, row.fifo])).toEqual([
      ["grouped", { contentBasedDeduplication: false, deduplicationScope: "messageGroup" }],
      ["orders.fifo", { contentBasedDeduplication: true, deduplicationScope: "queue" }],
      ["plain", null],
    ]);
    const page = await browser.api("GET", "/api/queues/orders.fifo");
    expect(page.body.queue.fifo).toEqual({ contentBasedDeduplication: true, deduplicationScope: "queue" });
    expect((await browser.api("GET", "/api/queues/plain")).body.queue).toMatchObject({
      fifo: null,
      config: expect.not.objectContaining({ fifo: expect.anything() }),
    });
    // The broker holds it as FIFO, over gRPC too.
    expect((await h.rpc().getQueue({ name: "orders.fifo" })).queue!.config).toMatchObject({
      fifo: true,
      contentBasedDeduplication: true,
    });
  });

  it("sends with a message group and deduplication id, returns the sequence number, and a duplicate returns the first send's", async () => {
    await browser.api("POST", "/api/queues", { name: "jobs.fifo", config: fifoConfig });
    const first = await send("jobs.fifo", { body: "one", messageGroupId: "customer-7", deduplicationId: "d-1" });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body).toEqual({ messageId: expect.any(String), sequenceNumber: expect.stringMatching(/^\d{20}$/) });
    const second = await send("jobs.fifo", { body: "two", messageGroupId: "customer-7", deduplicationId: "d-2" });
    // 20 digits: text order is number order.
    expect(second.body.sequenceNumber > first.body.sequenceNumber).toBe(true);
    // A repeat within five minutes, even with another body: the first send's id and number, and nothing stored.
    const repeat = await send("jobs.fifo", { body: "one again", messageGroupId: "customer-7", deduplicationId: "d-1" });
    expect(repeat.body).toEqual(first.body);
    expect((await browser.api("GET", "/api/queues/jobs.fifo")).body.queue.stats.visible).toBe(2);

    const peeked = await browser.api("GET", "/api/queues/jobs.fifo/messages");
    expect(peeked.body.messages).toEqual([
      expect.objectContaining({
        messageId: first.body.messageId,
        bodyText: "one",
        messageGroupId: "customer-7",
        sequenceNumber: first.body.sequenceNumber,
        deduplicationId: "d-1",
      }),
      expect.objectContaining({
        messageId: second.body.messageId,
        bodyText: "two",
        messageGroupId: "customer-7",
        sequenceNumber: second.body.sequenceNumber,
        deduplicationId: "d-2",
      }),
    ]);
    // A standard queue's messages carry none of it, and its send no sequence number.
    await browser.api("POST", "/api/queues", { name: "plain" });
    expect((await send("plain", { body: "x" })).body).toEqual({ messageId: expect.any(String), sequenceNumber: null });
    expect((await browser.api("GET", "/api/queues/plain/messages")).body.messages[0]).toMatchObject({
      messageGroupId: null,
      sequenceNumber: null,
      deduplicationId: null,
    });
  });

  it("deduplicates by the body's SHA-256 under content-based deduplication, and shows that as the deduplication id", async () => {
    await browser.api("POST", "/api/queues", {
      name: "content.fifo",
      config: { ...fifoConfig, contentBasedDeduplication: true },
    });
    const first = await send("content.fifo", { body: "same", messageGroupId: "g" });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect((await send("content.fifo", { body: "same", messageGroupId: "g", deduplicationId: null })).body).toEqual(
      first.body,
    );
    const other = await send("content.fifo", { body: "other", messageGroupId: "g" });
    expect(other.body.messageId).not.toBe(first.body.messageId);
    const { messages } = (await browser.api("GET", "/api/queues/content.fifo/messages")).body;
    expect(messages.map((m: { deduplicationId: string }) => m.deduplicationId)).toEqual([
      createHash("sha256").update("same").digest("hex"),
      createHash("sha256").update("other").digest("hex"),
    ]);
  });

  it("answers a FIFO send's refusals by field: the group, the deduplication id, a delay, and FIFO fields on a standard queue", async () => {
    await browser.api("POST", "/api/queues", { name: "jobs.fifo", config: fifoConfig });
    await browser.api("POST", "/api/queues", { name: "plain" });
    const refusal = async (queue: string, message: Record<string, unknown>) => {
      const answer = await send(queue, message);
      expect(answer.status, JSON.stringify(answer.body)).toBe(400);
      return {
        reason: answer.body.error.reason,
        fields: answer.body.error.fields.map((f: { field: string }) => f.field),
      };
    };
    expect(await refusal("jobs.fifo", { body: "x", deduplicationId: "d" })).toEqual({
      reason: "MESSAGE_GROUP_ID_REQUIRED",
      fields: ["message_group_id"],
    });
    expect(await refusal("jobs.fifo", { body: "x", messageGroupId: "", deduplicationId: "d" })).toEqual({
      reason: "MESSAGE_GROUP_ID_REQUIRED",
      fields: ["message_group_id"],
    });
    expect(await refusal("jobs.fifo", { body: "x", messageGroupId: "g" })).toEqual({
      reason: "DEDUPLICATION_ID_REQUIRED",
      fields: ["deduplication_id"],
    });
    expect(await refusal("jobs.fifo", { body: "x", messageGroupId: "has space", deduplicationId: "d" })).toEqual({
      reason: "INVALID_ARGUMENT",
      fields: ["message_group_id"],
    });
    expect(await refusal("jobs.fifo", { body: "x", messageGroupId: "g", deduplicationId: "d".repeat(129) })).toEqual({
      reason: "INVALID_ARGUMENT",
      fields: ["deduplication_id"],
    });
    expect(
      await refusal("jobs.fifo", { body: "x", messageGroupId: "g", deduplicationId: "d", delaySeconds: 5 }),
    ).toEqual({ reason: "INVALID_ARGUMENT", fields: ["delay"] });
    expect(await refusal("plain", { body: "x", messageGroupId: "g" })).toEqual({
      reason: "NOT_A_FIFO_QUEUE",
      fields: ["message_group_id"],
    });
    expect(await refusal("plain", { body: "x", deduplicationId: "d" })).toEqual({
      reason: "NOT_A_FIFO_QUEUE",
      fields: ["deduplication_id"],
    });
    // The console's own reading of the JSON names its keys.
    expect(await refusal("jobs.fifo", { body: "x", messageGroupId: 7 })).toEqual({
      reason: "INVALID_ARGUMENT",
      fields: ["messageGroupId"],
    });
    expect(await refusal("jobs.fifo", { body: "x", messageGroupId: "g", deduplicationId: ["d"] })).toEqual({
      reason: "INVALID_ARGUMENT",
      fields: ["deduplicationId"],
    });
    // None of them stored anything.
    expect((await browser.api("GET", "/api/queues/jobs.fifo")).body.queue.stats.visible).toBe(0);
    expect((await browser.api("GET", "/api/queues/plain")).body.queue.stats.visible).toBe(0);
  });

  it("answers a FIFO configuration's refusals by field", async () => {
    const refusal = async (body: Record<string, unknown>) => {
      const answer = await browser.api("POST", "/api/queues", body);
      expect(answer.status, JSON.stringify(answer.body)).toBe(400);
      return answer.body.error.fields.map((f: { field: string }) => f.field);
    };
    // A ".fifo" name is for FIFO queues only.
    expect(await refusal({ name: "orders.fifo" })).toEqual(["config.fifo"]);
    expect(await refusal({ name: "orders.fifo", config: { fifo: false } })).toEqual(["config.fifo"]);
    // The FIFO settings are for FIFO queues only.
    expect(await refusal({ name: "plain", config: { contentBasedDeduplication: true } })).toEqual([
      "config.content_based_deduplication",
    ]);
    expect(await refusal({ name: "plain", config: { deduplicationScope: "DEDUPLICATION_SCOPE_QUEUE" } })).toEqual([
      "config.deduplication_scope",
    ]);
    // Values protobuf's JSON cannot read, or the broker does not know.
    expect(await refusal({ name: "q.fifo", config: { fifo: "yes" } })).toEqual(["config.fifo"]);
    expect(await refusal({ name: "q.fifo", config: { fifo: true, contentBasedDeduplication: 1 } })).toEqual([
      "config.content_based_deduplication",
    ]);
    expect(await refusal({ name: "q.fifo", config: { fifo: true, deduplicationScope: "messageGroup" } })).toEqual([
      "config.deduplication_scope",
    ]);
    expect(await refusal({ name: "q.fifo", config: { fifo: true, deduplicationScope: 7 } })).toEqual([
      "config.deduplication_scope",
    ]);
    expect(await refusal({ name: "q.fifo", config: { fifo: true, deduplicationScope: 2 ** 31 } })).toEqual([
      "config.deduplication_scope",
    ]);
    expect(await refusal({ name: "q.fifo", config: { fifo: true, deduplicationScope: { queue: true } } })).toEqual([
      "config.deduplication_scope",
    ]);
    expect(await refusal({ name: `${"q".repeat(76)}.fifo`, config: { fifo: true } })).toEqual(["name"]);
    // A value protobuf could not read is not echoed: the page shows it in its field, and text such as "undefined" would read as a failure of the console's.
    const echoed = await browser.api("POST", "/api/queues", { name: "q.fifo", config: { fifo: "undefined" } });
    expect(echoed.body.error.fields).toEqual([
      { field: "config.fifo", reason: "WRONG_TYPE", message: "must be true or false" },
    ]);
    expect((await browser.api("GET", "/api/queues")).body.queues).toEqual([]);
  });

  it("updates a FIFO queue's settings when the whole configuration goes back with fifo, and refuses to change its type", async () => {
    await browser.api("POST", "/api/queues", {
      name: "jobs.fifo",
      config: { ...fifoConfig, visibilityTimeout: "40s" },
    });
    await browser.api("POST", "/api/queues", { name: "plain" });
    // As the settings form saves: the whole configuration as shown, with its changes.
    const shown = (await browser.api("GET", "/api/queues/jobs.fifo")).body.queue.config;
    const updated = await browser.api("PUT", "/api/queues/jobs.fifo", {
      config: {
        ...shown,
        visibilityTimeout: "50s",
        contentBasedDeduplication: true,
        deduplicationScope: "DEDUPLICATION_SCOPE_MESSAGE_GROUP",
      },
    });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect(updated.body.queue).toMatchObject({
      config: {
        fifo: true,
        visibilityTimeout: "50s",
        contentBasedDeduplication: true,
        deduplicationScope: "DEDUPLICATION_SCOPE_MESSAGE_GROUP",
      },
      fifo: { contentBasedDeduplication: true, deduplicationScope: "messageGroup" },
    });
    // Left out, fifo would make it standard: refused by field, and nothing changes.
    const withoutFifo = await browser.api("PUT", "/api/queues/jobs.fifo", { config: { visibilityTimeout: "60s" } });
    expect(withoutFifo.status).toBe(400);
    expect(withoutFifo.body.error.fields.map((f: { field: string }) => f.field)).toEqual(["config.fifo"]);
    const toFifo = await browser.api("PUT", "/api/queues/plain", { config: { fifo: true } });
    expect(toFifo.body.error.fields.map((f: { field: string }) => f.field)).toEqual(["config.fifo"]);
    expect((await browser.api("GET", "/api/queues/jobs.fifo")).body.queue).toMatchObject({
      config: { visibilityTimeout: "50s" },
      fifo: { contentBasedDeduplication: true },
    });
    expect((await browser.api("GET", "/api/queues/plain")).body.queue.fifo).toBeNull();
  });

  it("refuses a FIFO dead-letter queue's redrive to a standard queue by destination_queue, and moves it to a FIFO queue with its groups", async () => {
    await browser.api("POST", "/api/queues", { name: "work-dlq.fifo", config: fifoConfig });
    await browser.api("POST", "/api/queues", {
      name: "work.fifo",
      config: { ...fifoConfig, redrivePolicy: { deadLetterQueue: "work-dlq.fifo", maxReceiveCount: 1 } },
    });
    await browser.api("POST", "/api/queues", { name: "again.fifo", config: fifoConfig });
    await browser.api("POST", "/api/queues", { name: "plain" });
    for (let i = 0; i < 3; i++)
      await send("work-dlq.fifo", { body: `m${i}`, messageGroupId: "g", deduplicationId: `d${i}` });
    // A standard queue under a FIFO one's redrive policy is refused by its field too.
    const standardDlq = await browser.api("PUT", "/api/queues/work.fifo", {
      config: { ...fifoConfig, redrivePolicy: { deadLetterQueue: "plain", maxReceiveCount: 1 } },
    });
    expect(standardDlq.body.error.fields.map((f: { field: string }) => f.field)).toEqual([
      "config.redrive_policy.dead_letter_queue",
    ]);

    const refused = await browser.api("POST", "/api/queues/work-dlq.fifo/move-tasks", { destinationQueue: "plain" });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({
      reason: "INVALID_ARGUMENT",
      fields: [{ field: "destination_queue", reason: "INVALID_ARGUMENT", message: expect.stringContaining("FIFO") }],
    });
    expect((await browser.api("GET", "/api/queues/work-dlq.fifo/move-tasks")).body.tasks).toEqual([]);

    const started = await browser.api("POST", "/api/queues/work-dlq.fifo/move-tasks", {
      destinationQueue: "again.fifo",
    });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    await vi.waitFor(
      async () =>
        expect((await browser.api("GET", "/api/queues/work-dlq.fifo/move-tasks")).body.tasks[0]).toMatchObject({
          status: "COMPLETED",
          movedCount: 3,
        }),
      { timeout: 10_000, interval: 50 },
    );
    const moved = (await browser.api("GET", "/api/queues/again.fifo/messages")).body.messages;
    expect(moved.map((m: { bodyText: string; messageGroupId: string }) => [m.bodyText, m.messageGroupId])).toEqual([
      ["m0", "g"],
      ["m1", "g"],
      ["m2", "g"],
    ]);
    const numbers: string[] = moved.map((m: { sequenceNumber: string }) => m.sequenceNumber);
    expect([...numbers].sort()).toEqual(numbers);
  });
});
