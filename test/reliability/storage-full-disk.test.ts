// Storage faults, for real: the broker's data directory on a small tmpfs
// that a filler file fills up. Sends fail with UNAVAILABLE
// STORAGE_UNAVAILABLE saying no space is left; once the filler is deleted
// the broker recovers by itself, and every message it answered OK for can
// be received, also after a restart. Needs root (to mount): skipped
// locally without it, but CI runs as root and fails rather than skip.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, statfsSync } from "node:fs";
import { rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createQueueServiceRpc, type QueueServiceRpc } from "../../src/client/rpc-client.js";
import { RpcError } from "../../src/client/rpc-error.js";
import { startHoldshelfServer, type HoldshelfServer } from "../../src/server/holdshelf-server.js";
import { drainBodies, healthOf, recordingLogger, ServingStatus, waitFor } from "./storage-fault-support.js";

// Small enough to fill in a second, large enough for LevelDB to open and write.
const tmpfsSize = "16m";
// Room left after the filler: a few dozen sends' worth.
const headroomBytes = 256 * 1024;
const bodyBytes = 4096;
const recoveryBoundMs = 15_000;

/** Mounts a tmpfs on a new directory; the error why not, if it cannot (not root, no CAP_SYS_ADMIN). */
function mountTmpfs(): { path: string } | { error: string } {
  const path = mkdtempSync(join(tmpdir(), "holdshelf-full-disk-"));
  const mounted = spawnSync("mount", ["-t", "tmpfs", "-o", `size=${tmpfsSize}`, "tmpfs", path], { encoding: "utf8" });
  if (mounted.status === 0) return { path };
  rmSync(path, { recursive: true, force: true });
  return { error: (mounted.stderr || mounted.error?.message || `mount exited ${mounted.status}`).trim() };
}

function unmount(path: string): void {
  spawnSync("umount", [path]);
  rmSync(path, { recursive: true, force: true });
}

const mount = mountTmpfs();
const inCi = process.env.CI === "true";

describe.skipIf("error" in mount && !inCi)("storage faults (a really full filesystem)", () => {
  let server: HoldshelfServer;
  let rpc: QueueServiceRpc & { close(): void };
  const log = recordingLogger();
  const mountPath = "path" in mount ? mount.path : "";
  const dataDir = join(mountPath, "data");
  const filler = join(mountPath, "filler");
  const start = async () => {
    server = await startHoldshelfServer({ dataDir, listen: "127.0.0.1:0", logger: log.logger });
    rpc = createQueueServiceRpc(server.address);
  };
  const stop = async () => {
    rpc?.close();
    await server?.shutdown();
  };

  beforeAll(async () => {
    if ("error" in mount) throw new Error(`this test mounts a tmpfs and needs root: ${mount.error}`);
    await start();
    await rpc.createQueue({ name: "jobs" });
  });
  afterAll(async () => {
    await stop();
    if ("path" in mount) unmount(mount.path);
  });

  it("fails sends with UNAVAILABLE saying no space is left, recovers once space is freed, and loses nothing", async () => {
    const { bavail, bsize } = statfsSync(mountPath);
    await writeFile(filler, Buffer.alloc(Math.max(0, bavail * bsize - headroomBytes)));

    const acknowledged: string[] = [];
    let refused: RpcError | undefined;
    for (let i = 0; refused === undefined; i++) {
      expect(i, "sends kept succeeding on a full disk").toBeLessThan(10_000);
      const body = `${i}:`.padEnd(bodyBytes, "x");
      try {
        await rpc.send({ queue: "jobs", body: Buffer.from(body) });
        acknowledged.push(body);
      } catch (error) {
        refused = error as RpcError;
      }
    }
    expect(refused).toBeInstanceOf(RpcError);
    expect({ code: refused.code, reason: refused.reason }).toEqual({
      code: status.UNAVAILABLE,
      reason: "STORAGE_UNAVAILABLE",
    });
    expect(refused.message).toContain("ENOSPC: no space left on device");
    expect(refused.message).not.toContain(mountPath);
    expect(acknowledged.length).toBeGreaterThan(0);
    const errors = log.lines.filter((line) => line.level === "error").map((line) => line.msg);
    expect(errors).toEqual(["storage unavailable: refusing calls that need it until writes succeed again"]);

    // While the disk stays full, the recovery's attempts fail (LevelDB cannot even reopen): still down.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await healthOf(server.address)).toBe(ServingStatus.NOT_SERVING);
    const stillRefused = await rpc.send({ queue: "jobs", body: Buffer.from("x") }).catch((error: unknown) => error);
    expect(stillRefused).toMatchObject({ code: status.UNAVAILABLE, reason: "STORAGE_UNAVAILABLE" });

    await rm(filler);
    const recoveredInMs = await waitFor(
      async () => (await healthOf(server.address)) === ServingStatus.SERVING && server.broker.suspended === false,
      recoveryBoundMs,
      "the broker to recover after the filler was deleted",
    );
    console.log(
      `full disk: ${acknowledged.length} sends answered OK before ENOSPC; serving again ${recoveredInMs} ms after the filler was deleted`,
    );
    expect(log.lines.filter((line) => line.level === "error")).toHaveLength(1);
    expect(log.lines.filter((line) => line.msg === "storage available again")).toHaveLength(1);
    for (let i = 0; i < 5; i++) {
      const body = `after-${i}`;
      await rpc.send({ queue: "jobs", body: Buffer.from(body) });
      acknowledged.push(body);
    }

    await stop();
    await start();
    expect((await drainBodies(rpc, "jobs")).sort()).toEqual([...acknowledged].sort());
  });
});
