// The console's forms in Chromium (issue #36 item 5): the Create queue
// dialog and a queue page's tabs by keyboard, every refused field marked at
// once, durations read as the CLI reads them ("30" is 30 s), and what a
// send-only token may not do shown disabled with the reason. Screenshots land
// in test-output/console/docs/, from where docs/console.md's are refreshed.
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeToken, type TestToken } from "../../security/auth-harness.js";
import { startConsoleHarness, type ConsoleHarness } from "../console-harness.js";
import { launchChromium, openPage, screenshot, seriousViolations, skipWithoutChromium } from "./chromium-session.js";

// Generous: Chromium and the broker share two loaded cores in CI.
const uiTimeoutMs = 15_000;
const testTimeoutMs = 60_000;

describe.skipIf(skipWithoutChromium)("the console's forms in Chromium", { timeout: testTimeoutMs }, () => {
  let browser: Browser;
  let h: ConsoleHarness;
  beforeAll(async () => {
    browser = await launchChromium();
    h = await startConsoleHarness();
    await h.rpc().createQueue({ name: "existing" });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await h?.stop();
  });

  it("opens the Create queue dialog by keyboard, focuses the name, and gives focus back when Escape closes it", async () => {
    const page = await openPage(browser, `${h.consoleUrl}#/queues`);
    const open = page.getByRole("button", { name: "Create queue…" });
    await expect.poll(() => open.isEnabled(), { timeout: uiTimeoutMs }).toBe(true);
    // The list is not filled by the form: only the button is there until it is pressed.
    expect(await page.getByLabel("Queue name").count()).toBe(0);
    await open.focus();
    await page.keyboard.press("Enter");
    const dialog = page.getByRole("dialog", { name: "Create a queue" });
    await expect.poll(() => dialog.isVisible(), { timeout: uiTimeoutMs }).toBe(true);
    expect(await focused(page, "id")).toBe("create-name");
    await screenshot(page, "docs/create-queue-dialog");
    expect(await seriousViolations(page)).toEqual([]);
    await page.keyboard.press("Escape");
    await expect.poll(() => dialog.isVisible(), { timeout: uiTimeoutMs }).toBe(false);
    // Focus goes back once the page has rendered the closed dialog away, a moment after it closes.
    await expect.poll(() => focused(page, "textContent"), { timeout: uiTimeoutMs }).toBe("Create queue…");
    await page.context().close();
  });

  it("marks every field it cannot read at once, then every field the broker refuses at once, and stores nothing", async () => {
    const page = await openPage(browser, `${h.consoleUrl}#/queues`);
    await page.getByRole("button", { name: "Create queue…" }).click();
    const form = page.getByRole("dialog").getByRole("form", { name: "Create a queue" });
    await form.getByLabel("Queue name").fill("refused");
    await form.getByLabel("Delivery delay").fill("soon");
    await form.getByLabel("Max message size (bytes)").fill("12o00");
    await form.getByLabel("Dead-letter queue", { exact: true }).fill("existing");
    await form.getByRole("button", { name: "Create queue" }).click();
    // The page's own check: all three at once, in words, before anything is sent.
    for (const label of ["Delivery delay", "Max message size (bytes)", "Max receive count"]) {
      await expect
        .poll(() => form.getByLabel(label, { exact: true }).getAttribute("aria-invalid"), { timeout: uiTimeoutMs })
        .toBe("true");
    }
    expect(await describedText(page, form.getByLabel("Delivery delay"))).toContain(
      "must be a duration such as 30 (seconds)",
    );
    expect(await describedText(page, form.getByLabel("Max receive count"))).toContain(
      "required with a dead-letter queue",
    );
    expect(await form.getByRole("alert").first().textContent()).toContain("Check 3 fields");

    // Readable now, but out of the broker's bounds: the broker names every one in one answer.
    await form.getByLabel("Delivery delay").fill("");
    await form.getByLabel("Max message size (bytes)").fill("");
    await form.getByLabel("Dead-letter queue", { exact: true }).fill("");
    await form.getByLabel("Retention").fill("30s");
    await form.getByLabel("Max in flight").fill("-1");
    await form.getByLabel("Max lease duration").fill("8d");
    await form.getByRole("button", { name: "Create queue" }).click();
    for (const label of ["Retention", "Max in flight", "Max lease duration"]) {
      await expect
        .poll(() => form.getByLabel(label).getAttribute("aria-invalid"), { timeout: uiTimeoutMs })
        .toBe("true");
    }
    expect(await form.getByLabel("Delivery delay").getAttribute("aria-invalid")).toBeNull();
    expect(await describedText(page, form.getByLabel("Retention"))).toContain("must be between 60s and 1209600s");
    expect(await form.getByRole("alert").first().textContent()).toContain("The broker refused 3 fields");
    // No decoder text anywhere on the page.
    expect(await page.locator("body").textContent()).not.toMatch(/expected number|int32|cannot decode/);
    await screenshot(page, "docs/create-queue-errors");
    expect(await seriousViolations(page)).toEqual([]);
    expect((await h.rpc().listQueues({})).queues.map((q) => q.name)).toEqual(["existing"]);
    await page.context().close();
  });

  it("reads a duration of 30 as 30 s, as the CLI does, in the create form and in the settings tab", async () => {
    const page = await openPage(browser, `${h.consoleUrl}#/queues`);
    await page.getByRole("button", { name: "Create queue…" }).click();
    const form = page.getByRole("dialog").getByRole("form", { name: "Create a queue" });
    await form.getByLabel("Queue name").fill("thirty");
    await form.getByLabel("Visibility timeout").fill("30");
    await expect.poll(() => page.getByTestId("create-visibilityTimeout-meaning").textContent()).toBe("= 30 s. ");
    await form.getByLabel("Retention").fill("1h30m");
    await form.getByRole("button", { name: "Create queue" }).click();
    await expect
      .poll(() => page.getByTestId("notice").textContent(), { timeout: uiTimeoutMs })
      .toContain("Created queue thirty.");
    const created = (await h.rpc().getQueue({ name: "thirty" })).queue!.config!;
    expect([created.visibilityTimeout!.seconds, created.retention!.seconds]).toEqual([30n, 5400n]);

    await page.goto(`${h.consoleUrl}#/queues/thirty/settings`);
    const settings = page.getByRole("form", { name: "Configuration" });
    // Shown as an operator writes it.
    await expect.poll(() => settings.getByLabel("Retention").inputValue(), { timeout: uiTimeoutMs }).toBe("1h30m");
    await settings.getByLabel("Visibility timeout").fill("90");
    await settings.getByRole("button", { name: "Save configuration" }).click();
    await expect
      .poll(async () => (await h.rpc().getQueue({ name: "thirty" })).queue!.config!.visibilityTimeout!.seconds, {
        timeout: uiTimeoutMs,
      })
      .toBe(90n);
    await page.context().close();
  });

  it("has tabs at linkable fragments, usable by keyboard, with the settings on their own tab", async () => {
    const page = await openPage(browser, `${h.consoleUrl}#/queues/existing`);
    const tabs = page.getByRole("navigation", { name: "Queue existing" });
    await expect.poll(() => tabs.isVisible(), { timeout: uiTimeoutMs }).toBe(true);
    expect(await tabs.getByRole("link").allTextContents()).toEqual(["Overview", "Messages", "Send", "Settings"]);
    expect(await tabs.getByRole("link", { name: "Overview" }).getAttribute("aria-current")).toBe("page");
    // The overview holds no form: the settings are a tab away.
    expect(await page.getByRole("form", { name: "Configuration" }).count()).toBe(0);
    await tabs.getByRole("link", { name: "Settings" }).focus();
    await page.keyboard.press("Enter");
    await expect
      .poll(() => page.evaluate<string>("location.hash"), { timeout: uiTimeoutMs })
      .toBe("#/queues/existing/settings");
    await expect
      .poll(() => page.getByRole("form", { name: "Configuration" }).count(), { timeout: uiTimeoutMs })
      .toBe(1);
    expect(await tabs.getByRole("link", { name: "Settings" }).getAttribute("aria-current")).toBe("page");
    expect(await page.getByTestId("queue-visible").count()).toBe(0);
    await screenshot(page, "docs/queue-settings-tab");
    expect(await seriousViolations(page)).toEqual([]);
    // Back goes back a tab.
    await page.goBack();
    await expect.poll(() => page.getByTestId("queue-visible").count(), { timeout: uiTimeoutMs }).toBe(1);
    await page.context().close();
  });
});

