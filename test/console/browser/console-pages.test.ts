// The admin console in a real browser (Debian's Chromium), against a real
// broker: what an operator does at 3 a.m., step by step, with axe-core's
// accessibility checks and a screenshot of each page (test-output/console/).
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium, openPage, screenshot, seriousViolations, skipWithoutChromium } from "./chromium-session.js";
import { startConsoleHarness, type ConsoleHarness } from "../console-harness.js";

// Generous: Chromium and the broker share two loaded cores in CI. A test chains
// several such waits, so each test may take a minute before vitest gives up.
const uiTimeoutMs = 15_000;
const testTimeoutMs = 60_000;
const text = (body: string) => new TextEncoder().encode(body);

describe.skipIf(skipWithoutChromium)("the console in Chromium", { timeout: testTimeoutMs }, () => {
  let browser: Browser;
  let h: ConsoleHarness;
  beforeAll(async () => {
    browser = await launchChromium();
    // Sampled every second, so the charts and sparklines have points within a test (the list shows the last 30 s).
    h = await startConsoleHarness({ history: { sampleIntervalMs: 1_000, samples: 60 } });
    const rpc = h.rpc();
    for (const name of ["orders", "billing", "emails"]) await rpc.createQueue({ name });
    for (let i = 0; i < 3; i++) await rpc.send({ queue: "orders", body: text(`order ${i}`) });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await h?.stop();
  });

  it("loads the queue list with each queue's counts, filters and sorts it, and passes axe", async () => {
    const page = await openPage(browser, `${h.consoleUrl}#/queues`);
    await expect
      .poll(() => page.getByRole("heading", { level: 1 }).textContent(), { timeout: uiTimeoutMs })
      .toBe("Queues");
    await expect.poll(() => page.getByTestId("visible-orders").textContent(), { timeout: uiTimeoutMs }).toBe("3");
    expect(await page.getByTestId("visible-billing").textContent()).toBe("0");
    expect(await rowNames(page)).toEqual(["billing", "emails", "orders"]);
    await screenshot(page, "queues");
    expect(await seriousViolations(page)).toEqual([]);

    await page.getByLabel("Filter by name prefix").fill("or");
    await expect.poll(() => rowNames(page), { timeout: uiTimeoutMs }).toEqual(["orders"]);
    await page.getByLabel("Filter by name prefix").fill("");
    // A number column sorts descending on its first click.
    await page.getByRole("button", { name: "Visible", exact: true }).click();
    await expect.poll(() => rowNames(page).then((names) => names[0]), { timeout: uiTimeoutMs }).toBe("orders");
    expect(
      await page
        .locator("th", { has: page.getByRole("button", { name: "Visible", exact: true }) })
        .getAttribute("aria-sort"),
    ).toBe("descending");
    await page.context().close();
  });

  it("creates a queue, sends a test message, and sees it counted", async () => {
    const page = await openPage(browser, `${h.consoleUrl}#/queues`);
    await page.getByRole("button", { name: "Create queue…" }).click();
    const form = page.getByRole("dialog").getByRole("form", { name: "Create a queue" });
    await form.getByLabel("Queue name").fill("jobs");
    await form.getByLabel("Visibility timeout").fill("45s");
    await form.getByRole("button", { name: "Create queue" }).click();
    await expect
      .poll(() => page.getByTestId("notice").textContent(), { timeout: uiTimeoutMs })
      .toContain("Created queue jobs.");
    expect((await h.rpc().getQueue({ name: "jobs" })).queue!.config!.visibilityTimeout!.seconds).toBe(45n);

    await page.goto(`${h.consoleUrl}#/queues/jobs/send`);
    await expect
      .poll(() => page.getByRole("heading", { level: 1 }).textContent(), { timeout: uiTimeoutMs })
      .toBe("Queue jobs");
    // Once the broker has sampled the new queue, what follows counts as rates (its first sample only starts the count).
    await expect.poll(() => isSampled(h, "jobs"), { timeout: uiTimeoutMs }).toBe(true);
    const send = page.getByRole("form", { name: "Send a test message" });
    await send.getByLabel("Message body").fill('{"photo": 42, "size": "large"}');
    await send.getByRole("button", { name: "Add attribute" }).click();
    await send.getByLabel("Attribute name 1").fill("kind");
    await send.getByLabel("Attribute value 1").fill("resize");
    await send.getByRole("button", { name: "Send message" }).click();
    await expect
      .poll(() => page.getByTestId("notice").textContent(), { timeout: uiTimeoutMs })
      .toContain("Sent message");
    await page
      .getByRole("navigation", { name: "Queue jobs" })
      .getByRole("link", { name: "Overview", exact: true })
      .click();
    await expect.poll(() => page.getByTestId("queue-visible").textContent(), { timeout: uiTimeoutMs }).toBe("1");
    // The broker's next sample counts the send as a rate, which the list's sparkline shows below.
    await expect.poll(() => anyRate(h, "jobs", "sent"), { timeout: uiTimeoutMs }).toBe(true);
    // The depth chart draws the broker's samples once there are some.
    const depth = page.locator("figure", { has: page.getByText("Depth (messages)", { exact: true }) });
    await expect.poll(() => depth.locator("svg").count(), { timeout: uiTimeoutMs }).toBeGreaterThan(0);
    await screenshot(page, "queue");
    expect(await seriousViolations(page)).toEqual([]);
    await page.goto(`${h.consoleUrl}#/queues`);
    await expect.poll(() => page.getByTestId("visible-jobs").textContent(), { timeout: uiTimeoutMs }).toBe("1");
    // The sent-rate sparkline is drawn.
    const sentCell = page.locator("td", { has: page.getByTestId("sent-rate-jobs") });
    await expect.poll(() => sentCell.locator("svg.sparkline").count(), { timeout: uiTimeoutMs }).toBe(1);
    await page.context().close();
  });

  it("shows a refused setting's error beside its field, and stores nothing", async () => {
    const page = await openPage(browser, `${h.consoleUrl}#/queues/billing/settings`);
    const settings = page.getByRole("form", { name: "Configuration" });
    await settings.getByLabel("Visibility timeout").fill("100000s");
    await settings.getByRole("button", { name: "Save configuration" }).click();
    const field = settings.getByLabel("Visibility timeout");
    await expect.poll(() => field.getAttribute("aria-invalid"), { timeout: uiTimeoutMs }).toBe("true");
    // The error is the field's description, so a screen reader reads it with the field.
    const describedBy = (await field.getAttribute("aria-describedby")) ?? "";
    const errorText = (
      await Promise.all(describedBy.split(" ").map((id) => page.locator(`[id="${id}"]`).textContent()))
    ).join(" ");
    expect(errorText).toMatch(/visibility_timeout|12 hours|43200/);
    await screenshot(page, "settings-error");
    expect((await h.rpc().getQueue({ name: "billing" })).queue!.config!.visibilityTimeout!.seconds).toBe(30n);
    // A typo in a number field is refused by name, not saved as "the default".
    await settings.getByLabel("Visibility timeout").fill("30s");
    await settings.getByLabel("Max in flight").fill("12o00");
    await settings.getByRole("button", { name: "Save configuration" }).click();
    await expect
      .poll(() => settings.getByLabel("Max in flight").getAttribute("aria-invalid"), { timeout: uiTimeoutMs })
      .toBe("true");
    expect((await h.rpc().getQueue({ name: "billing" })).queue!.config!.maxInFlight).toBe(120_000);
    await page.context().close();
  });

  it("saves only the settings the operator edited: a change made elsewhere meanwhile stays", async () => {
    const rpc = h.rpc();
    await rpc.createQueue({ name: "shared", config: { tags: { team: "ops" } } });
    const page = await openPage(browser, `${h.consoleUrl}#/queues/shared/settings`);
    const settings = page.getByRole("form", { name: "Configuration" });
    await expect.poll(() => settings.getByLabel("Max in flight").inputValue(), { timeout: uiTimeoutMs }).toBe("120000");
    await settings.getByLabel("Visibility timeout").fill("75s");
    // The CLI changes another setting while the form is open with the old value in it.
    await rpc.updateQueue({ name: "shared", config: { maxInFlight: 500 }, updateMask: { paths: ["max_in_flight"] } });
    await settings.getByRole("button", { name: "Save configuration" }).click();
    await expect
      .poll(async () => (await rpc.getQueue({ name: "shared" })).queue!.config!.visibilityTimeout?.seconds, {
        timeout: uiTimeoutMs,
      })
      .toBe(75n);
    expect((await rpc.getQueue({ name: "shared" })).queue!.config).toMatchObject({
      maxInFlight: 500,
      tags: { team: "ops" },
    });
    await page.context().close();
  });

  it("browses messages without leasing them: the receive count stays 0, and a receive is still the first delivery", async () => {
    const rpc = h.rpc();
    await rpc.createQueue({ name: "browse" });
    const { messageId } = await rpc.send({
      queue: "browse",
      body: text('{"customer": 7}'),
      attributes: { kind: "invoice" },
    });
    const page = await openPage(browser, `${h.consoleUrl}#/queues/browse/messages`);
    await expect
      .poll(() => page.getByTestId(`receive-count-${messageId}`).textContent(), { timeout: uiTimeoutMs })
      .toBe("0");
    expect(await page.getByTestId(`state-${messageId}`).textContent()).toBe("Visible");
    // A compact row opens to the whole message.
    await page.getByTestId(`row-${messageId}`).click();
    await expect
      .poll(() => page.locator(".message-row").first().textContent(), { timeout: uiTimeoutMs })
      .toContain('"customer": 7');
    await page.getByRole("button", { name: "Hex" }).click();
    await expect
      .poll(() => page.locator(".message-row").first().textContent(), { timeout: uiTimeoutMs })
      .toContain("7b");
    await screenshot(page, "messages");
    expect(await seriousViolations(page)).toEqual([]);
    await page.reload();
    await expect
      .poll(() => page.getByTestId(`receive-count-${messageId}`).textContent(), { timeout: uiTimeoutMs })
      .toBe("0");
    const { messages } = await rpc.receive({ queue: "browse" });
    expect(messages.map((m) => [m.messageId, m.receiveCount])).toEqual([[messageId, 1]]);
    await page.context().close();
  });

  it("redrives dead letters as a rate-limited task, shows its progress to the end, and the messages arrive", async () => {
    const rpc = h.rpc();
    await rpc.createQueue({ name: "work-dlq" });
    await rpc.createQueue({
      name: "work",
      config: { redrivePolicy: { deadLetterQueue: "work-dlq", maxReceiveCount: 1 } },
    });
    const count = 12;
    await rpc.sendBatch({
      queue: "work",
      entries: Array.from({ length: count }, (_, i) => ({ id: `m${i}`, body: text(`job ${i}`) })),
    });
    // One delivery each, given back at once: the next receive finds them spent and dead-letters them.
    const first = await rpc.receive({ queue: "work", maxMessages: count });
    expect(first.messages).toHaveLength(count);
    await rpc.changeVisibilityBatch({
      queue: "work",
      receiptHandles: first.messages.map((m) => m.receiptHandle),
      visibilityTimeout: {},
    });
    await rpc.receive({ queue: "work", maxMessages: count });
    await expect
      .poll(async () => (await rpc.getQueue({ name: "work-dlq" })).queue!.stats!.visible, { timeout: uiTimeoutMs })
      .toBe(BigInt(count));

    const page = await openPage(browser, `${h.consoleUrl}#/queues/work-dlq/redrive`);
    const redrive = page.getByRole("form", { name: "Start a redrive" });
    await redrive.getByLabel("Rate limit, messages per second (optional)").fill("2");
    const startedAt = Date.now();
    await redrive.getByRole("button", { name: "Start redrive" }).click();
    await expect
      .poll(() => page.getByTestId("move-task-total").first().textContent(), { timeout: uiTimeoutMs })
      .toBe(String(count));
    // Shown live: a running task part of the way through (at 2 a second, 12 messages take about 5 s).
    await expect
      .poll(
        async () => {
          const status = await page.getByTestId("move-task-status").first().textContent();
          const moved = Number(await page.getByTestId("move-task-moved").first().textContent());
          return status === "RUNNING" && moved > 0 && moved < count;
        },
        { timeout: uiTimeoutMs, interval: 100 },
      )
      .toBe(true);
    await screenshot(page, "redrive-running");
    await expect
      .poll(() => page.getByTestId("move-task-status").first().textContent(), { timeout: 30_000 })
      .toBe("COMPLETED");
    expect(await page.getByTestId("move-task-moved").first().textContent()).toBe(String(count));
    // Paced at 2 a second, 12 messages take five more seconds after the first two: the rate limit held (a lower bound holds on any machine).
    expect(Date.now() - startedAt).toBeGreaterThan(4_000);
    await screenshot(page, "redrive-done");
    expect(await seriousViolations(page)).toEqual([]);
    const work = (await rpc.getQueue({ name: "work" })).queue!.stats!;
    expect(work.visible).toBe(BigInt(count));
    expect((await rpc.getQueue({ name: "work-dlq" })).queue!.stats!.visible).toBe(0n);
    await page.context().close();
  }, 60_000);

  it("purges after a confirmation that names the queue and the count, and cancels with Escape", async () => {
    const rpc = h.rpc();
    await rpc.createQueue({ name: "purgeable" });
    for (let i = 0; i < 4; i++) await rpc.send({ queue: "purgeable", body: text(`p${i}`) });
    const page = await openPage(browser, `${h.consoleUrl}#/queues/purgeable`);
    await expect.poll(() => page.getByTestId("queue-visible").textContent(), { timeout: uiTimeoutMs }).toBe("4");
    const purge = page.getByRole("button", { name: "Purge…" });
    // By keyboard: Enter opens the dialog, focus is on Cancel, Escape closes it and focus returns.
    await purge.focus();
    await page.keyboard.press("Enter");
    const dialog = page.getByRole("dialog", { name: "Purge purgeable?" });
    await expect.poll(() => dialog.isVisible(), { timeout: uiTimeoutMs }).toBe(true);
    expect(await dialog.textContent()).toContain("Purge 4 messages from purgeable?");
    expect(await focused(page, "textContent")).toBe("Cancel");
    await screenshot(page, "purge-dialog");
    expect(await seriousViolations(page)).toEqual([]);
    await page.keyboard.press("Escape");
    await expect.poll(() => dialog.isVisible(), { timeout: uiTimeoutMs }).toBe(false);
    expect(await focused(page, "textContent")).toBe("Purge…");
    expect((await rpc.getQueue({ name: "purgeable" })).queue!.stats!.visible).toBe(4n);

    await purge.click();
    await dialog.getByRole("button", { name: "Purge 4 messages" }).click();
    await expect
      .poll(() => page.getByTestId("notice").textContent(), { timeout: uiTimeoutMs })
      .toContain("Purged 4 messages from purgeable.");
    expect((await rpc.getQueue({ name: "purgeable" })).queue!.stats!.visible).toBe(0n);
    await page.context().close();
  });

  it("is usable by keyboard from the top: skip link, filter, and a queue's link", async () => {
    const page = await openPage(browser, `${h.consoleUrl}#/queues`);
    await expect.poll(() => page.getByTestId("visible-orders").textContent(), { timeout: uiTimeoutMs }).toBe("3");
    await page.keyboard.press("Tab");
    expect(await focused(page, "textContent")).toBe("Skip to main content");
    await page.keyboard.press("Enter");
    expect(await focused(page, "id")).toBe("main");
    // Tab onwards until the filter has focus, then type into it.
    for (let i = 0; i < 10 && (await focused(page, "type")) !== "search"; i++) {
      await page.keyboard.press("Tab");
    }
    await page.keyboard.type("bill");
    await expect.poll(() => rowNames(page), { timeout: uiTimeoutMs }).toEqual(["billing"]);
    await page.getByRole("link", { name: "billing", exact: true }).focus();
    await page.keyboard.press("Enter");
    await expect
      .poll(() => page.getByRole("heading", { level: 1 }).textContent(), { timeout: uiTimeoutMs })
      .toBe("Queue billing");
    // The new page's heading takes focus, so a screen reader announces where the user is.
    await expect.poll(() => focused(page, "tagName"), { timeout: uiTimeoutMs }).toBe("H1");
    await page.context().close();
  });
});

