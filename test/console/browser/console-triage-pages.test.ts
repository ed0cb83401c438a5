// Dead-letter triage in Chromium, as an operator does it at 3 a.m.: a
// dead-letter queue filled by maxReceiveCount, searched, a message opened to
// its kept history, one moved back, one deleted, one sent again edited;
// a screenshot at each step (test-output/console/) and axe's checks.
import { mkdir } from "node:fs/promises";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createQueueServiceRpc, type QueueServiceRpc } from "../../../src/client/rpc-client.js";
import type { HoldshelfServer } from "../../../src/server/holdshelf-server.js";
import { makeToken } from "../../security/auth-harness.js";
import { queueOn } from "../../support/cluster-brokers.js";
import { skipWithoutPostgres, startPostgres, type PostgresServer } from "../../support/postgres-server.js";
import { settledRoutes, startClusterMember } from "../../support/test-cluster.js";
import { startConsoleHarness } from "../console-harness.js";
import {
  launchChromium,
  openPage,
  screenshot,
  screenshotDir,
  seriousViolations,
  skipWithoutChromium,
} from "./chromium-session.js";

// Generous: Chromium and the broker share two loaded cores in CI.
const uiTimeoutMs = 15_000;
const testTimeoutMs = 90_000;
const text = (body: string) => new TextEncoder().encode(body);
// A full date with milliseconds and the UTC offset, as the message browser writes every time.
const fullDate = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3} UTC[+-]\d{2}:\d{2}$/;

/** Sends `count` messages to `work` and dead-letters them all (maxReceiveCount 1): received once, given back, spent at the next receive. */
export async function fillDeadLetterQueue(
  rpc: QueueServiceRpc,
  work: string,
  dlq: string,
  count: number,
): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const sent = await rpc.send({
      queue: work,
      body: text(JSON.stringify({ customer: i, amount: -i })),
      attributes: { kind: i % 2 === 0 ? "invoice" : "refund" },
    });
    ids.push(sent.messageId);
  }
  const first = await rpc.receive({ queue: work, maxMessages: count });
  expect(first.messages).toHaveLength(count);
  await rpc.changeVisibilityBatch({
    queue: work,
    receiptHandles: first.messages.map((m) => m.receiptHandle),
    visibilityTimeout: {},
  });
  await rpc.receive({ queue: work, maxMessages: count });
  await expect
    .poll(async () => (await rpc.getQueue({ name: dlq })).queue!.stats!.visible, { timeout: uiTimeoutMs })
    .toBe(BigInt(count));
  return ids;
}

/** The whole page's screenshot, and for the docs (docs/console/triage-*.png) the top 1280 × 800 of it. */
export async function triageScreenshot(page: Page, name: string, forDocs = false): Promise<void> {
  await screenshot(page, name);
  if (!forDocs) return;
  await mkdir(`${screenshotDir}docs/`, { recursive: true });
  await page.screenshot({ path: `${screenshotDir}docs/${name}.png`, clip: { x: 0, y: 0, width: 1280, height: 800 } });
}

/**
 * The triage walk over a console at `consoleUrl` (signed in already on
 * `page`, or needing no sign-in) whose `dlq` holds the dead letters `ids`
 * from `work`; `shots` prefixes the screenshots' names.
 */
