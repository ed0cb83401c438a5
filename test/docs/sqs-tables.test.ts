/**
 * docs/sqs.md's tables of actions and queue attributes, held to the
 * endpoint's own tables (src/sqs/actions/sqs-actions.ts, queue-attributes.ts)
 * so that they cannot drift: one row per action the endpoint dispatches and
 * per attribute GetQueueAttributes knows, nothing else, each with the status
 * the endpoint gives it. The differences table names every issue #35 item
 * the conformance suite still finds.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { QueueConfigSchema } from "../../gen/holdshelf/v1/queue_pb.js";
import { sqsActions } from "../../src/sqs/actions/sqs-actions.js";
import { applyQueueAttributes, queueAttributeNames } from "../../src/sqs/queue-attributes.js";
import { QueueUrls } from "../../src/sqs/queue-urls.js";
import { SqsError } from "../../src/sqs/sqs-error.js";
import { awsErrorCases } from "../sqs/conformance/aws-errors.js";
import { attributeFilters } from "../sqs/conformance/aws-messages.js";
import { knownDifferences } from "../sqs/conformance/aws-queues.js";
import { tableUnder } from "./markdown-tables.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
const page = "docs/sqs.md";
const unquoted = (cell: string) => cell.replace(/^`|`$/g, "");

/** What the endpoint answers an action whatever its input: UnsupportedOperation, or anything else. */
async function refusesAlways(name: string): Promise<boolean> {
  // No input and no context: an action that serves fails on them otherwise, a refused one ignores them.
  const outcome = await Promise.resolve()
    .then(() => sqsActions[name]!(undefined as never, undefined as never))
    .then(
      () => undefined,
      (error: unknown) => error,
    );
  return outcome instanceof SqsError && outcome.legacyCode === "AWS.SimpleQueueService.UnsupportedOperation";
}

/** The status setting an attribute gets from the endpoint: read only, no (unsupported), or yes. */
function settingStatus(name: string): string {
  const urls = new QueueUrls({ baseUrl: "http://127.0.0.1:9324", accountId: "000000000000", region: "us-east-1" });
  // A FIFO queue's configuration, so that the FIFO attributes are known; any value: only the refusal's reason counts.
  const config = create(QueueConfigSchema, { fifo: true });
  try {
    applyQueueAttributes(config, new Map([[name, "x"]]), urls);
  } catch (error) {
    if (error instanceof SqsError && error.legacyCode === "InvalidAttributeName") {
      if (/read-only/.test(error.message)) return "read only";
      if (/not supported/.test(error.message)) return "no";
    }
  }
  return "yes";
}

describe("docs/sqs.md's tables", () => {
  const actions = tableUnder(root, page, "## Actions");
  const attributes = tableUnder(root, page, "### Queue attributes");

  it("has one row per action the endpoint dispatches, and no others", () => {
    const names = actions.map(([action]) => action!);
    expect([...names].sort()).toEqual(Object.keys(sqsActions).sort());
    expect(new Set(names).size).toBe(names.length);
  });

  it('says "no" of exactly the actions the endpoint answers UnsupportedOperation', async () => {
    for (const [action, supported] of actions) {
      expect({ action, supported }).toEqual({ action, supported: (await refusesAlways(action!)) ? "no" : "yes" });
    }
  });

  it("has one row per queue attribute the endpoint knows, and no others", () => {
    const names = attributes.map(([name]) => unquoted(name!));
    expect([...names].sort()).toEqual([...queueAttributeNames].sort());
    expect(new Set(names).size).toBe(names.length);
  });

  it("gives each attribute the status setting it gets", () => {
    for (const [cell, supported] of attributes) {
      const name = unquoted(cell!);
      // FifoThroughputLimit is accepted and not stored: a "yes" with a note.
      expect({ name, supported: supported!.replace(/^yes, not stored$/, "yes") }).toEqual({
        name,
        supported: settingStatus(name),
      });
    }
  });

  it("lists every issue #35 item the conformance suite still finds in its differences from AWS", () => {
    const listed = new Set(tableUnder(root, page, "## Differences from AWS").map((row) => row[2]));
    const found = [
      ...awsErrorCases.flatMap((c) => c.differs?.item ?? []),
      ...Object.values(knownDifferences),
      ...attributeFilters.flatMap((filter) => filter.item ?? []),
    ];
    for (const item of new Set(found)) expect(listed).toContain(`#35 item ${item}`);
  });

  it("links every row of the differences table to a status it defines", () => {
    const text = readFileSync(`${root}/${page}`, "utf8");
    expect(text).toContain('"open" ones are known and undecided');
    for (const [difference, , status] of tableUnder(root, page, "## Differences from AWS")) {
      expect({ difference, status }).toEqual({
        difference,
        status: expect.stringMatching(/^(#35 item \d+|deliberate|open)$/),
      });
    }
  });
});
