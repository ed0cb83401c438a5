// The storage recovery state machine on a fake clock: one outage per failed
// write, attempts on a doubling, capped backoff until one succeeds, one log
// line down and one up, and a stop that ends it all. Also the stable error
// it refuses calls with.
import { describe, expect, it } from "vitest";
import { HoldshelfError } from "../../src/errors/holdshelf-error.js";
import { StorageRecovery } from "../../src/server/storage-recovery.js";
import { isStorageUnavailable, storageUnavailable } from "../../src/store/storage-unavailable.js";
import { FakeClock } from "../support/fake-clock.js";
import { diskError, recordingLogger } from "./storage-fault-support.js";
import { settle } from "../support/wait.js";

/** Lets promise callbacks (an attempt's reopen and what follows) run. */

function recoveryRig() {
  const clock = new FakeClock();
  const log = recordingLogger();
  const suspended: HoldshelfError[] = [];
  const resumed: string[] = [];
  const attempts: number[] = [];
  let outcome: () => Promise<string> = () => Promise.reject(diskError("No space left on device"));
  let resumeFails = false;
  const recovery = new StorageRecovery<string>({
    clock,
    logger: log.logger,
    suspend: (error) => void suspended.push(error),
    reopen: () => {
      attempts.push(clock.now());
      return outcome();
    },
    resume: (loaded) => {
      if (resumeFails) throw new Error(`cannot rebuild from ${loaded}`);
      resumed.push(loaded);
    },
    initialBackoffMs: 100,
    maxBackoffMs: 1000,
  });
  return {
    clock,
    log,
    recovery,
    suspended,
    resumed,
    attempts,
    succeedWith(loaded: string) {
      outcome = () => Promise.resolve(loaded);
    },
    failResume(fails: boolean) {
      resumeFails = fails;
    },
    failWith(error: Error) {
      outcome = () => Promise.reject(error);
    },
    /** Makes the next attempts hang until the returned function finishes them. */
    hang(): (loaded: string) => void {
      let finish: (loaded: string) => void = () => undefined;
      const hanging = new Promise<string>((resolve) => (finish = resolve));
      outcome = () => hanging;
      return (loaded) => finish(loaded);
    },
  };
}

async function advance(clock: FakeClock, ms: number): Promise<void> {
  // One millisecond at a time would be slow; timers are at least 100 ms apart.
  for (let step = 0; step < ms; step += 50) {
    clock.advance(Math.min(50, ms - step));
    await settle();
  }
}

