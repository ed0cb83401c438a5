// The assignment of shards to live brokers: the same for every broker that
// sees the same members, even, and stable when one joins or leaves; and the
// moves a broker makes towards it.
import { describe, expect, it } from "vitest";
import { assignShards, planShardMoves } from "../../src/cluster/shard-assignment.js";

function counts(owners: readonly string[]): Record<string, number> {
  const result: Record<string, number> = {};
  for (const owner of owners) result[owner] = (result[owner] ?? 0) + 1;
  return result;
}

function moved(before: readonly string[], after: readonly string[]): number {
  return before.filter((owner, shard) => owner !== after[shard]).length;
}

describe("assignShards", () => {
  it("gives every shard to one member, none over ceil(shards / members)", () => {
    for (const members of [["a"], ["a", "b"], ["a", "b", "c"], ["n1", "n2", "n3", "n4", "n5"]]) {
      for (const shardCount of [1, 7, 8, 128, 1000]) {
        const owners = assignShards(members, shardCount);
        expect(owners).toHaveLength(shardCount);
        const cap = Math.ceil(shardCount / members.length);
        for (const count of Object.values(counts(owners))) expect(count).toBeLessThanOrEqual(cap);
        for (const owner of owners) expect(members).toContain(owner);
      }
    }
    expect(counts(assignShards(["a", "b", "c"], 128))).toEqual({ a: 42, b: 43, c: 43 });
  });

  it("answers the same whatever the order the members were read in", () => {
    expect(assignShards(["c", "a", "b"].sort(), 128)).toEqual(assignShards(["a", "b", "c"], 128));
  });

  it("moves little more than the joining or leaving member's share", () => {
    const two = [...assignShards(["a", "b"], 128)];
    const three = [...assignShards(["a", "b", "c"], 128)];
    // c's share is 42 or 43; a few more move to keep the split even.
    expect(moved(two, three)).toBeLessThanOrEqual(50);
    expect(moved(three, [...assignShards(["a", "c"], 128)])).toBeLessThanOrEqual(50);
    // Nothing moves between the members that stay, beyond evening out.
    const four = [...assignShards(["n1", "n2", "n3", "n4"], 128)];
    const five = [...assignShards(["n1", "n2", "n3", "n4", "n5"], 128)];
    expect(moved(four, five)).toBeLessThanOrEqual(32);
  });

  it("assigns nothing without members", () => {
    expect(assignShards([], 8)).toEqual([]);
  });
});

describe("planShardMoves", () => {
  const view = (members: Record<string, string>, owners: (string | undefined)[]) => ({
    members: new Map(Object.entries(members)),
    owners,
  });

  it("claims its assigned shards that are free or held by a member that is not live, and nothing else", () => {
    const assigned = assignShards(["a", "b"], 8);
    const owners = assigned.map((owner, shard) => (owner === "a" ? (shard % 2 === 0 ? undefined : "dead") : "b"));
    const plan = planShardMoves(view({ a: "a:1", b: "b:1" }, owners), "a", () => false);
    expect(plan.claim).toEqual(assigned.flatMap((owner, shard) => (owner === "a" ? [shard] : [])));
    expect(plan.release).toEqual([]);
  });

  it("leaves its assigned shards to a live holder, which hands them over first", () => {
    const assigned = assignShards(["a", "b"], 8);
    const plan = planShardMoves(
      view(
        { a: "a:1", b: "b:1" },
        assigned.map(() => "b"),
      ),
      "a",
      () => false,
    );
    expect(plan).toEqual({ claim: [], release: [] });
    const handover = planShardMoves(
      view(
        { a: "a:1", b: "b:1" },
        assigned.map(() => "b"),
      ),
      "b",
      () => true,
    );
    expect(handover.release).toEqual(assigned.flatMap((owner, shard) => (owner === "a" ? [shard] : [])));
  });

  it("counts itself live even when its heartbeat is stale", () => {
    const plan = planShardMoves(view({}, new Array<string | undefined>(4).fill(undefined)), "a", () => false);
    expect(plan.claim).toEqual([0, 1, 2, 3]);
  });
});
