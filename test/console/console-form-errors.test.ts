import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startConsoleHarness, type ConsoleBrowser, type ConsoleHarness } from "./console-harness.js";

// Issue #36 item 5: a form's refusal names every field at once, in the operator's words, with stable reasons;
// and durations read as the CLI reads them.
describe("the console's refusals of a queue's settings", () => {
  let h: ConsoleHarness;
  let browser: ConsoleBrowser;
  beforeAll(async () => {
    h = await startConsoleHarness();
    browser = h.browser();
    await browser.session();
  });
  afterAll(() => h.stop());

  it("names every field it cannot read at once, never in protobuf's decoder words", async () => {
    const refused = await browser.api("POST", "/api/queues", {
      name: "q",
      config: {
        visibilityTimeout: "soon",
        maxInFlight: "12o00",
        redrivePolicy: { deadLetterQueue: "dlq", maxReceiveCount: "" },
        retryPolicy: { minBackoff: 5 },
        tags: { team: 7 },
        fifo: "yes",
        deduplicationScope: "sometimes",
        colour: "red",
      },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error.reason).toBe("INVALID_ARGUMENT");
    expect(refused.body.error.fields).toEqual([
      {
        field: "config.visibility_timeout",
        reason: "NOT_A_DURATION",
        message: expect.stringMatching(/^must be a duration such as 30 \(seconds\)/),
      },
      { field: "config.max_in_flight", reason: "NOT_A_WHOLE_NUMBER", message: "must be a whole number" },
      {
        field: "config.redrive_policy.max_receive_count",
        reason: "REQUIRED",
        message: "is empty: enter a whole number",
      },
      { field: "config.retry_policy.min_backoff", reason: "NOT_A_DURATION", message: expect.any(String) },
      { field: 'config.tags["team"]', reason: "WRONG_TYPE", message: "must be text" },
      { field: "config.fifo", reason: "WRONG_TYPE", message: "must be true or false" },
      {
        field: "config.deduplication_scope",
        reason: "NOT_A_CHOICE",
        message: expect.stringContaining("DEDUPLICATION_SCOPE_QUEUE"),
      },
      { field: "config.colour", reason: "UNKNOWN_FIELD", message: "is not a queue setting" },
    ]);
    // No decoder text anywhere in the answer.
    expect(JSON.stringify(refused.body)).not.toMatch(/expected|int32|cannot decode|holdshelf\.v1/);
    expect(refused.body.error.message).toMatch(
      /^config\.visibility_timeout: must be a duration.*; config\.max_in_flight: /,
    );
    expect((await browser.api("GET", "/api/queues")).body.queues).toEqual([]);
  });

  it("passes on every field the broker refuses at once, each with the broker's reason", async () => {
    const refused = await browser.api("POST", "/api/queues", {
      name: "bad name",
      config: { visibilityTimeout: "1d", retention: "30s", maxInFlight: -1 },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error.fields).toEqual([
      { field: "name", reason: "INVALID_ARGUMENT", message: expect.stringContaining("1 to 80 characters") },
      { field: "config.retention", reason: "INVALID_ARGUMENT", message: "must be between 60s and 1209600s" },
      { field: "config.max_in_flight", reason: "INVALID_ARGUMENT", message: "must be between 1 and 1000000" },
      { field: "config.visibility_timeout", reason: "INVALID_ARGUMENT", message: "must be between 0s and 43200s" },
    ]);
  });

  it("names every refused field of a settings update, with an update mask too", async () => {
    await browser.api("POST", "/api/queues", { name: "settings" });
    const refused = await browser.api("PUT", "/api/queues/settings", {
      config: { maxInFlight: -1, delay: "20d" },
      fields: ["max_in_flight", "delay"],
    });
    expect(refused.body.error.fields.map((f: { field: string }) => f.field)).toEqual([
      "config.max_in_flight",
      "config.delay",
    ]);
  });

  it("reads durations as the CLI does: a bare number is seconds, and units combine", async () => {
    const created = await browser.api("POST", "/api/queues", {
      name: "durations",
      config: {
        visibilityTimeout: "30",
        retention: "1h30m",
        delay: "500ms",
        maxLeaseDuration: "2d",
        retryPolicy: { minBackoff: "1m 30s", maxBackoff: "0.5h" },
        maxInFlight: "250",
      },
    });
    expect(created.status).toBe(200);
    expect(created.body.queue.config).toMatchObject({
      visibilityTimeout: "30s",
      retention: "5400s",
      delay: "0.500s",
      maxLeaseDuration: "172800s",
      retryPolicy: { minBackoff: "90s", maxBackoff: "1800s" },
      maxInFlight: 250,
    });
  });
});
