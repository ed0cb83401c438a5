// Reads a console chart the way a keyboard user does: focus it, walk its
// samples with the arrow keys, and read each one's readout line.
import type { Locator, Page } from "playwright-core";

/** One sample as the chart's readout shows it: its time as written, and each series' value as written. */
export interface ReadSample {
  readonly time: string;
  readonly values: Readonly<Record<string, string>>;
}

/** The figure of the console's chart captioned `caption` (exactly). */
export function chartByCaption(page: Page, caption: string): Locator {
  return page.locator("figure.chart", { has: page.locator("figcaption", { hasText: caption }) });
}

/** Parses a readout line: "2026-12-05 08:53:20: Sent 4.0/s, Received 0/s". */
export function parseReadout(text: string): ReadSample {
  const match = /^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d): (.*)$/.exec(text.trim());
  if (match === null) throw new Error(`not a chart readout: "${text}"`);
  const values: Record<string, string> = {};
  for (const part of match[2]!.split(", ")) {
    const at = part.lastIndexOf(" ");
    values[part.slice(0, at)] = part.slice(at + 1);
  }
  return { time: match[1]!, values };
}

/** Every sample of a chart, oldest first, read by keyboard: Home, then → until the last. */
export async function readAllSamples(chart: Locator): Promise<ReadSample[]> {
  const plot = chart.getByRole("slider");
  await plot.focus();
  const last = Number(await plot.getAttribute("aria-valuemax"));
  await plot.press("Home");
  const samples: ReadSample[] = [];
  for (let i = 0; i <= last; i++) {
    if (i > 0) await plot.press("ArrowRight");
    samples.push(parseReadout((await chart.locator(".chart-readout").textContent()) ?? ""));
  }
  await plot.blur();
  return samples;
}

/** A rate as the console writes it ("4.0/s", "0.50/s", "1,204/s"), in messages a second; null for none ("–"). */
export function rateOf(text: string): number | null {
  if (text === "–") return null;
  const rate = Number(text.replace(/,/g, "").replace(/\/s$/, ""));
  if (Number.isNaN(rate)) throw new Error(`not a rate: "${text}"`);
  return rate;
}

/**
 * Whether a rate as written is `expected`, to its written precision and a
 * little more: the broker divides by each interval's measured length, which
 * a loaded machine stretches by a few per cent.
 */
export function isRateNear(text: string | null, expected: number): boolean {
  const rate = text === null ? null : rateOf(text);
  return rate !== null && Math.abs(rate - expected) <= Math.max(0.01, 0.03 * expected);
}
