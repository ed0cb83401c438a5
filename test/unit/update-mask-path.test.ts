// update_mask's path grammar (AIP-161's map-key paths): a field, a field
// with a bare key, or a key in backticks with each backtick doubled; what it
// refuses; and the paths written for keys, which read back to the same key.
import { describe, expect, it } from "vitest";
import { mapKeyPath, parseUpdateMaskPath } from "../../src/protocol/update-mask-path.js";

describe("parseUpdateMaskPath", () => {
  it("reads a field, and a field with a bare key", () => {
    expect(parseUpdateMaskPath("tags")).toEqual({ field: "tags" });
    expect(parseUpdateMaskPath("tags.team")).toEqual({ field: "tags", key: "team" });
    expect(parseUpdateMaskPath("tags._a1")).toEqual({ field: "tags", key: "_a1" });
  });

  it("reads a key in backticks, with a doubled backtick as one", () => {
    expect(parseUpdateMaskPath("tags.`team-a`")).toEqual({ field: "tags", key: "team-a" });
    expect(parseUpdateMaskPath("tags.`a.b c`")).toEqual({ field: "tags", key: "a.b c" });
    expect(parseUpdateMaskPath("tags.`team`")).toEqual({ field: "tags", key: "team" });
    expect(parseUpdateMaskPath("tags.`a``b`")).toEqual({ field: "tags", key: "a`b" });
    expect(parseUpdateMaskPath("tags.````")).toEqual({ field: "tags", key: "`" });
    expect(parseUpdateMaskPath("tags.`a```")).toEqual({ field: "tags", key: "a`" });
    expect(parseUpdateMaskPath("tags.``")).toEqual({ field: "tags", key: "" });
    expect(parseUpdateMaskPath("tags.`ключ ✓`")).toEqual({ field: "tags", key: "ключ ✓" });
  });

  it("refuses an empty or non-identifier bare key, a lone backtick, and anything after the closing one", () => {
    const bad = [
      "tags.",
      "tags.team-a",
      "tags.1a",
      "tags.a.b",
      "tags.`a",
      "tags.a`",
      "tags.`",
      "tags.```",
      "tags.`a`b`",
      "tags.`a``",
      "tags.`a`.b",
      "tags.`a` ",
    ];
    for (const path of bad) expect(parseUpdateMaskPath(path), path).toBeUndefined();
  });
});

describe("mapKeyPath", () => {
  it("writes a simple key bare and any other in backticks, each reading back to its key", () => {
    expect(mapKeyPath("tags", "team")).toBe("tags.team");
    expect(mapKeyPath("tags", "team-a")).toBe("tags.`team-a`");
    expect(mapKeyPath("tags", "a`b")).toBe("tags.`a``b`");
    for (const key of ["team", "team-a", "a`b", "`", "``x``", "", "a.b", "__proto__", "1", " "]) {
      expect(parseUpdateMaskPath(mapKeyPath("tags", key))).toEqual({ field: "tags", key });
    }
  });
});
