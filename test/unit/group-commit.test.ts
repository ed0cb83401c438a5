// GroupCommit: commits that arrive together share one write, and what it
// tells its observer about each batch, written or failed.
import { describe, expect, it } from "vitest";
import { GroupCommit } from "../../src/store/group-commit.js";
import { FakeClock } from "../support/fake-clock.js";

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

  describe("lingering commits", () => {
    const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
    /** A group commit on a fake clock whose writes record their ops and finish when released. */
    const lingering = (): {
      group: GroupCommit<number>;
      batches: number[][];
      clock: FakeClock;
      finishWrite: () => void;
    } => {
      const batches: number[][] = [];
      const clock = new FakeClock();
      const pending: (() => void)[] = [];
      const group = new GroupCommit<number>(
        async (ops) => {
          batches.push(ops);
          await new Promise<void>((resolve) => pending.push(resolve));
        },
        undefined,
        clock,
      );
      return { group, batches, clock, finishWrite: () => pending.shift()?.() };
    };

    it("writes a lingering commit alone once its linger has run out, not before", async () => {
      const { group, batches, clock, finishWrite } = lingering();
      const written = group.commit([1], 20);
      await turn();
      clock.advance(19);
      await turn();
      expect(batches).toEqual([]);
      clock.advance(1);
      await turn();
      expect(batches).toEqual([[1]]);
      finishWrite();
      await written;
    });

    it("takes every lingering commit along with one that does not linger, at once", async () => {
      const { group, batches, finishWrite } = lingering();
      const commits = [group.commit([1], 20), group.commit([2], 20), group.commit([3])];
      await turn();
      expect(batches).toEqual([[1, 2, 3]]);
      finishWrite();
      await Promise.all(commits);
      expect(group.stats).toEqual({ batches: 1, commits: 3 });
    });

    it("starts lingering commits for a barrier, which resolves once they are written", async () => {
      const { group, batches, finishWrite } = lingering();
      const lingered = group.commit([1], 20);
      let barrierDone = false;
      const barrier = group.commit([]).then(() => (barrierDone = true));
      await turn();
      expect(batches).toEqual([[1]]);
      expect(barrierDone).toBe(false);
      finishWrite();
      await Promise.all([lingered, barrier]);
      expect(barrierDone).toBe(true);
    });

    it("lets a commit that arrived during a write linger after it, and starts at the earliest commit's time", async () => {
      const { group, batches, clock, finishWrite } = lingering();
      const first = group.commit([1]);
      await turn();
      expect(batches).toEqual([[1]]);
      const second = group.commit([2], 50);
      clock.advance(10);
      const third = group.commit([3], 20);
      finishWrite();
      await first;
      await turn();
      expect(batches).toEqual([[1]]);
      clock.advance(19);
      await turn();
      expect(batches).toEqual([[1]]);
      // The third's 20 ms, from 10 ms in, run out before the second's 50.
      clock.advance(1);
      await turn();
      expect(batches).toEqual([[1], [2, 3]]);
      finishWrite();
      await Promise.all([second, third]);
    });
  });
});
