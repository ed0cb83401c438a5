import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { QueueSchema, type Queue, type QueueConfig } from "../../gen/holdshelf/v1/queue_pb.js";
import { applyQueues, type QueueAdmin } from "../../src/server/apply-queues.js";
import { parseQueueDefinitions, QueueDefinitionsError } from "../../src/server/queue-definitions.js";

const options = { dryRun: false, deleteMissing: false, prefix: "" };

/** An admin whose broker gains `raced` between the listing and the create, as another broker's apply would make it. */
function racingAdmin(raced: Queue): QueueAdmin & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    listQueues: async () => [],
    getQueue: async (name) => {
      calls.push(`get ${name}`);
      return raced;
    },
    createQueue: async (name) => {
      calls.push(`create ${name}`);
      return name === raced.name ? "exists" : "created";
    },
    updateQueue: async (name: string, config: QueueConfig) => {
      calls.push(`update ${name} ${config.visibilityTimeout?.seconds}s`);
    },
    deleteQueue: async () => undefined,
  };
}

const file = (config: object) =>
  parseQueueDefinitions(JSON.stringify({ version: 1, queues: [{ name: "q", config }] }), "f.json");

describe("applyQueues", () => {
  it("updates a queue another apply created meanwhile with another configuration", async () => {
    const admin = racingAdmin(create(QueueSchema, { name: "q", config: { visibilityTimeout: { seconds: 5n } } }));
    await applyQueues(admin, file({ visibilityTimeout: "9s" }), options);
    expect(admin.calls).toEqual(["create q", "get q", "update q 9s"]);
  });

  it("refuses one created meanwhile with another FIFO-ness", async () => {
    const admin = racingAdmin(create(QueueSchema, { name: "q", config: { fifo: true } }));
    await expect(applyQueues(admin, file({}), options)).rejects.toThrow(QueueDefinitionsError);
    expect(admin.calls).toEqual(["create q", "get q"]);
  });

  it("makes no call but the listing in a dry run", async () => {
    const admin = racingAdmin(create(QueueSchema, { name: "other" }));
    const outcome = await applyQueues(admin, file({}), { ...options, dryRun: true });
    expect(outcome.changes).toMatchObject([{ action: "create", queue: "q" }]);
    expect(admin.calls).toEqual([]);
  });
});
