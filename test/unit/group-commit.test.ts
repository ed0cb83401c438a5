// GroupCommit: commits that arrive together share one write, and what it
// tells its observer about each batch, written or failed.
import { describe, expect, it } from "vitest";
import { GroupCommit } from "../../src/store/group-commit.js";

describe("GroupCommit", () => {
  it("writes commits made in one turn as one batch, and reports its size and time", async () => {
    const batches: number[][] = [];
    const observed: [number, number][] = [];
    const group = new GroupCommit<number>(async (ops) => void batches.push(ops), {
      written: (seconds, commits) => void observed.push([seconds, commits]),
      failed: () => expect.fail("no batch fails"),
    });
    await Promise.all([group.commit([1]), group.commit([2, 3]), group.commit([4])]);
    expect(batches).toEqual([[1, 2, 3, 4]]);
    expect(observed).toHaveLength(1);
    expect(observed[0]![1]).toBe(3);
    expect(observed[0]![0]).toBeGreaterThanOrEqual(0);
  });

  it("rejects every commit of a failed batch and reports the failure once, then refuses commits until resumed", async () => {
    const failures: [unknown, number][] = [];
    const refused = new Error("disk full");
    let fail = true;
    const group = new GroupCommit<number>(
      async () => {
        if (fail) throw refused;
      },
      { written: () => undefined, failed: (error, commits) => void failures.push([error, commits]) },
    );
    const results = await Promise.allSettled([group.commit([1]), group.commit([2])]);
    expect(results.map((result) => result.status)).toEqual(["rejected", "rejected"]);
    expect(failures).toEqual([[refused, 2]]);
    fail = false;
    // Fail-stop: a later batch may build on what the failed one never wrote.
    await expect(group.commit([3])).rejects.toBe(refused);
    expect(group.stoppedBy).toBe(refused);
    group.resume();
    expect(group.stoppedBy).toBeUndefined();
    await expect(group.commit([4])).resolves.toBeUndefined();
    expect(failures).toHaveLength(1);
  });

  it("refuses, unwritten, the commits that queued behind a failed batch", async () => {
    const written: number[][] = [];
    let release: () => void = () => undefined;
    let calls = 0;
    const group = new GroupCommit<number>(async (ops) => {
      calls++;
      if (calls === 1) {
        await new Promise<void>((resolve) => (release = resolve));
        throw new Error("disk full");
      }
      written.push(ops);
    });
    const first = group.commit([1]);
    await new Promise((resolve) => setImmediate(resolve));
    // Queued while the first batch is being written: they would share the next one.
    const behind = [group.commit([2]), group.commit([3])];
    release();
    const results = await Promise.allSettled([first, ...behind]);
    expect(results.map((result) => result.status)).toEqual(["rejected", "rejected", "rejected"]);
    expect(written).toEqual([]);
    expect(group.stats.batches).toBe(1);
  });

  it("an empty commit is a barrier: it waits for the batches already asked for, writes nothing, and shares their failure", async () => {
    const batches: number[][] = [];
    let release!: () => void;
    let fail = false;
    const group = new GroupCommit<number>(async (ops) => {
      batches.push(ops);
      await new Promise<void>((resolve) => (release = resolve));
      if (fail) throw new Error("disk full");
    });
    // Idle: nothing before it, so it answers at once without a write.
    await group.commit([]);
    expect(batches).toEqual([]);

    const first = group.commit([1]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(batches).toEqual([[1]]);
    let barrierDone = false;
    const barrier = group.commit([]).then(() => (barrierDone = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(barrierDone).toBe(false);
    release();
    await Promise.all([first, barrier]);
    expect(barrierDone).toBe(true);
    expect(batches).toEqual([[1]]);
    expect(group.stats).toEqual({ batches: 1, commits: 1 });

    fail = true;
    const failing = group.commit([2]);
    await new Promise((resolve) => setImmediate(resolve));
    const behindFailure = group.commit([]);
    release();
    await expect(failing).rejects.toThrow("disk full");
    await expect(behindFailure).rejects.toThrow("disk full");
  });
});