describe("StorageRecovery", () => {
  it("goes down once per outage, retries on a doubling backoff capped at the maximum, and comes back", async () => {
    const rig = recoveryRig();
    const start = rig.clock.now();
    rig.recovery.failed(diskError("No space left on device"));
    rig.recovery.failed(diskError("No space left on device"));
    expect(rig.recovery.available).toBe(false);
    expect(rig.suspended).toHaveLength(1);
    expect(rig.suspended[0]!.reason).toBe("STORAGE_UNAVAILABLE");
    expect(rig.suspended[0]!.message).toContain("ENOSPC");

    await advance(rig.clock, 4000);
    // 100, 200, 400, 800, then 1000 apart (capped).
    expect(rig.attempts.map((at) => at - start)).toEqual([100, 300, 700, 1500, 2500, 3500]);
    expect(rig.resumed).toEqual([]);

    rig.succeedWith("state from disk");
    await advance(rig.clock, 1000);
    expect(rig.resumed).toEqual(["state from disk"]);
    expect(rig.recovery.available).toBe(true);
    const levels = rig.log.lines.map((line) => `${line.level} ${line.msg}`);
    expect(levels.filter((line) => !line.startsWith("debug"))).toEqual([
      "error storage unavailable: refusing calls that need it until writes succeed again",
      "info storage available again",
    ]);
    expect(levels.filter((line) => line.startsWith("debug"))).toHaveLength(6);
    expect(rig.log.lines.at(-1)).toMatchObject({ downSeconds: 4.5, attempts: 7 });
  });

  it("continues the backoff in an outage soon after the last, and starts over after a quiet minute", async () => {
    const rig = recoveryRig();
    rig.succeedWith("first");
    rig.recovery.failed(diskError("Input/output error"));
    await advance(rig.clock, 100);
    expect(rig.resumed).toEqual(["first"]);
    // Down again at once (a disk at the edge of full): the next attempt waits twice as long.
    let down = rig.clock.now();
    rig.recovery.failed(diskError("Input/output error"));
    expect(rig.suspended).toHaveLength(2);
    await advance(rig.clock, 200);
    expect(rig.resumed).toEqual(["first", "first"]);
    expect(rig.attempts.at(-1)! - down).toBe(200);
    await advance(rig.clock, 60_000);
    down = rig.clock.now();
    rig.succeedWith("later");
    rig.recovery.failed(diskError("Input/output error"));
    await advance(rig.clock, 100);
    expect(rig.resumed.at(-1)).toBe("later");
    expect(rig.attempts.at(-1)! - down).toBe(100);
  });

  it("logs a failed attempt at warn only when its cause changed", async () => {
    const rig = recoveryRig();
    rig.recovery.failed(diskError("No space left on device"));
    await advance(rig.clock, 100);
    rig.failWith(diskError("Permission denied"));
    await advance(rig.clock, 200);
    await advance(rig.clock, 400);
    const attempts = rig.log.lines.filter((line) => line.msg === "storage recovery attempt failed");
    expect(attempts.map((line) => [line.level, (line as { reason?: string }).reason?.slice(0, 35)])).toEqual([
      ["debug", "storage write failed (ENOSPC: no sp"],
      ["warn", "storage write failed (EACCES: permi"],
      ["debug", "storage write failed (EACCES: permi"],
    ]);
  });

  it("counts a memory that cannot be rebuilt as a failed attempt, and tries again", async () => {
    const rig = recoveryRig();
    rig.succeedWith("loaded");
    rig.failResume(true);
    rig.recovery.failed(diskError("Input/output error"));
    await advance(rig.clock, 100);
    expect(rig.recovery.available).toBe(false);
    expect(rig.log.lines.at(-1)).toMatchObject({ level: "warn", msg: "storage recovery attempt failed" });
    rig.failResume(false);
    await advance(rig.clock, 200);
    expect(rig.resumed).toEqual(["loaded"]);
    expect(rig.recovery.available).toBe(true);
  });

  it("stops: no attempt after stop, and an attempt under way does not resume", async () => {
    const rig = recoveryRig();
    rig.recovery.failed(diskError("Input/output error"));
    await advance(rig.clock, 100);
    expect(rig.attempts).toHaveLength(1);
    const finishAttempt = rig.hang();
    await advance(rig.clock, 200);
    expect(rig.attempts).toHaveLength(2);
    const stopped = rig.recovery.stop();
    finishAttempt("too late");
    await stopped;
    expect(rig.resumed).toEqual([]);
    await advance(rig.clock, 5000);
    expect(rig.attempts).toHaveLength(2);
    // A failure after stop is ignored: the server is shutting down.
    rig.recovery.failed(diskError("Input/output error"));
    expect(rig.suspended).toHaveLength(1);
  });
});

describe("STORAGE_UNAVAILABLE", () => {
  it("names the cause by errno and words, never by path, and is sent as UNAVAILABLE", () => {
    const cases: [string, string][] = [
      ["No space left on device", "ENOSPC: no space left on device"],
      ["Disk quota exceeded", "EDQUOT: disk quota exceeded"],
      ["Read-only file system", "EROFS: read-only file system"],
      ["Input/output error", "EIO: input/output error"],
      ["Permission denied", "EACCES: permission denied"],
      ["Too many open files", "EMFILE: too many open files"],
      ["Corruption: bad block", "data corruption"],
      ["something new", "I/O error"],
    ];
    for (const [strerror, detail] of cases) {
      const error = storageUnavailable(diskError(strerror));
      expect(error.message).toBe(`storage write failed (${detail}); the broker is recovering, retry later`);
      expect(error.message).not.toContain("secret-path");
      expect(error.code).toBe(14);
      expect(isStorageUnavailable(error)).toBe(true);
    }
  });

  it("keeps the raw error as the cause and is not wrapped twice", () => {
    const raw = diskError("No space left on device");
    const error = storageUnavailable(raw);
    expect(error.cause).toBe(raw);
    expect(storageUnavailable(error)).toBe(error);
    expect(isStorageUnavailable(new HoldshelfError("SHUTTING_DOWN", "stopping"))).toBe(false);
    expect(storageUnavailable("not an Error").message).toContain("(I/O error)");
  });
});
