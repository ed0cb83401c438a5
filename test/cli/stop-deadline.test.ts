// The stop's outer bound: a broker whose stop hangs (a store that will not
// close) exits anyway, with status 1 and a log line saying why, so that an
// orchestrator's kill is never what ends it.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath, pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";

const compiled = fileURLToPath(new URL("../../dist/src/cli/stop-deadline.js", import.meta.url));
const loggerModule = fileURLToPath(new URL("../../dist/src/logging/logger.js", import.meta.url));

describe("the stop deadline", () => {
  it("exits a process that still runs at the deadline with status 1 and logs it, and holds none that ended", async () => {
    // A process that would run for a minute: its stop "hangs".
    const hung = spawn(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `const { armStopDeadline } = await import(${JSON.stringify(pathToFileURL(compiled).href)});
         const { createLogger } = await import(${JSON.stringify(pathToFileURL(loggerModule).href)});
         armStopDeadline(200, createLogger());
         setTimeout(() => undefined, 60_000);`,
      ],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    let stderr = "";
    hung.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const start = performance.now();
    const [code] = (await once(hung, "exit")) as [number];
    expect(code).toBe(1);
    expect(performance.now() - start).toBeLessThan(10_000);
    expect(stderr).toContain("the stop ran past its deadline: exiting without a clean close");

    // One whose work ends first exits by itself, with its own status: the deadline's timer holds nothing.
    const clean = spawn(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `const { armStopDeadline } = await import(${JSON.stringify(pathToFileURL(compiled).href)});
         const { createLogger } = await import(${JSON.stringify(pathToFileURL(loggerModule).href)});
         armStopDeadline(60_000, createLogger());`,
      ],
      { stdio: "ignore" },
    );
    const cleanStart = performance.now();
    const [cleanCode] = (await once(clean, "exit")) as [number];
    expect(cleanCode).toBe(0);
    expect(performance.now() - cleanStart).toBeLessThan(10_000);
  }, 30_000);
});
