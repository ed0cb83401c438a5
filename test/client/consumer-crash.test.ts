import { spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startGrpcHarness, type GrpcHarness } from "../support/grpc-harness.js";

const consumerScript = fileURLToPath(new URL("../fixtures/consume-and-hang.mjs", import.meta.url));

describe("a Consumer process that crashes", () => {
  let h: GrpcHarness;
  beforeEach(async () => {
    h = await startGrpcHarness();
    await h.rpc.createQueue({ name: "jobs", config: { visibilityTimeout: durationFromMs(30_000) } });
  });
  afterEach(async () => {
    await h.stop();
  });

  it("hands its message to another consumer within a second, not after its 30 s lease", async () => {
    const { messageId } = await h.rpc.send({ queue: "jobs", body: Buffer.from("job") });
    const worker = spawn(process.execPath, [consumerScript, h.server.address, "jobs"], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    const [line] = (await once(worker.stdout!, "data")) as [Buffer];
    expect(JSON.parse(line.toString())).toEqual({ working: messageId });
    // The consumer names a lease on its stream as soon as it holds it; give that renewal ample time to land.
    await new Promise((resolve) => setTimeout(resolve, 1000));

    worker.kill("SIGKILL");
    await once(worker, "exit");
    const started = performance.now();
    const { messages } = await h.rpc.receive({ queue: "jobs", waitTime: durationFromMs(5000) });
    expect(messages[0]?.messageId).toBe(messageId);
    expect(messages[0]?.receiveCount).toBe(2);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
