// Debian's Chromium driven by playwright-core, for the console's browser
// tests: no browser download works offline, so the system binary is used.
import { readFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { chromium, type Browser, type Page } from "playwright-core";
import { missingCommands, skipWithout } from "../../support/required-tools.js";

const chromiumPath = "/usr/bin/chromium";
export const skipWithoutChromium = skipWithout(missingCommands([chromiumPath]));

/** Where each run leaves its screenshots: look at them after a change to the page. */
export const screenshotDir = fileURLToPath(new URL("../../../test-output/console/", import.meta.url));

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

export async function launchChromium(): Promise<Browser> {
  await mkdir(screenshotDir, { recursive: true });
  // As root (CI) Chromium needs --no-sandbox; the pages it opens are the test's own, on loopback.
  return chromium.launch({ executablePath: chromiumPath, args: ["--no-sandbox"] });
}

/** A page in a fresh context (its own cookies), wide enough for the queue table. */
export async function openPage(browser: Browser, url: string): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  // The console's CSP allows no inline script: a page error is a test failure.
  page.on("pageerror", (error) => {
    throw error;
  });
  await page.goto(url);
  return page;
}

export async function screenshot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: `${screenshotDir}${name}.png`, fullPage: true });
}

/** Where the screenshots docs/console.md shows are left, for `node scripts/docs-screenshots.mjs` to copy. */
export const docsScreenshotDir = `${screenshotDir}docs/`;

/**
 * A screenshot for the docs as well as the whole page's: the top 1280 × 800
 * of it, small enough to commit (docs/console/).
 */
export async function docsScreenshot(page: Page, name: string): Promise<void> {
  await screenshot(page, name);
  await mkdir(docsScreenshotDir, { recursive: true });
  await page.screenshot({ path: `${docsScreenshotDir}${name}.png`, clip: { x: 0, y: 0, width: 1280, height: 800 } });
}

/** One accessibility violation axe-core found: its rule, impact and the elements at fault. */
export interface AxeViolation {
  readonly id: string;
  readonly impact: string | null;
  readonly help: string;
  readonly targets: string[];
}

/**
 * Runs axe-core in the page (evaluated, since the CSP refuses an added
 * script tag) and returns the violations of serious or critical impact.
 */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(axeSource);
  // Evaluated as text: this file is compiled without the DOM's types.
  const violations = await page.evaluate<AxeViolation[]>(`axe.run().then((results) => results.violations.map((v) => ({
    id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => String(n.target)),
  })))`);
  return violations.filter((v: AxeViolation) => v.impact === "serious" || v.impact === "critical");
}
