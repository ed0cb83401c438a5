// The Overview and Cluster pages in Debian's Chromium against a real broker
// on LevelDB, and a known load read back from the page: N sends at a known
// pace are N messages in the API's rates, in the rate figures, and in the
// charts' values read by keyboard and pointer. Screenshots of each step land
// in test-output/console/ (and the docs' in test-output/console/docs/).
import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { openHeartbeatStream, type HeartbeatStream } from "../../support/heartbeat-stream.js";
import { startConsoleHarness, type ConsoleHarness } from "../console-harness.js";
import { chartByCaption, isRateNear, rateOf, readAllSamples, type ReadSample } from "./chart-readout.js";
import {
  docsScreenshot,
  launchChromium,
  openPage,
  screenshot,
  seriousViolations,
  skipWithoutChromium,
} from "./chromium-session.js";

const uiTimeoutMs = 15_000;
const testTimeoutMs = 90_000;
// Two seconds: the list's sparklines and the Overview's chart then span 60 s (30 samples), time enough to read them.
const sampleIntervalMs = 2_000;
const text = (body: string) => new TextEncoder().encode(body);
const version = JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")).version as string;

describe.skipIf(skipWithoutChromium)(
  "the Overview and Cluster pages in Chromium, on LevelDB",
  { timeout: testTimeoutMs },
  () => {
    let browser: Browser;
    let h: ConsoleHarness;
    let stream: HeartbeatStream | undefined;
    beforeAll(async () => {
      browser = await launchChromium();
      h = await startConsoleHarness({ history: { sampleIntervalMs, samples: 300 } });
      const rpc = h.rpc();
      await rpc.createQueue({ name: "orders" });
      await rpc.createQueue({ name: "work-dlq" });
      await rpc.createQueue({
        name: "work",
        config: { redrivePolicy: { deadLetterQueue: "work-dlq", maxReceiveCount: 1 } },
      });
      for (let i = 0; i < 4; i++) await rpc.send({ queue: "orders", body: text(`order ${i}`) });
      // Once the broker has sampled "work", its dead letters count (a queue's first sample only starts its counts).
      await untilSampled(h, "work");
      // Three messages delivered once and given back: the next receive dead-letters them.
      await rpc.sendBatch({ queue: "work", entries: [0, 1, 2].map((i) => ({ id: `m${i}`, body: text(`job ${i}`) })) });
      const first = await rpc.receive({ queue: "work", maxMessages: 3 });
      await rpc.changeVisibilityBatch({
        queue: "work",
        receiptHandles: first.messages.map((m) => m.receiptHandle),
        visibilityTimeout: {},
      });
      await rpc.receive({ queue: "work", maxMessages: 3 });
    }, 60_000);
    afterAll(async () => {
      stream?.cancel();
      stream?.close();
      await browser?.close();
      await h?.stop();
    });

    it("opens on the Overview: totals, consumers, the broker, and the queues that need attention, linked; axe-clean", async () => {
      stream = openHeartbeatStream(h.server.address);
      const page = await openPage(browser, h.consoleUrl);
      await expect.poll(() => heading(page), { timeout: uiTimeoutMs }).toBe("Overview");
      expect(await page.getByRole("link", { name: "Overview" }).getAttribute("aria-current")).toBe("page");
      await expect.poll(() => page.getByTestId("total-queues").textContent(), { timeout: uiTimeoutMs }).toBe("3");
      await expect.poll(() => page.getByTestId("total-dead-letter").textContent(), { timeout: uiTimeoutMs }).toBe("3");
      expect(await page.getByTestId("total-visible").textContent()).toBe("7");
      await expect.poll(() => page.getByTestId("heartbeat-streams").textContent(), { timeout: uiTimeoutMs }).toBe("1");
      const broker = page.getByTestId("broker-this");
      expect(await broker.getByTestId("broker-version").textContent()).toBe(version);
      expect(await broker.getByTestId("broker-storage").textContent()).toBe("LevelDB");
      expect(await broker.getByTestId("broker-state").textContent()).toBe("serving");
      expect(await broker.getByTestId("broker-uptime").textContent()).toMatch(/^\(up .+\)$/);
      // The dead-lettering queue is listed once the broker's samples have seen it, with a link to its page.
      const work = page.getByTestId("attention-work");
      await expect.poll(() => work.textContent(), { timeout: uiTimeoutMs }).toContain("dead-lettering");
      // The dead letters moved into work-dlq: Sent counts sends alone, and "Moved in" shows them, as the list's Sent does.
      const figures = async () =>
        Promise.all(["dead-lettered", "moved-in"].map((key) => page.getByTestId(`overview-${key}-rate`).textContent()));
      await expect
        .poll(figures, { timeout: uiTimeoutMs })
        .toSatisfy(([deadLettered, movedIn]: (string | null)[]) => deadLettered !== "0/s" && movedIn === deadLettered);
      await docsScreenshot(page, "overview");
      expect(await seriousViolations(page)).toEqual([]);
      await work.getByRole("link", { name: "work" }).click();
      await expect.poll(() => heading(page), { timeout: uiTimeoutMs }).toBe("Queue work");
      expect(await page.getByRole("link", { name: "Queues" }).getAttribute("aria-current")).toBe("page");
      await page.context().close();
    });

    it("says on the Cluster page that a LevelDB broker is not in cluster mode, and the queue page names no serving broker", async () => {
      const page = await openPage(browser, h.consoleUrl);
      await page.getByRole("link", { name: "Cluster" }).click();
      await expect.poll(() => heading(page), { timeout: uiTimeoutMs }).toBe("Cluster");
      await expect
        .poll(() => page.getByTestId("not-clustered").textContent(), { timeout: uiTimeoutMs })
        .toContain("not in cluster mode");
      await screenshot(page, "cluster-off");
      expect(await seriousViolations(page)).toEqual([]);
      await page.goto(`${h.consoleUrl}#/queues/orders`);
      await expect.poll(() => page.getByTestId("queue-visible").textContent(), { timeout: uiTimeoutMs }).toBe("4");
      expect(await page.getByTestId("served-by").count()).toBe(0);
      await page.context().close();
    });

    it("keeps the chart's readout on the chosen sample while refreshes add samples and drop the oldest", async () => {
      // Once the Overview's chart is full, each new sample drops its oldest.
      await vi.waitFor(async () => expect((await apiOverview(h)).rates.t.length).toBe(30), {
        timeout: 75_000,
        interval: 500,
      });
      const page = await openPage(browser, h.consoleUrl);
      const chart = chartByCaption(page, "messages per second");
      const plot = chart.getByRole("slider");
      await expect.poll(() => plot.count(), { timeout: uiTimeoutMs }).toBe(1);
      await plot.focus();
      await plot.press("End");
      for (let i = 0; i < 3; i++) await plot.press("ArrowLeft");
      const chosen = await chart.locator(".chart-readout").textContent();
      // A refresh drew a newer sample (the description names the latest time) while the readout stays.
      const description = async () => chart.locator("p.visually-hidden").textContent();
      const before = await description();
      await expect.poll(description, { timeout: uiTimeoutMs }).not.toBe(before);
      expect(await chart.locator(".chart-readout").textContent()).toBe(chosen);
      await page.context().close();
    }, 120_000);
  },
);

