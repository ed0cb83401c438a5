import { once } from "node:events";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startConsoleListener, type ConsoleListener } from "../../src/console/console-listener.js";
import type { AdminServiceHandlers } from "../../src/service/admin-service-handlers.js";
import { QueueHistory } from "../../src/console/queue-history.js";
import type { QueueHandlers } from "../../src/service/queue-calls.js";
import { silentLogger } from "../../src/logging/logger.js";
import { startHoldshelfServer } from "../../src/server/holdshelf-server.js";
import { systemClock } from "../../src/time/clock.js";
import { makeTempDir } from "../support/temp-dir.js";

describe("the console's refusals at start and without its built page", () => {
  let listener: ConsoleListener | undefined;
  let blocker: Server | undefined;
  afterEach(async () => {
    await listener?.close();
    listener = undefined;
    blocker?.close();
    blocker = undefined;
  });

  it("answers 503 with the command to run when the page was never built, and still serves its API", async () => {
    listener = await startConsoleListener({
      listen: "127.0.0.1:0",
      // Never called: the session route answers without the broker.
      handlers: {} as QueueHandlers,
      admin: {} as AdminServiceHandlers,
      assets: undefined,
      history: new QueueHistory(),
      maxRequestBytes: 1024,
      logger: silentLogger,
      clock: systemClock,
    });
    const page = await fetch(listener.url);
    expect(page.status).toBe(503);
    expect(await page.text()).toContain("npm run build");
    expect((await fetch(new URL("/api/session", listener.url))).status).toBe(200);
  });

  it("fails the broker's start, naming the address, when the console's port is taken, and leaves nothing listening", async () => {
    blocker = createServer();
    blocker.listen(0, "127.0.0.1");
    await once(blocker, "listening");
    const taken = `127.0.0.1:${(blocker.address() as { port: number }).port}`;
    const dir = await makeTempDir();
    try {
      await expect(
        startHoldshelfServer({ dataDir: join(dir.path, "data"), listen: "127.0.0.1:0", consoleListen: taken }),
      ).rejects.toThrow(`cannot listen on ${taken} for the console: EADDRINUSE`);
      // The store was closed on the way out: a broker opens the same data directory at once.
      const again = await startHoldshelfServer({ dataDir: join(dir.path, "data"), listen: "127.0.0.1:0" });
      await again.shutdown();
    } finally {
      await dir.remove();
    }
  });
});
