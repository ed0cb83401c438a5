import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startBrokerProcess, type BrokerProcess } from "../support/broker-process.js";
import { makeTempDir } from "../support/temp-dir.js";
import { ConsoleBrowser } from "./console-harness.js";

// `holdshelf serve` as `npm start` runs it: the console on its default address.
describe("holdshelf serve's console", () => {
  let broker: BrokerProcess | undefined;
  let dir: Awaited<ReturnType<typeof makeTempDir>> | undefined;
  afterEach(async () => {
    broker?.child.kill("SIGTERM");
    if (broker?.child.exitCode === null) await new Promise((resolve) => broker!.child.once("exit", resolve));
    broker = undefined;
    await dir?.remove();
  });

  it("serves the page on 127.0.0.1:9465 by default, logs its address, and lists the queues", async () => {
    dir = await makeTempDir();
    broker = await startBrokerProcess(join(dir.path, "data"), [], { consoleDefault: true });
    const line = JSON.parse(
      broker
        .logs()
        .split("\n")
        .find((text) => text.includes('"holdshelf listening"'))!,
    ) as Record<string, string>;
    expect(line["console"]).toBe("http://127.0.0.1:9465/");
    const page = await fetch(line["console"]!);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<div id="app"');
    const browser = new ConsoleBrowser(line["console"]!);
    await browser.session();
    expect((await browser.api("POST", "/api/queues", { name: "jobs" })).status).toBe(200);
    expect((await browser.api("GET", "/api/queues")).body.queues.map((q: { name: string }) => q.name)).toEqual([
      "jobs",
    ]);
  }, 30_000);

  it("turns off with --console-listen off, and says so", async () => {
    dir = await makeTempDir();
    broker = await startBrokerProcess(join(dir.path, "data"));
    const line = JSON.parse(
      broker
        .logs()
        .split("\n")
        .find((text) => text.includes('"holdshelf listening"'))!,
    ) as Record<string, string>;
    expect(line["console"]).toBe("off");
  }, 30_000);
});
