import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { QueueSchema, type Queue } from "../../gen/holdshelf/v1/queue_pb.js";
import { parseQueueDefinitions, QueueDefinitionsError } from "../../src/server/queue-definitions.js";
import { planQueueChanges } from "../../src/server/queue-plan.js";

const keep = { deleteMissing: false, prefix: "" };

/** Definitions from the queues' JSON configs. */
function file(queues: Record<string, object>): ReturnType<typeof parseQueueDefinitions> {
  const document = { version: 1, queues: Object.entries(queues).map(([name, config]) => ({ name, config })) };
  return parseQueueDefinitions(JSON.stringify(document), "test.json");
}

/** A broker's queue as GetQueue shows it, planned from a definition (with its dead-letter queue, if any). */
function onBroker(
  name: string,
  config: { redrivePolicy?: { deadLetterQueue: string; maxReceiveCount: number }; tags?: object },
): Queue {
  const dlq = config.redrivePolicy?.deadLetterQueue;
  const { changes } = planQueueChanges(file({ [name]: config, ...(dlq === undefined ? {} : { [dlq]: {} }) }), [], keep);
  const change = changes.find((planned) => planned.queue === name);
  return create(QueueSchema, { name, config: change?.action === "create" ? change.config : undefined });
}

describe("queue definitions", () => {
  it.each([
    ["not json", "not JSON"],
    ["[]", "not a queue definitions document"],
    ['{"version": 2, "queues": []}', "version 2 is not one this holdshelf reads (1)"],
    ['{"version": 1, "queues": [], "extra": 1}', 'the document has an unknown key "extra"'],
    ['{"version": 1, "queues": [{"name": "a", "settings": {}}]}', 'queues[0] has an unknown key "settings"'],
    ['{"version": 1, "queues": [{"name": "a", "config": {"visibilityTimeOut": "1s"}}]}', 'queues[0] ("a").config:'],
    ['{"version": 1, "queues": [{"name": "a"}, {"name": "a"}]}', 'queues[1]: queue "a" is defined twice'],
  ])("refuses %s", (text, message) => {
    expect(() => parseQueueDefinitions(text, "f.json")).toThrow(QueueDefinitionsError);
    expect(() => parseQueueDefinitions(text, "f.json")).toThrow(`f.json: ${message}`);
  });
});