describe.skipIf(skipWithoutChromium)("the console's forms for a send-only token", { timeout: testTimeoutMs }, () => {
  let browser: Browser;
  let h: ConsoleHarness;
  let sender: TestToken;
  beforeAll(async () => {
    const ops = makeToken("ops", { queues: "*", allow: ["admin", "send", "receive"] });
    sender = makeToken("sender", { queues: "jobs", allow: ["send"] });
    browser = await launchChromium();
    h = await startConsoleHarness({ tokens: [ops, sender] });
    await h.rpc(ops.token).createQueue({ name: "jobs" });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await h?.stop();
  });

  it("shows what it may not do disabled with the reason, and lets it send", async () => {
    const page = await openPage(browser, `${h.consoleUrl}#/queues`);
    await page.getByLabel("Access token").fill(sender.token);
    await page.getByRole("button", { name: "Sign in" }).click();
    const create = page.getByRole("button", { name: "Create queue…" });
    await expect.poll(() => create.isDisabled(), { timeout: uiTimeoutMs }).toBe(true);
    expect(await describedText(page, create)).toBe("needs admin permission on the new queue's name");

    await page.goto(`${h.consoleUrl}#/queues/jobs`);
    const purge = page.getByRole("button", { name: "Purge…" });
    await expect.poll(() => purge.isDisabled(), { timeout: uiTimeoutMs }).toBe(true);
    expect(await describedText(page, purge)).toBe("needs admin permission on jobs");
    expect(await page.getByRole("button", { name: "Delete queue…" }).isDisabled()).toBe(true);
    // Browsing messages needs admin too: the tab says so instead of linking to a refusal.
    const tabs = page.getByRole("navigation", { name: "Queue jobs" });
    expect(await tabs.getByRole("link", { name: "Messages" }).count()).toBe(0);
    expect(await tabs.textContent()).toContain("Messages (needs admin permission on jobs)");
    await screenshot(page, "docs/send-only-queue");
    expect(await seriousViolations(page)).toEqual([]);

    await tabs.getByRole("link", { name: "Settings" }).click();
    const save = page.getByRole("button", { name: "Save configuration" });
    await expect.poll(() => save.isDisabled(), { timeout: uiTimeoutMs }).toBe(true);
    expect(await describedText(page, save)).toBe("needs admin permission on jobs");
    await screenshot(page, "send-only-settings");
    expect(await seriousViolations(page)).toEqual([]);

    await tabs.getByRole("link", { name: "Send" }).click();
    const send = page.getByRole("form", { name: "Send a test message" });
    await send.getByLabel("Message body").fill("hello");
    await send.getByLabel("Delay (optional)").fill("30");
    await send.getByRole("button", { name: "Send message" }).click();
    await expect
      .poll(() => page.getByTestId("notice").textContent(), { timeout: uiTimeoutMs })
      .toContain("Sent message");
    // Sent with a 30 s delay: delayed, not visible.
    expect((await h.rpc(sender.token).getQueue({ name: "jobs" })).queue!.stats!.delayed).toBe(1n);

    // The Cluster page says in words why it shows nothing, not a refusal.
    await page.goto(`${h.consoleUrl}#/cluster`);
    await expect
      .poll(() => page.getByTestId("cluster-denied").textContent(), { timeout: uiTimeoutMs })
      .toBe('Cluster status is not shown: needs admin on every queue (a grant of admin on "*").');
    expect(await page.getByRole("alert").count()).toBe(0);
    expect(await seriousViolations(page)).toEqual([]);
    await page.context().close();
  });
});

/** A property of the focused element, read in the page (as text: this file is compiled without the DOM's types). */
function focused(page: Page, property: "textContent" | "id"): Promise<string | undefined> {
  return page.evaluate<string | undefined>(`document.activeElement?.${property}`);
}

/** The text of the elements a control's aria-describedby names, as a screen reader reads them. */
async function describedText(page: Page, control: ReturnType<Page["getByLabel"]>): Promise<string> {
  const ids = ((await control.getAttribute("aria-describedby")) ?? "").split(" ").filter((id) => id !== "");
  return (await Promise.all(ids.map((id) => page.locator(`[id="${id}"]`).textContent()))).join(" ");
}
