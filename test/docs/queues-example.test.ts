// The queue definitions example of docs/operations.md ("Queues as code") is
// a file holdshelf reads and applies as the page says: dead-letter queues
// first.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parseQueueDefinitions } from "../../src/server/queue-definitions.js";
import { planQueueChanges } from "../../src/server/queue-plan.js";

const page = readFileSync(fileURLToPath(new URL("../../docs/operations.md", import.meta.url)), "utf8");

describe("docs/operations.md's queue definitions example", () => {
  it("parses, and plans the dead-letter queue before the queue that uses it", () => {
    const section = page.slice(page.indexOf("## Queues as code"));
    const example = /```json\n([\s\S]*?)```/.exec(section)?.[1];
    expect(example).toBeDefined();
    const plan = planQueueChanges(parseQueueDefinitions(example!, "operations.md"), [], {
      deleteMissing: false,
      prefix: "",
    });
    expect(plan.changes.map((change) => `${change.action} ${change.queue}`)).toEqual([
      "create jobs-dlq",
      "create jobs",
      "create orders.fifo",
    ]);
  });
});
