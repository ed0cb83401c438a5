import { describe, expect, it } from "vitest";
import { parseDurationFlag } from "../../src/cli/duration-flag.js";
import { UsageError } from "../../src/cli/usage-error.js";
import { formatDuration, parseDuration } from "../../src/time/duration-text.js";

// The one duration parser of the CLI's flags and the console (issue #36: the console refused "30", which the CLI took as 30 s).
describe("parseDuration", () => {
  it.each([
    ["30", 30_000],
    ["0", 0],
    ["0.5", 500],
    [" 30 ", 30_000],
    ["500ms", 500],
    ["30s", 30_000],
    ["0.500s", 500],
    ["5m", 300_000],
    ["12h", 43_200_000],
    ["4d", 345_600_000],
    ["1.5h", 5_400_000],
    ["1h30m", 5_400_000],
    ["1m 30s", 90_000],
    ["1d2h3m4s5ms", 93_784_005],
    ["0.0004s", 0],
  ])("reads %j as %d ms", (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each([
    "",
    " ",
    "abc",
    "-1",
    "-5s",
    "30x",
    "s",
    "1e3",
    "30 s",
    "1h1h",
    "30m1h",
    "5s5m",
    ".5s",
    "1,5s",
    `1${"0".repeat(20)}`,
    `1${"0".repeat(20)}d`,
  ])("refuses %j", (text) => {
    expect(parseDuration(text)).toBeUndefined();
  });

  it("is what the CLI's flags read, and the CLI names its flag when it refuses", () => {
    expect(parseDurationFlag("1h30m", "visibility-timeout")).toBe(5_400_000);
    expect(parseDurationFlag("30", "visibility-timeout")).toBe(30_000);
    expect(() => parseDurationFlag("soon", "visibility-timeout")).toThrow(UsageError);
    expect(() => parseDurationFlag("soon", "visibility-timeout")).toThrow(/--visibility-timeout takes a duration/);
  });
});

describe("formatDuration", () => {
  it.each([
    [0, "0s"],
    [500, "500ms"],
    [1_500, "1s500ms"],
    [30_000, "30s"],
    [5_400_000, "1h30m"],
    [345_600_000, "4d"],
  ])("writes %d ms as %j, which parseDuration reads back", (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
    expect(parseDuration(text)).toBe(ms);
  });
});
