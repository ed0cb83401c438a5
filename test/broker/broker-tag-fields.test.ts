// UpdateQueue naming single tags (AIP-161's tags.<key>) in the rules: each
// named tag is set from the input or removed when the input lacks it, other
// tags and fields stay, concurrent changes of different tags all survive,
// and the tag limits are checked on the merged tags.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { expectFailure, openBrokerHarness, type BrokerHarness } from "./broker-harness.js";

describe("updateQueue with single tags", () => {
  let h: BrokerHarness;
  beforeEach(async () => {
    h = await openBrokerHarness();
    await h.broker.createQueue("work", { tags: { team: "a", env: "dev" }, maxInFlight: 10 });
  });
  afterEach(async () => {
    expect(h.backgroundErrors).toEqual([]);
    await h.dispose();
  });

  it("sets a named tag, removes one the input lacks, and keeps the others and the rest, across a restart", async () => {
    await h.broker.updateQueue("work", { tags: { env: "prod", other: "ignored" }, maxInFlight: 99 }, [
      { tag: "env" },
      { tag: "team" },
      { tag: "new-one" },
    ]);
    const expected = { env: "prod" };
    expect(h.broker.getQueue("work").config.tags).toEqual(expected);
    await h.broker.updateQueue("work", { tags: { "a`b": "1", __proto__x: "2" } }, [{ tag: "a`b" }]);
    expect(h.broker.getQueue("work").config.tags).toEqual({ ...expected, "a`b": "1" });
    await h.restart();
    expect(h.broker.getQueue("work").config).toMatchObject({ tags: { env: "prod", "a`b": "1" }, maxInFlight: 10 });
  });

  it('keeps a tag named "__proto__" a tag', async () => {
    const tags = Object.fromEntries([["__proto__", "x"]]);
    await h.broker.updateQueue("work", { tags }, [{ tag: "__proto__" }]);
    expect(Object.entries(h.broker.getQueue("work").config.tags)).toContainEqual(["__proto__", "x"]);
    await h.broker.updateQueue("work", {}, [{ tag: "__proto__" }]);
    expect(Object.keys(h.broker.getQueue("work").config.tags).sort()).toEqual(["env", "team"]);
  });

  it("checks the 50-tag limit and key and value bounds on the merged tags, and changes nothing then", async () => {
    await expectFailure(
      () => h.broker.updateQueue("work", { tags: { "": "v" } }, [{ tag: "" }]),
      "INVALID_ARGUMENT",
      'config.tags[""]',
    );
    await expectFailure(
      () => h.broker.updateQueue("work", { tags: { team: "v".repeat(257) } }, [{ tag: "team" }]),
      "INVALID_ARGUMENT",
      'config.tags["team"]',
    );
    const fortyEight = Object.fromEntries(Array.from({ length: 48 }, (_, i) => [`k${i}`, "v"]));
    await h.broker.updateQueue(
      "work",
      { tags: fortyEight },
      Object.keys(fortyEight).map((tag) => ({ tag })),
    );
    expect(Object.keys(h.broker.getQueue("work").config.tags)).toHaveLength(50);
    await expectFailure(
      () => h.broker.updateQueue("work", { tags: { one: "more" } }, [{ tag: "one" }]),
      "INVALID_ARGUMENT",
      "config.tags",
    );
    expect(h.broker.getQueue("work").config.tags).not.toHaveProperty("one");
    // Replacing a tag or removing one and adding another stays within the limit.
    await h.broker.updateQueue("work", { tags: { k0: "w", one: "more" } }, [
      { tag: "k0" },
      { tag: "k1" },
      { tag: "one" },
    ]);
    expect(h.broker.getQueue("work").config.tags).toMatchObject({ k0: "w", one: "more" });
    // Removing a key that cannot exist is no error.
    await h.broker.updateQueue("work", {}, [{ tag: "" }, { tag: "x".repeat(200) }]);
    expect(Object.keys(h.broker.getQueue("work").config.tags)).toHaveLength(50);
  });

  it("lets many changes of different tags at once all survive", async () => {
    const keys = Array.from({ length: 40 }, (_, i) => `t${i}`);
    await Promise.all([
      ...keys.map((key) => h.broker.updateQueue("work", { tags: { [key]: key } }, [{ tag: key }])),
      h.broker.updateQueue("work", {}, [{ tag: "team" }]),
      h.broker.updateQueue("work", { maxInFlight: 20 }, ["maxInFlight"]),
    ]);
    const { tags, maxInFlight } = h.broker.getQueue("work").config;
    expect(tags).toEqual({ env: "dev", ...Object.fromEntries(keys.map((key) => [key, key])) });
    expect(maxInFlight).toBe(20);
  });
});
