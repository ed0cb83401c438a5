// UpdateQueue with fields named (AIP-134's update mask) in the rules: only
// those fields change, a named field left out takes its default, the merge
// reads the configuration as it stands when the change is taken (so two
// updates of different fields at once both survive), and every refusal.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { defaultQueueConfig, defaultQueueLimits } from "../../src/broker/queue-config.js";
import { expectFailure, openBrokerHarness, type BrokerHarness } from "./broker-harness.js";

const redrive = { deadLetterQueue: "dlq", maxReceiveCount: 3 };

describe("updateQueue with fields", () => {
  let h: BrokerHarness;
  beforeEach(async () => {
    h = await openBrokerHarness();
    await h.broker.createQueue("dlq");
    await h.broker.createQueue("work", { redrivePolicy: redrive, tags: { team: "a" }, maxInFlight: 10 });
  });
  afterEach(async () => {
    expect(h.backgroundErrors).toEqual([]);
    await h.dispose();
  });

  it("changes only the named fields and keeps the redrive policy, across a restart", async () => {
    const updated = await h.broker.updateQueue("work", { visibilityTimeoutMs: 60_000, delayMs: 5000 }, [
      "visibilityTimeoutMs",
    ]);
    const expected = {
      ...defaultQueueConfig,
      visibilityTimeoutMs: 60_000,
      redrivePolicy: redrive,
      tags: { team: "a" },
      maxInFlight: 10,
    };
    expect(updated.config).toEqual(expected);
    await h.restart();
    expect(h.broker.getQueue("work").config).toEqual(expected);
  });

  it("gives a named field left unset its default, and replaces a named policy or tags whole", async () => {
    await h.broker.updateQueue("work", {}, ["redrivePolicy", "maxInFlight"]);
    expect(h.broker.getQueue("work").config).toEqual({ ...defaultQueueConfig, tags: { team: "a" } });
    await h.broker.updateQueue("work", { tags: { env: "prod" } }, ["tags"]);
    expect(h.broker.getQueue("work").config.tags).toEqual({ env: "prod" });
  });

  it("replaces the whole configuration without fields, as before", async () => {
    await h.broker.updateQueue("work", { visibilityTimeoutMs: 60_000 });
    expect(h.broker.getQueue("work").config).toEqual({ ...defaultQueueConfig, visibilityTimeoutMs: 60_000 });
  });

  it("checks the merged configuration: a bound that depends on a field kept", async () => {
    await h.broker.updateQueue("work", { maxLeaseDurationMs: 60_000 }, ["maxLeaseDurationMs"]);
    await expectFailure(
      () => h.broker.updateQueue("work", { visibilityTimeoutMs: 61_000 }, ["visibilityTimeoutMs"]),
      "INVALID_ARGUMENT",
      "config.visibility_timeout",
    );
    await expectFailure(
      () => h.broker.updateQueue("work", { retentionMs: 1 }, ["retentionMs"]),
      "INVALID_ARGUMENT",
      "config.retention",
    );
    expect(h.broker.getQueue("work").config.visibilityTimeoutMs).toBe(defaultQueueLimits.visibilityTimeoutMs);
  });

  it("refuses a change of kind by fifo named, and FIFO settings named on a standard queue", async () => {
    await expectFailure(
      () => h.broker.updateQueue("work", { fifo: true }, ["fifo"]),
      "INVALID_ARGUMENT",
      "config.fifo",
    );
    await expectFailure(
      () => h.broker.updateQueue("work", { contentBasedDeduplication: true }, ["contentBasedDeduplication"]),
      "INVALID_ARGUMENT",
      "config.content_based_deduplication",
    );
    // fifo named with the kind the queue has is no change.
    await h.broker.updateQueue("work", { fifo: false, delayMs: 1000 }, ["fifo", "delayMs"]);
    expect(h.broker.getQueue("work").config.delayMs).toBe(1000);
  });

  it("keeps a FIFO queue's kind and settings when fifo is not named, and resets a named FIFO setting", async () => {
    await h.broker.createQueue("f.fifo", {
      fifo: true,
      contentBasedDeduplication: true,
      deduplicationScope: "messageGroup",
    });
    await h.broker.updateQueue("f.fifo", { delayMs: 2000 }, ["delayMs"]);
    expect(h.broker.getQueue("f.fifo").config.fifo).toEqual({
      contentBasedDeduplication: true,
      deduplicationScope: "messageGroup",
    });
    await h.broker.updateQueue("f.fifo", {}, ["deduplicationScope"]);
    expect(h.broker.getQueue("f.fifo").config.fifo).toEqual({
      contentBasedDeduplication: true,
      deduplicationScope: "queue",
    });
    await expectFailure(
      () => h.broker.updateQueue("f.fifo", { fifo: false }, ["fifo"]),
      "INVALID_ARGUMENT",
      "config.fifo",
    );
  });

  it("checks a named redrive policy's dead-letter queue, and not a kept one's", async () => {
    await expectFailure(
      () => h.broker.updateQueue("work", { redrivePolicy: { ...redrive, deadLetterQueue: "nope" } }, ["redrivePolicy"]),
      "DEAD_LETTER_QUEUE_NOT_FOUND",
      "config.redrive_policy.dead_letter_queue",
    );
    await expectFailure(
      () => h.broker.updateQueue("work", { redrivePolicy: { ...redrive, deadLetterQueue: "work" } }, ["redrivePolicy"]),
      "INVALID_ARGUMENT",
      "config.redrive_policy.dead_letter_queue",
    );
    // A policy the mask leaves out is not read, so it cannot fail.
    await h.broker.updateQueue("work", { redrivePolicy: { ...redrive, deadLetterQueue: "nope" }, delayMs: 1 }, [
      "delayMs",
    ]);
    expect(h.broker.getQueue("work").config.redrivePolicy).toEqual(redrive);
  });

  it("refuses an unknown queue and a malformed name", async () => {
    await expectFailure(() => h.broker.updateQueue("nope", {}, ["delayMs"]), "QUEUE_NOT_FOUND");
    await expectFailure(() => h.broker.updateQueue("bad name", {}, ["delayMs"]), "INVALID_ARGUMENT", "name");
  });

  it("writes nothing when the store fails, and the next change merges into what is stored", async () => {
    h.writeFault.inject(new Error("disk full"));
    await expect(h.broker.updateQueue("work", { delayMs: 1000 }, ["delayMs"])).rejects.toThrow();
    h.writeFault.inject(undefined);
    await h.restart();
    await h.broker.updateQueue("work", { maxInFlight: 20 }, ["maxInFlight"]);
    expect(h.broker.getQueue("work").config).toMatchObject({ delayMs: 0, maxInFlight: 20, redrivePolicy: redrive });
  });

  it("lets two updates of different fields at once both survive, round after round", async () => {
    for (let round = 1; round <= 50; round++) {
      // Neither awaits the other: the second is taken while the first is being written.
      const [first, second] = await Promise.all([
        h.broker.updateQueue("work", { visibilityTimeoutMs: round * 1000 }, ["visibilityTimeoutMs"]),
        h.broker.updateQueue("work", { tags: { round: String(round) } }, ["tags"]),
      ]);
      expect(first.config.visibilityTimeoutMs).toBe(round * 1000);
      expect(second.config).toMatchObject({ visibilityTimeoutMs: round * 1000, tags: { round: String(round) } });
    }
    await h.restart();
    expect(h.broker.getQueue("work").config).toMatchObject({
      visibilityTimeoutMs: 50_000,
      tags: { round: "50" },
      redrivePolicy: redrive,
      maxInFlight: 10,
    });
  });
});