describe.skipIf(skipWithoutChromium)("a known load in the console, on LevelDB", { timeout: testTimeoutMs }, () => {
  const sent = 20;
  const paceMs = 200;
  let browser: Browser;
  let h: ConsoleHarness;
  beforeAll(async () => {
    browser = await launchChromium();
    // A broker of its own: the Overview's rates are every queue's, and these sends must be the only ones.
    h = await startConsoleHarness({ history: { sampleIntervalMs, samples: 300 } });
    await h.rpc().createQueue({ name: "paced" });
    // Once sampled, what follows counts as rates (a queue's first sample only starts its count).
    await untilSampled(h, "paced");
    const rpc = h.rpc();
    for (let i = 0; i < sent; i++) {
      await rpc.send({ queue: "paced", body: text(`paced ${i}`) });
      await sleep(paceMs);
    }
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await h?.stop();
  });

  it("counts the N sends in the API's rates: the overview's and the queue's series add up to N", async () => {
    await expect
      .poll(async () => Math.round(sumRates((await apiOverview(h)).rates.sent)), { timeout: uiTimeoutMs })
      .toBe(sent);
    await expect
      .poll(async () => Math.round(sumRates((await apiRow(h, "paced"))!.rates.sent)), { timeout: uiTimeoutMs })
      .toBe(sent);
  });

  it("shows the Overview's sent rate as N over the window its chart draws, and the chart's samples read by keyboard add up to N", async () => {
    const page = await openPage(browser, h.consoleUrl);
    const chart = page.locator("figure.chart").first();
    await expect
      .poll(
        async () => {
          const samples = await readAllSamples(chart);
          const figure = await page.getByTestId("overview-sent-rate").textContent();
          return agreement(samples, figure, "Sent", sent);
        },
        { timeout: 30_000 },
      )
      .toMatchObject({ total: sent, contiguous: true, figureIsKnownLoad: true });
    await pointerReadsEnds(page, chart);
    // For the docs: a sample chosen by keyboard, read out under the chart.
    await chart.getByRole("slider").focus();
    for (const key of ["End", "ArrowLeft", "ArrowLeft"]) await chart.getByRole("slider").press(key);
    await docsScreenshot(page, "overview-rates");
    expect(await seriousViolations(page)).toEqual([]);
    await page.context().close();
  });

  it("shows the queue list's sent figure as the average of its sparkline's window, which holds the N sends", async () => {
    const page = await openPage(browser, `${h.consoleUrl}#/queues`);
    await expect
      .poll(
        async () => {
          const row = (await apiRow(h, "paced"))!;
          const figure = await page.getByTestId("sent-rate-paced").textContent();
          const sparkline = await page
            .locator("td", { has: page.getByTestId("sent-rate-paced") })
            .locator("svg.sparkline")
            .getAttribute("aria-label");
          return {
            total: Math.round(sumRates(row.rates.sent)),
            figure,
            figureIsKnownLoad: isRateNear(figure, sent / (row.rateWindowMs / 1000)),
            sparklineSaysAverage: sparkline?.includes(`average ${figure}`) ?? false,
          };
        },
        { timeout: uiTimeoutMs },
      )
      .toSatisfy(
        (r: { total: number; figureIsKnownLoad: boolean; sparklineSaysAverage: boolean }) =>
          r.total === sent && r.figureIsKnownLoad && r.sparklineSaysAverage,
      );
    // The column says its window.
    const header = await page.getByRole("columnheader", { name: /Sent/ }).textContent();
    expect(header).toMatch(/^Sent\/s per second↕ \(\d+ (s|min|h) avg\)$/);
    await screenshot(page, "queues-known-load");
    await page.context().close();
  });

  it("draws the queue's rate chart with samples adding up to N, and ends the depth chart at the Now counts", async () => {
    const page = await openPage(browser, `${h.consoleUrl}#/queues/paced`);
    await expect
      .poll(() => page.getByTestId("queue-visible").textContent(), { timeout: uiTimeoutMs })
      .toBe(String(sent));
    const rates = chartByCaption(page, "Rates (messages per second)");
    await expect
      .poll(async () => agreement(await readAllSamples(rates), null, "Sent", sent), { timeout: 30_000 })
      .toMatchObject({ total: sent, contiguous: true });
    const depth = chartByCaption(page, "Depth (messages)");
    await depth.getByRole("slider").focus();
    await depth.getByRole("slider").press("End");
    expect(await depth.locator(".chart-readout").textContent()).toContain(`Visible ${sent}`);
    await pointerReadsEnds(page, rates);
    await screenshot(page, "queue-known-load");
    expect(await seriousViolations(page)).toEqual([]);
    await page.context().close();
  });
});

