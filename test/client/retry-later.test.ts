import { describe, expect, it } from "vitest";
import { RetryLater, retryDelayOf } from "../../src/client/retry-later.js";

describe("the retry delay a handler's failure asks for", () => {
  it("is RetryLater's, or any thrown value's numeric retryDelayMs, in whole milliseconds", () => {
    expect(retryDelayOf(new RetryLater(1500))).toBe(1500);
    expect(retryDelayOf(Object.assign(new Error("busy"), { retryDelayMs: 10.2 }))).toBe(11);
    expect(retryDelayOf(new RetryLater(0)), "0 asks for a retry at once").toBe(0);
    expect(retryDelayOf(new RetryLater(-5)), "a negative delay is at once").toBe(0);
  });

  it("is undefined, leaving the queue's retry backoff, when the failure names none or names no number", () => {
    expect(retryDelayOf(new Error("boom"))).toBeUndefined();
    expect(retryDelayOf("a string")).toBeUndefined();
    expect(retryDelayOf(null)).toBeUndefined();
    expect(retryDelayOf({ retryDelayMs: "soon" })).toBeUndefined();
    expect(retryDelayOf({ retryDelayMs: Number.NaN })).toBeUndefined();
    expect(retryDelayOf({ retryDelayMs: Number.POSITIVE_INFINITY })).toBeUndefined();
  });
});