export async function walkTriage(
  page: Page,
  rpc: QueueServiceRpc,
  options: { consoleUrl: string; work: string; dlq: string; ids: readonly string[]; shots: string; forDocs: boolean },
): Promise<void> {
  const { consoleUrl, work, dlq, ids, shots, forDocs } = options;
  const row = (id: string) => page.locator(".message-row", { has: page.getByTestId(`row-${id}`) });
  await page.goto(`${consoleUrl}#/queues/${dlq}/messages`);
  await expect
    .poll(() => page.getByTestId("message-count").textContent(), { timeout: uiTimeoutMs })
    .toBe(`${ids.length} messages on this page.`);
  // Compact rows: the kept receive count and the source, without opening any.
  expect(await page.getByTestId(`receive-count-${ids[0]}`).textContent()).toBe("1");
  expect(await page.getByTestId(`dead-letter-${ids[0]}`).textContent()).toContain(`from ${work}`);
  await triageScreenshot(page, `${shots}-rows`, forDocs);
  expect(await seriousViolations(page)).toEqual([]);

  // Search the bodies: one match, and how much of the queue was read.
  const search = page.getByRole("form", { name: "Search messages" });
  await search.getByLabel("Search in").selectOption("body");
  await search.getByLabel("Search for").fill('"CUSTOMER":3');
  await search.getByRole("button", { name: "Search", exact: true }).click();
  await expect
    .poll(() => page.getByTestId("search-status").textContent(), { timeout: uiTimeoutMs })
    .toBe(`1 match in ${ids.length} messages read, to the end of the queue.`);
  const found = ids[3]!;
  expect(await page.locator(".message-row").count()).toBe(1);
  await triageScreenshot(page, `${shots}-search`, forDocs);

  // Open it by keyboard: its kept receive count, first receive and dead-lettered time, with full dates.
  await page.getByTestId(`row-${found}`).focus();
  await page.keyboard.press("Enter");
  await expect
    .poll(() => page.getByTestId(`kept-receive-count-${found}`).textContent(), { timeout: uiTimeoutMs })
    .toBe("1");
  expect(await page.getByTestId(`dead-lettered-at-${found}`).textContent()).toMatch(fullDate);
  expect(await page.getByTestId(`kept-first-receive-${found}`).textContent()).toMatch(fullDate);
  expect(await page.getByTestId(`dead-letter-reason-${found}`).textContent()).not.toBe("");
  expect(await row(found).textContent()).toContain('"customer": 3');
  await triageScreenshot(page, `${shots}-message`, forDocs);
  expect(await seriousViolations(page)).toEqual([]);

  // Move it back to its source, confirmed in a dialog.
  await row(found).getByRole("button", { name: "Move…" }).click();
  const moveDialog = page.getByRole("dialog");
  expect(await moveDialog.getByLabel("Move to").inputValue()).toBe("");
  expect(await moveDialog.textContent()).toContain(`Its dead-letter source, ${work}`);
  await triageScreenshot(page, `${shots}-move`);
  expect(await seriousViolations(page)).toEqual([]);
  await moveDialog.getByRole("button", { name: "Move message" }).click();
  await expect
    .poll(() => page.getByTestId("notice").textContent(), { timeout: uiTimeoutMs })
    .toBe(`Moved message ${found} to ${work}.`);
  expect(await page.locator(".message-row").count()).toBe(0);
  expect((await rpc.peekMessages({ queue: work })).messages.map((m) => m.messageId)).toEqual([found]);

  // Back to browsing: delete one.
  await search.getByRole("button", { name: "Clear search" }).click();
  const doomed = ids[0]!;
  await page.getByTestId(`row-${doomed}`).click();
  await row(doomed).getByRole("button", { name: "Delete…" }).click();
  const deleteDialog = page.getByRole("dialog");
  expect(await deleteDialog.textContent()).toContain(doomed);
  await triageScreenshot(page, `${shots}-delete`);
  await deleteDialog.getByRole("button", { name: "Delete message" }).click();
  await expect
    .poll(() => page.getByTestId("notice").textContent(), { timeout: uiTimeoutMs })
    .toBe(`Deleted message ${doomed} from ${dlq}.`);
  expect(await page.getByTestId(`row-${doomed}`).count()).toBe(0);

  // Send an edited copy of another to its source; the original stays.
  const fixed = ids[1]!;
  await page.getByTestId(`row-${fixed}`).click();
  await row(fixed).getByRole("button", { name: "Send edited copy…" }).click();
  const copyDialog = page.getByRole("dialog");
  await copyDialog.getByLabel("Body of the copy").fill('{"customer": 1, "amount": 1}');
  await triageScreenshot(page, `${shots}-copy`, forDocs);
  expect(await seriousViolations(page)).toEqual([]);
  await copyDialog.getByRole("button", { name: "Send copy" }).click();
  await expect
    .poll(() => page.getByTestId("notice").textContent(), { timeout: uiTimeoutMs })
    .toMatch(new RegExp(`^Sent copy \\S+ of message ${fixed} to ${work}\\.$`));
  const inWork = (await rpc.peekMessages({ queue: work })).messages;
  expect(inWork.map((m) => new TextDecoder().decode(m.body))).toContain('{"customer": 1, "amount": 1}');
  expect(inWork.find((m) => m.messageId !== found)?.attributes).toEqual({ kind: "refund" });
  const left = (await rpc.peekMessages({ queue: dlq })).messages.map((m) => m.messageId);
  // In any order: in cluster mode dead letters arrive through the owner's inbox, not in send order.
  expect(left.sort()).toEqual(ids.filter((id) => id !== found && id !== doomed).sort());
  await triageScreenshot(page, `${shots}-done`);
}