describe.skipIf(skipWithoutChromium)(
  "the console in Chromium, on a broker with an auth file",
  { timeout: testTimeoutMs },
  () => {
    let browser: Browser;
    let h: ConsoleHarness;
    let sender: { token: string };
    beforeAll(async () => {
      const { makeToken } = await import("../../security/auth-harness.js");
      const ops = makeToken("ops", { queues: "*", allow: ["admin", "send", "receive"] });
      const orderSender = makeToken("sender", { queues: "orders", allow: ["send"] });
      sender = orderSender;
      browser = await launchChromium();
      h = await startConsoleHarness({ tokens: [ops, orderSender] });
      await h.rpc(ops.token).createQueue({ name: "orders" });
      await h.rpc(ops.token).createQueue({ name: "payroll" });
      await h.rpc(ops.token).send({ queue: "orders", body: text("order 1") });
    }, 60_000);
    afterAll(async () => {
      await browser?.close();
      await h?.stop();
    });

    it("asks for a token, shows a send-only token only its queue, and shows it a purge disabled with the reason", async () => {
      const page = await openPage(browser, h.consoleUrl);
      await expect
        .poll(() => page.getByRole("heading", { level: 1 }).textContent(), { timeout: uiTimeoutMs })
        .toBe("Sign in");
      await screenshot(page, "sign-in");
      expect(await seriousViolations(page)).toEqual([]);
      await page.getByLabel("Access token").fill("not-a-token");
      await page.getByRole("button", { name: "Sign in" }).click();
      await expect
        .poll(() => page.getByRole("alert").first().textContent(), { timeout: uiTimeoutMs })
        .toContain("not valid");

      await page.getByLabel("Access token").fill(sender.token);
      await page.getByRole("button", { name: "Sign in" }).click();
      // Signed in, the Overview opens: a token without admin on every queue sees no broker status, and is told why.
      await expect
        .poll(() => page.getByRole("heading", { level: 1 }).textContent(), { timeout: uiTimeoutMs })
        .toBe("Overview");
      await expect
        .poll(() => page.getByTestId("brokers-denied").textContent(), { timeout: uiTimeoutMs })
        .toMatch(/^Broker status is not shown: .+\.$/);
      expect(await page.getByTestId("total-queues").textContent()).toBe("1");
      await screenshot(page, "overview-limited-token");
      expect(await seriousViolations(page)).toEqual([]);
      await page.getByRole("link", { name: "Queues", exact: true }).click();
      await expect.poll(() => rowNames(page), { timeout: uiTimeoutMs }).toEqual(["orders"]);
      // The token is nowhere the page's script can reach.
      // (Evaluated as text: this file is compiled without the DOM's types.)
      const stored = await page.evaluate<string>(
        "JSON.stringify({ local: { ...localStorage }, session: { ...sessionStorage }, cookie: document.cookie })",
      );
      expect(stored).not.toContain(sender.token);

      await page.goto(`${h.consoleUrl}#/queues/orders`);
      const purge = page.getByRole("button", { name: "Purge…" });
      await expect.poll(() => purge.isDisabled(), { timeout: uiTimeoutMs }).toBe(true);
      expect(await page.locator(`[id="${await purge.getAttribute("aria-describedby")}"]`).textContent()).toBe(
        "needs admin permission on orders",
      );
      await screenshot(page, "permission-denied");
      expect((await h.rpc(sender.token).getQueue({ name: "orders" })).queue!.stats!.visible).toBe(1n);
      await page.context().close();
    });
  },
);