/** Resolves once the broker has sampled a queue twice: from then on what happens to it counts in its rates. */
async function untilSampled(h: ConsoleHarness, queue: string): Promise<void> {
  await vi.waitFor(async () => expect((await apiRow(h, queue))?.rates.sent.length ?? 0).toBeGreaterThan(0), {
    timeout: uiTimeoutMs,
    interval: 200,
  });
}

/** The page's h1. */
function heading(page: Page): Promise<string | null> {
  return page.getByRole("heading", { level: 1 }).textContent();
}

/** Messages a rate series stands for: each point is the average over one sample interval. */
function sumRates(values: readonly (number | null)[]): number {
  return values.reduce<number>((sum, value) => sum + (value ?? 0), 0) * (sampleIntervalMs / 1000);
}

/**
 * What a chart's samples say about a known load of `sent` messages: how
 * many messages they add up to, whether they were read in one piece (no
 * refresh moved them meanwhile), and whether `figure` is `sent` over the
 * window the chart draws.
 */
function agreement(samples: readonly ReadSample[], figure: string | null, series: string, sent: number) {
  const values = samples.map((sample) => rateOf(sample.values[series] ?? ""));
  const times = samples.map((sample) => new Date(sample.time.replace(" ", "T")).getTime());
  const contiguous = times.every(
    (t, i) => i === 0 || (t > times[i - 1]! && t - times[i - 1]! <= 1.5 * sampleIntervalMs),
  );
  const windowS = (values.filter((value) => value !== null).length * sampleIntervalMs) / 1000;
  return {
    total: Math.round(sumRates(values)),
    contiguous,
    figure,
    figureIsKnownLoad: isRateNear(figure, sent / windowS),
  };
}

/**
 * The pointer at the plot's left and right edges reads the first and last
 * samples, as Home and End do (polled: a refresh may add a sample between).
 */
async function pointerReadsEnds(page: Page, chart: ReturnType<typeof chartByCaption>): Promise<void> {
  const plot = chart.getByRole("slider");
  const readout = chart.locator(".chart-readout");
  const box = (await chart.locator("svg.chart-svg").boundingBox())!;
  // The plot spans x 56 to 576 of the chart's 600-wide viewBox (line-chart.tsx).
  const edges = [
    ["Home", box.x + (box.width * 56) / 600 + 1],
    ["End", box.x + (box.width * 576) / 600 - 1],
  ] as const;
  for (const [key, x] of edges) {
    await expect
      .poll(
        async () => {
          await plot.focus();
          await plot.press(key);
          const byKey = await readout.textContent();
          await plot.blur();
          await page.mouse.move(x, box.y + box.height / 2);
          return { byKey, byPointer: await readout.textContent() };
        },
        { timeout: uiTimeoutMs },
      )
      .toSatisfy(({ byKey, byPointer }: { byKey: string | null; byPointer: string | null }) => byKey === byPointer);
  }
  await page.mouse.move(0, 0);
}

async function apiOverview(h: ConsoleHarness) {
  const browser = h.browser();
  await browser.session();
  return (await browser.api("GET", "/api/overview")).body;
}

async function apiRow(h: ConsoleHarness, queue: string) {
  const browser = h.browser();
  await browser.session();
  return (await browser.api("GET", "/api/queues")).body.queues.find((q: { name: string }) => q.name === queue) as
    | { rates: { sent: number[] }; rateWindowMs: number }
    | undefined;
}
