// The Overview, Cluster and queue pages in Debian's Chromium on a cluster of
// three brokers over a real PostgreSQL: two owners sharing the shards, and
// the console on a third that owns none, so every queue it shows is served
// elsewhere, and its rates come from their owners. Ends with a hand-over
// the Cluster page reports. Screenshots in test-output/console/.
import { setTimeout as sleep } from "node:timers/promises";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { HoldshelfServer } from "../../../src/server/holdshelf-server.js";
import { createQueueServiceRpc } from "../../../src/client/rpc-client.js";
import { queueOn } from "../../support/cluster-brokers.js";
import { startPostgres, skipWithoutPostgres, type PostgresServer } from "../../support/postgres-server.js";
import { settledRoutes, startClusterMember } from "../../support/test-cluster.js";
import { ConsoleBrowser } from "../console-harness.js";
import { chartByCaption, isRateNear, rateOf, readAllSamples } from "./chart-readout.js";
import {
  docsScreenshot,
  launchChromium,
  openPage,
  screenshot,
  seriousViolations,
  skipWithoutChromium,
} from "./chromium-session.js";

const uiTimeoutMs = 20_000;
const testTimeoutMs = 120_000;
// Two seconds: the list's sparklines and the Overview's chart then span 60 s (30 samples), time enough to read them.
const sampleIntervalMs = 2_000;
const history = { sampleIntervalMs, samples: 300 };
const text = (body: string) => new TextEncoder().encode(body);

