// FIFO queues in the console, in Debian's Chromium against a real broker
// (issue #19): created through the form, shown as FIFO, sent to by group,
// browsed in sequence order, their settings saved without losing FIFO, and
// a redrive the broker refuses shown beside its field; axe-core checks each
// page, and each leaves a screenshot in test-output/console/.
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DeduplicationScope } from "../../../gen/holdshelf/v1/queue_pb.js";
import { launchChromium, openPage, screenshot, seriousViolations, skipWithoutChromium } from "./chromium-session.js";
import { startConsoleHarness, type ConsoleHarness } from "../console-harness.js";

// Generous, as in console-pages.test.ts: Chromium and the broker share two loaded cores.
const uiTimeoutMs = 15_000;
const testTimeoutMs = 90_000;
const text = (body: string) => new TextEncoder().encode(body);

describe.skipIf(skipWithoutChromium)("FIFO queues in the console, in Chromium", { timeout: testTimeoutMs }, () => {
  let browser: Browser;
  let h: ConsoleHarness;
  beforeAll(async () => {
    browser = await launchChromium();
    // No charts are looked at here: one sample at start keeps the broker's work small.
    h = await startConsoleHarness({ history: { sampleIntervalMs: 3_600_000, samples: 60 } });
    await h.rpc().createQueue({ name: "plain" });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await h?.stop();
  });

  it("creates a FIFO queue through the form, sends two messages to one group, and browses them in sequence order", async () => {
    const rpc = h.rpc();
    const page = await openPage(browser, `${h.consoleUrl}#/queues`);
    await page.getByRole("button", { name: "Create queue…" }).click();
    const create = page.getByRole("dialog").getByRole("form", { name: "Create a queue" });
    // A ".fifo" name without FIFO ticked: the broker's refusal shows beside the checkbox.
    await create.getByLabel("Queue name").fill("orders.fifo");
    await create.getByRole("button", { name: "Create queue" }).click();
    await expect
      .poll(() => create.getByLabel("FIFO queue").getAttribute("aria-invalid"), { timeout: uiTimeoutMs })
      .toBe("true");
    expect(await describedText(page, create.getByLabel("FIFO queue"))).toContain(".fifo");
    await create.getByLabel("FIFO queue").check();
    await create.getByLabel("Message group", { exact: true }).check();
    await screenshot(page, "fifo-create");
    expect(await seriousViolations(page)).toEqual([]);
    await create.getByRole("button", { name: "Create queue" }).click();
    await expect
      .poll(() => page.getByTestId("notice").textContent(), { timeout: uiTimeoutMs })
      .toContain("Created queue orders.fifo.");
    expect((await rpc.getQueue({ name: "orders.fifo" })).queue!.config).toMatchObject({
      fifo: true,
      contentBasedDeduplication: false,
      deduplicationScope: DeduplicationScope.MESSAGE_GROUP,
    });
    // The list says FIFO in words, with its settings.
    await expect
      .poll(() => page.getByTestId("fifo-orders.fifo").textContent(), { timeout: uiTimeoutMs })
      .toBe("FIFO · dedup per group");
    expect(await page.getByTestId("fifo-plain").count()).toBe(0);
    await screenshot(page, "fifo-queues");
    expect(await seriousViolations(page)).toEqual([]);

    await page.getByRole("link", { name: "orders.fifo", exact: true }).click();
    await expect
      .poll(() => page.getByRole("heading", { level: 1 }).textContent(), { timeout: uiTimeoutMs })
      .toBe("Queue orders.fifo");
    expect(await page.getByTestId("queue-type").textContent()).toContain("FIFO");
    await page.getByRole("link", { name: "Send", exact: true }).click();
    const send = page.getByRole("form", { name: "Send a test message" });
    // A FIFO queue's form asks for a group and a deduplication id, and offers no per-message delay.
    await expect.poll(() => send.getByLabel("Message body").count(), { timeout: uiTimeoutMs }).toBe(1);
    expect(await send.getByLabel("Delay (optional)").count()).toBe(0);
    await send.getByLabel("Message body").fill('{"order": 1}');
    await send.getByLabel("Deduplication id").fill("order-1");
    await send.getByRole("button", { name: "Send message" }).click();
    // No group: refused beside the group's field.
    const group = send.getByLabel("Message group id");
    await expect.poll(() => group.getAttribute("aria-invalid"), { timeout: uiTimeoutMs }).toBe("true");
    expect(await describedText(page, group)).toContain("required");
    await screenshot(page, "fifo-send-error");
    expect(await seriousViolations(page)).toEqual([]);

    await group.fill("customer-7");
    await send.getByRole("button", { name: "Send message" }).click();
    const sequence = send.getByTestId("sent-sequence-number");
    await expect.poll(() => sequence.textContent(), { timeout: uiTimeoutMs }).toMatch(/^\d{20}$/);
    expect(await group.getAttribute("aria-invalid")).toBeNull();
    const first = (await sequence.textContent())!;
    expect(await page.getByTestId("notice").textContent()).toContain(`sequence number ${first}`);
    await send.getByLabel("Message body").fill('{"order": 2}');
    await send.getByLabel("Deduplication id").fill("order-2");
    await send.getByRole("button", { name: "Send message" }).click();
    await expect.poll(() => sequence.textContent(), { timeout: uiTimeoutMs }).not.toBe(first);
    const second = (await sequence.textContent())!;
    expect(second > first).toBe(true);
    // The same send again is a duplicate: the first send's id and number, and the page says so.
    await send.getByRole("button", { name: "Send message" }).click();
    await expect
      .poll(() => page.getByTestId("notice").textContent(), { timeout: uiTimeoutMs })
      .toContain("Deduplicated");
    expect(await sequence.textContent()).toBe(second);
    await page
      .getByRole("navigation", { name: "Queue orders.fifo" })
      .getByRole("link", { name: "Overview", exact: true })
      .click();
    await expect.poll(() => page.getByTestId("queue-visible").textContent(), { timeout: uiTimeoutMs }).toBe("2");
    await screenshot(page, "fifo-queue");
    expect(await seriousViolations(page)).toEqual([]);

    // The settings form shows FIFO as fixed; saving a FIFO setting keeps the queue FIFO.
    await page.getByRole("link", { name: "Settings", exact: true }).click();
    const settings = page.getByRole("form", { name: "Configuration" });
    expect(await settings.getByTestId("settings-fifo-type").textContent()).toContain("FIFO");
    await settings.getByLabel("Content-based deduplication").check();
    await settings.getByRole("button", { name: "Save configuration" }).click();
    await expect
      .poll(() => page.getByTestId("notice").textContent(), { timeout: uiTimeoutMs })
      .toContain("Saved the configuration of orders.fifo.");
    expect((await rpc.getQueue({ name: "orders.fifo" })).queue!.config).toMatchObject({
      fifo: true,
      contentBasedDeduplication: true,
      deduplicationScope: DeduplicationScope.MESSAGE_GROUP,
    });
    // Now a deduplication id is optional.
    await page.getByRole("link", { name: "Send", exact: true }).click();
    await expect.poll(() => send.getByLabel("Deduplication id (optional)").count(), { timeout: uiTimeoutMs }).toBe(1);

    await page.getByRole("link", { name: "Messages", exact: true }).click();
    await expect
      .poll(() => page.getByTestId("message-count").textContent(), { timeout: uiTimeoutMs })
      .toBe("2 messages on this page.");
    // Each compact row opens to the whole message.
    const cards = page.locator(".message-row");
    for (const summary of await page.locator(".message-row summary").all()) await summary.click();
    // A row renders its message once its toggle event has run.
    await expect.poll(() => cards.nth(0).textContent(), { timeout: uiTimeoutMs }).toContain('"order": 1');
    await expect.poll(() => cards.nth(1).textContent(), { timeout: uiTimeoutMs }).toContain('"order": 2');
    expect(await page.locator("[data-testid^='group-id-']").allTextContents()).toEqual(["customer-7", "customer-7"]);
    expect(await page.locator("[data-testid^='sequence-number-']").allTextContents()).toEqual([first, second]);
    expect(await page.locator("[data-testid^='deduplication-id-']").allTextContents()).toEqual(["order-1", "order-2"]);
    await screenshot(page, "fifo-messages");
    expect(await seriousViolations(page)).toEqual([]);
    await page.context().close();
  });

  it("shows the broker's refusal of a FIFO dead-letter queue's redrive to a standard queue beside the destination", async () => {
    const rpc = h.rpc();
    await rpc.createQueue({ name: "work-dlq.fifo", config: { fifo: true } });
    await rpc.createQueue({
      name: "work.fifo",
      config: { fifo: true, redrivePolicy: { deadLetterQueue: "work-dlq.fifo", maxReceiveCount: 1 } },
    });
    await rpc.send({ queue: "work-dlq.fifo", body: text("dead"), messageGroupId: "g", deduplicationId: "d" });
    const page = await openPage(browser, `${h.consoleUrl}#/queues/work-dlq.fifo/redrive`);
    const redrive = page.getByRole("form", { name: "Start a redrive" });
    await redrive.getByLabel("Another queue").check();
    const destination = redrive.getByLabel("Destination queue");
    await destination.fill("plain");
    await redrive.getByRole("button", { name: "Start redrive" }).click();
    await expect.poll(() => destination.getAttribute("aria-invalid"), { timeout: uiTimeoutMs }).toBe("true");
    expect(await describedText(page, destination)).toContain("FIFO");
    await screenshot(page, "fifo-redrive-error");
    expect(await seriousViolations(page)).toEqual([]);
    expect((await rpc.listMessageMoveTasks({ sourceQueue: "work-dlq.fifo" })).tasks).toEqual([]);
    await page.context().close();
  });
});

/** The text of the elements a control's aria-describedby names: its help and its error, as a screen reader reads them. */
async function describedText(page: Page, control: ReturnType<Page["getByLabel"]>): Promise<string> {
  const ids = ((await control.getAttribute("aria-describedby")) ?? "").split(" ").filter((id) => id !== "");
  return (await Promise.all(ids.map((id) => page.locator(`[id="${id}"]`).textContent()))).join(" ");
}