describe("planQueueChanges", () => {
  it("creates dead-letter queues before their sources, and finds nothing to do the second time", () => {
    const definitions = file({
      a: { redrivePolicy: { deadLetterQueue: "m", maxReceiveCount: 3 } },
      m: { redrivePolicy: { deadLetterQueue: "z", maxReceiveCount: 3 } },
      z: {},
    });
    const plan = planQueueChanges(definitions, [], keep);
    expect(plan.changes.map((change) => `${change.action} ${change.queue}`)).toEqual([
      "create z",
      "create m",
      "create a",
    ]);
    const applied = plan.changes.map((change) =>
      create(QueueSchema, { name: change.queue, config: change.action === "create" ? change.config : undefined }),
    );
    expect(planQueueChanges(definitions, applied, keep)).toEqual({ changes: [], unchanged: ["a", "m", "z"] });
  });

  it("updates only what differs, with the broker's value and the file's", () => {
    const plan = planQueueChanges(
      file({ q: { visibilityTimeout: "60s" } }),
      [onBroker("q", { tags: { a: "b" } })],
      keep,
    );
    expect(plan.changes).toEqual([
      expect.objectContaining({
        action: "update",
        fields: { visibility_timeout: { from: "30s", to: "60s" }, tags: { from: { a: "b" }, to: undefined } },
      }),
    ]);
  });

  it("deletes only with deleteMissing, under the prefix, sources before their dead-letter queues", () => {
    const current = [
      onBroker("app-dlq", {}),
      onBroker("app-work", { redrivePolicy: { deadLetterQueue: "app-dlq", maxReceiveCount: 2 } }),
      onBroker("other", {}),
    ];
    expect(planQueueChanges(file({}), current, keep).changes).toEqual([]);
    const plan = planQueueChanges(file({}), current, { deleteMissing: true, prefix: "app-" });
    expect(plan.changes).toEqual([
      { action: "delete", queue: "app-work" },
      { action: "delete", queue: "app-dlq" },
    ]);
  });

  it.each([
    [{ a: { visibilityTimeout: "86400s" } }, [], 'queue "a": config.visibility_timeout'],
    [{ "a.fifo": {} }, [], 'a name ending in ".fifo" is for a FIFO queue'],
    [{ a: { redrivePolicy: { deadLetterQueue: "a", maxReceiveCount: 1 } } }, [], "names itself"],
    [
      { a: { redrivePolicy: { deadLetterQueue: "nowhere", maxReceiveCount: 1 } } },
      [],
      "neither in the file nor on the broker",
    ],
    [
      {
        a: { redrivePolicy: { deadLetterQueue: "b", maxReceiveCount: 1 } },
        b: { redrivePolicy: { deadLetterQueue: "a", maxReceiveCount: 1 } },
      },
      [],
      "the dead-letter queues form a cycle: a -> b -> a",
    ],
    [{ a: { fifo: true } }, [onBroker("a", {})], 'queue "a" is standard on the broker and FIFO in the file'],
    [
      { a: { fifo: true, redrivePolicy: { deadLetterQueue: "s", maxReceiveCount: 1 } } },
      [onBroker("s", {})],
      "must be too",
    ],
  ])("refuses %o before any change", (queues, current, message) => {
    expect(() => planQueueChanges(file(queues), current as Queue[], keep)).toThrow(QueueDefinitionsError);
    expect(() => planQueueChanges(file(queues), current as Queue[], keep)).toThrow(message);
  });

  it("refuses to delete a dead-letter queue a kept queue uses", () => {
    const current = [
      onBroker("dlq", {}),
      onBroker("work", { redrivePolicy: { deadLetterQueue: "dlq", maxReceiveCount: 2 } }),
    ];
    expect(() => planQueueChanges(file({}), current, { deleteMissing: true, prefix: "d" })).toThrow(
      'cannot delete "dlq": queue "work" keeps it as its dead-letter queue',
    );
    expect(() => planQueueChanges(file({ work: {} }), current, { deleteMissing: true, prefix: "" })).not.toThrow();
  });
});

describe("planQueueChanges and max_message_bytes's earlier default", () => {
  const at = (maxMessageBytes: number): Queue => {
    const queue = onBroker("q", {});
    queue.config!.maxMessageBytes = maxMessageBytes;
    return queue;
  };

  it("leaves a queue at 262144 as it is when the file leaves the field unset, and plans 1 MiB for a new one", () => {
    const plan = planQueueChanges(file({ q: {}, fresh: {} }), [at(262_144)], keep);
    expect(plan.unchanged).toEqual(["q"]);
    expect(plan.changes).toEqual([expect.objectContaining({ action: "create", queue: "fresh" })]);
    const created = plan.changes[0]!;
    expect(created.action === "create" && created.config.maxMessageBytes).toBe(1_048_576);
  });

  it("plans the change when the file names a size, or the queue has another", () => {
    const named = planQueueChanges(file({ q: { maxMessageBytes: 1_048_576 } }), [at(262_144)], keep);
    expect(named.changes).toEqual([
      expect.objectContaining({ action: "update", fields: { max_message_bytes: { from: 262_144, to: 1_048_576 } } }),
    ]);
    const other = planQueueChanges(file({ q: {} }), [at(4096)], keep);
    expect(other.changes).toEqual([
      expect.objectContaining({ action: "update", fields: { max_message_bytes: { from: 4096, to: 1_048_576 } } }),
    ]);
  });
});