describe.skipIf(skipWithoutChromium || skipWithoutPostgres)(
  "the console's pages on a three-broker cluster, in Chromium",
  { timeout: testTimeoutMs },
  () => {
    const members = ["owner-1", "owner-2"];
    // A queue owner-1 serves: the console's broker (entry) serves none.
    const paced = queueOn("owner-1", members, "paced");
    const sent = 12;
    let postgres: PostgresServer;
    let owners: HoldshelfServer[];
    let entry: HoldshelfServer;
    let browser: Browser;
    let rpc: ReturnType<typeof createQueueServiceRpc>;
    beforeAll(async () => {
      browser = await launchChromium();
      postgres = await startPostgres();
      const url = await postgres.createDatabase();
      owners = [
        await startClusterMember(url, "owner-1", { consoleHistory: history }),
        await startClusterMember(url, "owner-2", { consoleHistory: history }),
      ];
      entry = await startClusterMember(url, "entry", {
        routeOnly: true,
        consoleListen: "127.0.0.1:0",
        consoleHistory: history,
      });
      await settledRoutes(entry, owners);
      rpc = createQueueServiceRpc(entry.address, { followOwnerHints: false });
      await rpc.createQueue({ name: paced });
      await rpc.createQueue({ name: queueOn("owner-2", members, "idle") });
      // Once its owner has sampled it, what follows counts as rates.
      await vi.waitFor(async () => expect((await rowOf(entry, paced))?.rates.sent.length ?? 0).toBeGreaterThan(0), {
        timeout: uiTimeoutMs,
        interval: 200,
      });
      for (let i = 0; i < sent; i++) {
        await rpc.send({ queue: paced, body: text(`paced ${i}`) });
        await sleep(250);
      }
    }, 90_000);
    afterAll(async () => {
      rpc?.close();
      await browser?.close();
      await entry?.shutdown();
      await Promise.all((owners ?? []).map((owner) => owner.shutdown()));
      await postgres?.stop();
    });

    it("shows a queue another broker serves with its rates: the list's figure, the queue's chart and its serving broker", async () => {
      const page = await openPage(browser, `${entry.consoleUrl!}#/queues`);
      await expect
        .poll(
          async () => {
            const row = (await rowOf(entry, paced))!;
            const figure = await page.getByTestId(`sent-rate-${paced}`).textContent();
            const total = Math.round(sumRates(row.rates.sent));
            return { total, figureIsKnownLoad: isRateNear(figure, sent / (row.rateWindowMs / 1000)) };
          },
          { timeout: uiTimeoutMs },
        )
        .toEqual({ total: sent, figureIsKnownLoad: true });
      await screenshot(page, "cluster-queues");
      await page.goto(`${entry.consoleUrl!}#/queues/${paced}`);
      await expect
        .poll(() => page.getByTestId("served-by").textContent(), { timeout: uiTimeoutMs })
        .toContain("owner-1");
      const rates = chartByCaption(page, "Rates (messages per second)");
      await expect
        .poll(
          async () => {
            const samples = await readAllSamples(rates);
            return Math.round(sumRates(samples.map((sample) => rateOf(sample.values["Sent"] ?? ""))));
          },
          { timeout: 30_000 },
        )
        .toBe(sent);
      await screenshot(page, "cluster-queue");
      expect(await seriousViolations(page)).toEqual([]);
      await page.context().close();
    });

    it("shows the Overview of every broker on the console of one that owns no queue; axe-clean", async () => {
      const page = await openPage(browser, entry.consoleUrl!);
      await expect.poll(() => heading(page), { timeout: uiTimeoutMs }).toBe("Overview");
      await expect.poll(() => page.getByTestId("total-queues").textContent(), { timeout: uiTimeoutMs }).toBe("2");
      await expect
        .poll(() => page.getByTestId("total-visible").textContent(), { timeout: uiTimeoutMs })
        .toBe(String(sent));
      for (const node of ["owner-1", "owner-2", "entry"]) {
        const row = page.getByTestId(`broker-${node}`);
        await expect
          .poll(() => row.getByTestId("broker-storage").textContent(), { timeout: uiTimeoutMs })
          .toBe("PostgreSQL");
        expect(await row.getByTestId("broker-state").textContent()).toBe("serving");
      }
      // The cluster's sends, counted by owner-1, reach the rates of a console on entry.
      await expect
        .poll(() => page.getByTestId("overview-sent-rate").textContent(), { timeout: uiTimeoutMs })
        .not.toBe("0/s");
      await docsScreenshot(page, "overview-cluster");
      expect(await seriousViolations(page)).toEqual([]);
      await page.context().close();
    });

    it("shows the members, every shard's owner and epoch, and the shards' claims on the Cluster page; axe-clean", async () => {
      const page = await openPage(browser, `${entry.consoleUrl!}#/cluster`);
      await expect.poll(() => heading(page), { timeout: uiTimeoutMs }).toBe("Cluster");
      const owner1 = page.getByTestId("member-owner-1");
      await expect.poll(() => owner1.getByTestId("member-live").textContent(), { timeout: uiTimeoutMs }).toBe("● live");
      expect(await owner1.getByTestId("member-shards").textContent()).toBe("4");
      expect(await page.getByTestId("member-owner-2").getByTestId("member-shards").textContent()).toBe("4");
      // The console's broker routes only: it holds no shard, so it is no member, and the page says so.
      expect(await page.getByTestId("member-entry").count()).toBe(0);
      expect(await page.getByTestId("this-node").textContent()).toContain("entry");
      expect(await owner1.getByTestId("member-heartbeat").textContent()).toMatch(
        /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \((just now|\d+ s ago)\)$/,
      );
      for (let shard = 0; shard < 8; shard++) {
        expect(await page.getByTestId(`shard-${shard}`).textContent()).toMatch(/^Shard \d+(owner-1|owner-2)epoch \d+$/);
      }
      await expect.poll(() => page.getByTestId("shard-event").count(), { timeout: uiTimeoutMs }).toBeGreaterThan(0);
      await docsScreenshot(page, "cluster");
      expect(await seriousViolations(page)).toEqual([]);
      await page.context().close();
    });

    it("reports a hand-over on the Cluster page when a broker leaves", async () => {
      const page = await openPage(browser, `${entry.consoleUrl!}#/cluster`);
      await expect.poll(() => page.getByTestId("member-owner-2").count(), { timeout: uiTimeoutMs }).toBe(1);
      const claimsBefore = await ownerOneClaims(page);
      await owners[1]!.shutdown();
      owners = [owners[0]!];
      // owner-1 takes all eight shards, owner-2 leaves the members, and the page says so at its next refresh.
      await expect
        .poll(() => page.getByTestId("member-owner-1").getByTestId("member-shards").textContent(), { timeout: 30_000 })
        .toBe("8");
      expect(await page.getByTestId("member-owner-2").count()).toBe(0);
      // The four shards owner-2 held are claimed by owner-1, newest first in the events.
      await expect.poll(() => ownerOneClaims(page), { timeout: uiTimeoutMs }).toBe(claimsBefore + 4);
      expect(await page.getByTestId("shard-event").first().textContent()).toContain("owner-1claimed");
      await screenshot(page, "cluster-handover");
      expect(await seriousViolations(page)).toEqual([]);
      await page.context().close();
    });
  },
);

/** How many shard claims by owner-1 the Cluster page lists. */
async function ownerOneClaims(page: Page): Promise<number> {
  const rows = await page.getByTestId("shard-event").allTextContents();
  return rows.filter((row) => /\)owner-1claimed/.test(row)).length;
}

/** The page's h1. */
function heading(page: Page): Promise<string | null> {
  return page.getByRole("heading", { level: 1 }).textContent();
}

/** Messages a rate series stands for: each point is the average over one sample interval. */
function sumRates(values: readonly (number | null)[]): number {
  return values.reduce<number>((sum, value) => sum + (value ?? 0), 0) * (sampleIntervalMs / 1000);
}

/** A queue's row of GET /api/queues, on a broker's console. */
async function rowOf(server: HoldshelfServer, queue: string) {
  const browser = new ConsoleBrowser(server.consoleUrl!);
  await browser.session();
  return (await browser.api("GET", "/api/queues")).body.queues.find((q: { name: string }) => q.name === queue) as
    | { rates: { sent: number[] }; rateWindowMs: number }
    | undefined;
}