describe.skipIf(skipWithoutChromium)("dead-letter triage in Chromium", { timeout: testTimeoutMs }, () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });

  it("fills a dead-letter queue, searches it, opens a message's history, moves one back, deletes one, and sends an edited copy", async () => {
    const h = await startConsoleHarness({ history: { sampleIntervalMs: 1_000, samples: 60 } });
    try {
      const rpc = h.rpc();
      await rpc.createQueue({ name: "payments-dlq" });
      await rpc.createQueue({
        name: "payments",
        config: { redrivePolicy: { deadLetterQueue: "payments-dlq", maxReceiveCount: 1 } },
      });
      const ids = await fillDeadLetterQueue(rpc, "payments", "payments-dlq", 5);
      const page = await openPage(browser, h.consoleUrl);
      await walkTriage(page, rpc, {
        consoleUrl: h.consoleUrl,
        work: "payments",
        dlq: "payments-dlq",
        ids,
        shots: "triage",
        forDocs: true,
      });
      await page.context().close();
    } finally {
      await h.stop();
    }
  });

  it("searches further from where a search stopped, adding the next matches below", async () => {
    const h = await startConsoleHarness({ history: { sampleIntervalMs: 3_600_000, samples: 60 } });
    try {
      const rpc = h.rpc();
      await rpc.createQueue({ name: "haystack" });
      for (let batch = 0; batch < 2; batch++) {
        await rpc.sendBatch({
          queue: "haystack",
          entries: Array.from({ length: 100 }, (_, i) => ({ id: `m${i}`, body: text(`hay ${batch * 100 + i}`) })),
        });
      }
      const page = await openPage(browser, `${h.consoleUrl}#/queues/haystack/messages`);
      const search = page.getByRole("form", { name: "Search messages" });
      await search.getByLabel("Search for").fill("HAY");
      // Enter submits the search, as a form does.
      await search.getByLabel("Search for").press("Enter");
      // A search stops after the page that brings it 100 matches, and says it may go on.
      await expect
        .poll(() => page.getByTestId("search-status").textContent(), { timeout: uiTimeoutMs })
        .toBe("100 matches in 100 messages read; a search reads at most 10,000 messages at a time.");
      await triageScreenshot(page, "triage-search-further");
      await page.getByRole("button", { name: "Search further" }).click();
      await expect
        .poll(() => page.getByTestId("search-status").textContent(), { timeout: uiTimeoutMs })
        .toBe("200 matches in 200 messages read, to the end of the queue.");
      expect(await page.locator(".message-row").count()).toBe(200);
      expect(await page.getByRole("button", { name: "Search further" }).count()).toBe(0);
      await page.context().close();
    } finally {
      await h.stop();
    }
  });

  it("offers destinations by what the token may do there, and shows a token without admin the broker's refusal", async () => {
    const ops = makeToken("ops", { queues: "*", allow: ["admin", "send", "receive"] });
    // Admin on the dead-letter queue only: it may read and act there, but move nowhere named and send nowhere.
    const triager = makeToken("triager", { queues: "work-dlq", allow: ["admin"] }, { queues: "work", allow: ["send"] });
    const reader = makeToken("reader", { queues: "work-dlq", allow: ["receive"] });
    const h = await startConsoleHarness({ tokens: [ops, triager, reader] });
    try {
      const rpc = h.rpc(ops.token);
      await rpc.createQueue({ name: "work-dlq" });
      await rpc.createQueue({
        name: "work",
        config: { redrivePolicy: { deadLetterQueue: "work-dlq", maxReceiveCount: 1 } },
      });
      const [id] = await fillDeadLetterQueue(rpc, "work", "work-dlq", 1);
      const page = await openPage(browser, h.consoleUrl);
      await page.getByLabel("Access token").fill(triager.token);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.waitForSelector("h1");
      await page.goto(`${h.consoleUrl}#/queues/work-dlq/messages`);
      await page.getByTestId(`row-${id}`).click();
      await page.getByRole("button", { name: "Move…" }).click();
      // The source needs no admin to go back to; "work" as a named destination does.
      const destinations = page.getByRole("dialog").getByLabel("Move to");
      expect(await destinations.locator("option[value='work']").textContent()).toBe("work (needs admin)");
      expect(await destinations.locator("option[value='work']").isDisabled()).toBe(true);
      await page.getByRole("dialog").getByRole("button", { name: "Cancel" }).click();
      await page.getByRole("button", { name: "Send edited copy…" }).click();
      // The copy goes to the source by default, where this token may send.
      await page.getByRole("dialog").getByRole("button", { name: "Send copy" }).click();
      await expect
        .poll(() => page.getByTestId("notice").textContent(), { timeout: uiTimeoutMs })
        .toContain(`of message ${id} to work.`);
      await triageScreenshot(page, "triage-permissions");
      await page.context().close();

      // A token without admin cannot peek the queue at all: the broker's refusal is shown, and no action is offered.
      const readerPage = await openPage(browser, h.consoleUrl);
      await readerPage.getByLabel("Access token").fill(reader.token);
      await readerPage.getByRole("button", { name: "Sign in" }).click();
      await readerPage.waitForSelector("h1");
      await readerPage.goto(`${h.consoleUrl}#/queues/work-dlq/messages`);
      await expect
        .poll(() => readerPage.getByRole("alert").first().textContent(), { timeout: uiTimeoutMs })
        .toContain("no admin permission");
      expect(await readerPage.getByRole("button", { name: "Delete…" }).count()).toBe(0);
      expect(await seriousViolations(readerPage)).toEqual([]);
      await triageScreenshot(readerPage, "triage-no-admin");
      await readerPage.context().close();
    } finally {
      await h.stop();
    }
  });
});

