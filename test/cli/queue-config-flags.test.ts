import { describe, expect, it } from "vitest";
import { queueConfigFromFlags } from "../../src/cli/queue-config-flags.js";
import { UsageError } from "../../src/cli/usage-error.js";

describe("queue update's update_mask", () => {
  it("names only the settings given", () => {
    const { config, paths } = queueConfigFromFlags({ "visibility-timeout": "60s" }, "update");
    expect(paths).toEqual(["visibility_timeout"]);
    expect(config).toEqual({ visibilityTimeout: expect.objectContaining({ seconds: 60n }) });
  });

  it("maps each flag to its QueueConfig field", () => {
    const { paths } = queueConfigFromFlags(
      {
        delay: "1s",
        retention: "1d",
        "max-message-bytes": "2048",
        "receive-wait-time": "5s",
        "max-in-flight": "10",
        "max-lease-duration": "1h",
        "dead-letter-queue": "dlq",
        "max-receive-count": "3",
        "min-backoff": "1s",
        "max-backoff": "1m",
        tag: ["team=core"],
        fifo: true,
        "content-based-deduplication": true,
        "deduplication-scope": "message-group",
      },
      "update",
    );
    expect(paths).toEqual([
      "delay",
      "retention",
      "max_message_bytes",
      "receive_wait_time",
      "max_in_flight",
      "max_lease_duration",
      "redrive_policy",
      "retry_policy",
      "tags",
      "fifo",
      "content_based_deduplication",
      "deduplication_scope",
    ]);
  });

  it("removes a policy by naming it with nothing set", () => {
    expect(queueConfigFromFlags({ "no-dead-letter-queue": true, "no-retry-policy": true }, "update")).toEqual({
      config: {},
      paths: ["redrive_policy", "retry_policy"],
    });
    expect(queueConfigFromFlags({ "no-tags": true }, "update")).toEqual({ config: {}, paths: ["tags"] });
    expect(queueConfigFromFlags({ tag: ["a=1", "b="] }, "update").config).toEqual({ tags: { a: "1", b: "" } });
    expect(queueConfigFromFlags({ "no-content-based-deduplication": true }, "update")).toEqual({
      config: { contentBasedDeduplication: false },
      paths: ["content_based_deduplication"],
    });
  });

  it.each([
    [{}, "needs at least one setting"],
    [{ "dead-letter-queue": "dlq" }, "--dead-letter-queue and --max-receive-count go together"],
    [{ "max-receive-count": "3" }, "--dead-letter-queue and --max-receive-count go together"],
    [{ "min-backoff": "1s" }, "--min-backoff and --max-backoff go together"],
    [{ "no-dead-letter-queue": true, "dead-letter-queue": "dlq" }, "cannot go with"],
    [{ "no-retry-policy": true, "max-backoff": "1s" }, "cannot go with"],
    [{ "content-based-deduplication": true, "no-content-based-deduplication": true }, "cannot go with"],
    [{ "max-in-flight": "many" }, "--max-in-flight takes a whole number"],
    [{ tag: ["=x"] }, '--tag takes key=value, not "=x"'],
    [{ tag: ["a=1"], "no-tags": true }, "--no-tags cannot go with --tag"],
  ])("refuses %o as a usage error", (values, message) => {
    expect(() => queueConfigFromFlags(values, "update")).toThrow(UsageError);
    expect(() => queueConfigFromFlags(values, "update")).toThrow(message);
  });

  it("keeps create's whole configuration, without removals", () => {
    expect(queueConfigFromFlags({}, "create").config).toMatchObject({ fifo: false });
    expect(() => queueConfigFromFlags({ "no-retry-policy": true }, "create")).toThrow("is for queue update");
  });
});