/** The queue names of the queue table's rows, in their order. */
function rowNames(page: Page): Promise<string[]> {
  return page
    .locator("tbody th[scope=row]")
    .allTextContents()
    .then((names) => names.map((name) => name.trim()));
}

/** A property of the focused element, read in the page (as text: this file is compiled without the DOM's types). */
function focused(page: Page, property: "textContent" | "id" | "tagName" | "type"): Promise<string | undefined> {
  return page.evaluate<string | undefined>(`document.activeElement?.${property}`);
}

/** Whether the broker's recent samples of a queue show a rate above zero (the list's sparkline data). */
async function anyRate(h: ConsoleHarness, queue: string, rate: "sent" | "received" | "deleted"): Promise<boolean> {
  const browser = h.browser();
  await browser.session();
  const row = (await browser.api("GET", "/api/queues")).body.queues.find((q: { name: string }) => q.name === queue);
  return (row?.rates[rate] ?? []).some((value: number) => value > 0);
}

/** Whether the broker's history has sampled a queue yet (its marks are then true or false, not null). */
async function isSampled(h: ConsoleHarness, queue: string): Promise<boolean> {
  const browser = h.browser();
  await browser.session();
  const row = (await browser.api("GET", "/api/queues")).body.queues.find((q: { name: string }) => q.name === queue);
  return row !== undefined && row.deadLettering !== null;
}