// Three brokers over one PostgreSQL: the console's broker owns no shards, so
// the dead-letter queue, its source, and every call the page makes are
// another broker's, and the dead-letter moves cross between the two owners.
describe.skipIf(skipWithoutChromium || skipWithoutPostgres)(
  "dead-letter triage in Chromium on a three-broker cluster",
  { timeout: testTimeoutMs },
  () => {
    let browser: Browser;
    let postgres: PostgresServer;
    let owners: HoldshelfServer[];
    let entry: HoldshelfServer;
    let rpc: QueueServiceRpc & { close(): void };
    beforeAll(async () => {
      browser = await launchChromium();
      postgres = await startPostgres();
      const url = await postgres.createDatabase();
      owners = [await startClusterMember(url, "owner-1"), await startClusterMember(url, "owner-2")];
      entry = await startClusterMember(url, "entry", { routeOnly: true, consoleListen: "127.0.0.1:0" });
      await settledRoutes(entry, owners);
      rpc = createQueueServiceRpc(entry.address);
    }, 60_000);
    afterAll(async () => {
      rpc?.close();
      await browser?.close();
      await entry?.shutdown();
      await Promise.all((owners ?? []).map((owner) => owner.shutdown()));
      await postgres?.stop();
    });

    it("walks the same triage on a dead-letter queue and a source that other brokers own", async () => {
      const members = ["owner-1", "owner-2"];
      const work = queueOn("owner-1", members, "pay");
      const dlq = queueOn("owner-2", members, "pay-dlq");
      await rpc.createQueue({ name: dlq });
      await rpc.createQueue({ name: work, config: { redrivePolicy: { deadLetterQueue: dlq, maxReceiveCount: 1 } } });
      const ids = await fillDeadLetterQueue(rpc, work, dlq, 5);
      const page = await openPage(browser, entry.consoleUrl!);
      await walkTriage(page, rpc, {
        consoleUrl: entry.consoleUrl!,
        work,
        dlq,
        ids,
        shots: "triage-cluster",
        forDocs: false,
      });
      await page.context().close();
    });
  },
);
