import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { HoldshelfError } from "../../src/errors/holdshelf-error.js";
import { createQueue, openBrokerHarness, type BrokerHarness } from "./broker-harness.js";

const second = 1000;

/** The error a call fails with; fails the test if it succeeds or fails otherwise. */
async function refusal(call: () => Promise<unknown>): Promise<HoldshelfError> {
  const error = await call().then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(HoldshelfError);
  return error as HoldshelfError;
}

// Issue #36: a form with several bad fields was refused one field at a time. Every bad field is named at once.
describe("a queue configuration with several bad fields", () => {
  let h: BrokerHarness;
  beforeEach(async () => {
    h = await openBrokerHarness();
  });
  afterEach(async () => {
    expect(h.backgroundErrors).toEqual([]);
    await h.dispose();
  });

  it("is refused at creation naming every field, the name among them, with one INVALID_ARGUMENT", async () => {
    const error = await refusal(() =>
      h.broker.createQueue("bad name", {
        retentionMs: 1,
        maxInFlight: 0,
        redrivePolicy: { deadLetterQueue: "dlq", maxReceiveCount: 0 },
        retryPolicy: { minBackoffMs: -1, maxBackoffMs: 0 },
        tags: { "": "x" },
        contentBasedDeduplication: true,
      }),
    );
    expect(error.reason).toBe("INVALID_ARGUMENT");
    expect(error.violations.map((v) => v.field)).toEqual([
      "name",
      "config.retention",
      "config.max_in_flight",
      "config.redrive_policy.max_receive_count",
      "config.retry_policy.min_backoff",
      "config.content_based_deduplication",
      'config.tags[""]',
    ]);
    // The message starts as a one-field refusal always read, and names the rest after it.
    expect(error.message).toMatch(/^name: must be 1 to 80 characters.*; config\.retention: must be between 60s and/);
  });

  it("checks a bound taken from another field only when that field is good", async () => {
    const error = await refusal(() =>
      h.broker.createQueue("q", { maxLeaseDurationMs: 0, visibilityTimeoutMs: 30 * second }),
    );
    // Not also "visibility_timeout must be between 0s and 0s".
    expect(error.violations.map((v) => v.field)).toEqual(["config.max_lease_duration"]);
  });

  it("is refused in a whole update and in a partial one, naming every field", async () => {
    await createQueue(h, "q");
    const whole = await refusal(() => h.broker.updateQueue("q", { maxInFlight: 0, delayMs: -1 }));
    expect(whole.violations.map((v) => v.field)).toEqual(["config.max_in_flight", "config.delay"]);
    const partial = await refusal(() =>
      h.broker.updateQueue("q", { maxInFlight: 0, receiveWaitTimeMs: -1 }, ["maxInFlight", "receiveWaitTimeMs"]),
    );
    expect(partial.violations.map((v) => v.field)).toEqual(["config.receive_wait_time", "config.max_in_flight"]);
  });

  it("keeps a one-field refusal's message as it was", async () => {
    const error = await refusal(() => h.broker.createQueue("q", { maxInFlight: 0 }));
    expect(error.message).toBe("config.max_in_flight: must be between 1 and 1000000");
    expect(error.violations).toEqual([{ field: "config.max_in_flight", description: "must be between 1 and 1000000" }]);
  });
});
