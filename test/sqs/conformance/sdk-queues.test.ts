/**
 * What AWS answered about queues (aws-queues.ts) through @aws-sdk/client-sqs:
 * the attributes of new standard and FIFO queues, attribute by attribute,
 * the encryption attributes and a tag lifecycle. Rows with a known
 * difference (the item) are asserted to fail until it is fixed.
 */
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ListQueueTagsCommand,
  SetQueueAttributesCommand,
  TagQueueCommand,
  UntagQueueCommand,
} from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSqsHarness, testAccountId, type SqsHarness } from "../sqs-harness.js";
import {
  encryptionChanges,
  fifoQueueDefaults,
  knownDifferences,
  queueOwnAttributes,
  standardQueueDefaults,
  tagSteps,
} from "./aws-queues.js";

/** `it`, or `it.fails` titled with the item, for a row that names these attributes. */
const row = (attributes: readonly string[]) => {
  const items = [...new Set(attributes.flatMap((name) => knownDifferences[name] ?? []))];
  return items.length === 0
    ? { test: it, note: "" }
    : { test: it.fails, note: ` (known difference, #35 item ${items.join(", ")})` };
};

describe("AWS's recorded queue answers over the JSON protocol (@aws-sdk/client-sqs)", () => {
  let h: SqsHarness;
  let attributesOf: { standard: Record<string, string>; fifo: Record<string, string> };
  beforeAll(async () => {
    h = await startSqsHarness();
    await h.sqs.send(new CreateQueueCommand({ QueueName: "aws-defaults" }));
    await h.sqs.send(
      new CreateQueueCommand({
        QueueName: "aws-defaults.fifo",
        Attributes: { FifoQueue: "true", ContentBasedDeduplication: "true" },
      }),
    );
    const all = async (queue: string) =>
      (await h.sqs.send(new GetQueueAttributesCommand({ QueueUrl: h.urlOf(queue), AttributeNames: ["All"] })))
        .Attributes!;
    attributesOf = { standard: await all("aws-defaults"), fifo: await all("aws-defaults.fifo") };
  });
  afterAll(async () => {
    await h?.stop();
  });

  for (const [kind, defaults] of [
    ["standard", standardQueueDefaults],
    ["fifo", fifoQueueDefaults],
  ] as const) {
    for (const [name, value] of Object.entries(defaults)) {
      const { test, note } = row([name]);
      test(`a new ${kind} queue has ${name}=${value}${note}`, () => {
        expect(attributesOf[kind][name]).toBe(value);
      });
    }

    // Which names come back: MaximumMessageSize is there, only its value differs.
    const { test, note } = row(Object.keys(defaults).filter((name) => name !== "MaximumMessageSize"));
    test(`"All" returns AWS's attributes of a new ${kind} queue, and no others${note}`, () => {
      expect(Object.keys(attributesOf[kind]).sort()).toEqual([...Object.keys(defaults), ...queueOwnAttributes].sort());
    });

    it(`a new ${kind} queue's ARN and timestamps are its own`, () => {
      const name = kind === "fifo" ? "aws-defaults.fifo" : "aws-defaults";
      expect(attributesOf[kind].QueueArn).toBe(`arn:aws:sqs:us-east-1:${testAccountId}:${name}`);
      expect(attributesOf[kind].CreatedTimestamp).toMatch(/^\d{10}$/);
      expect(attributesOf[kind].LastModifiedTimestamp).toBe(attributesOf[kind].CreatedTimestamp);
    });
  }

  encryptionChanges.forEach(({ set, reads }, index) => {
    const { test, note } = row(Object.keys(reads));
    test(`SetQueueAttributes ${JSON.stringify(set)} reads back as AWS's${note}`, async () => {
      const QueueUrl = h.urlOf(`aws-sse-${index}`);
      await h.sqs.send(new CreateQueueCommand({ QueueName: `aws-sse-${index}` }));
      await h.sqs.send(new SetQueueAttributesCommand({ QueueUrl, Attributes: set }));
      const { Attributes } = await h.sqs.send(
        new GetQueueAttributesCommand({ QueueUrl, AttributeNames: Object.keys(reads) as never }),
      );
      expect(Attributes).toEqual(reads);
    });
  });

  it("tags and untags a queue, and lists its tags after each step as AWS did", async () => {
    const QueueUrl = (await h.sqs.send(new CreateQueueCommand({ QueueName: "aws-tags" }))).QueueUrl!;
    for (const step of tagSteps) {
      if (step.tag !== undefined) await h.sqs.send(new TagQueueCommand({ QueueUrl, Tags: step.tag }));
      if (step.untag !== undefined) await h.sqs.send(new UntagQueueCommand({ QueueUrl, TagKeys: [...step.untag] }));
      expect((await h.sqs.send(new ListQueueTagsCommand({ QueueUrl }))).Tags).toEqual(step.lists);
    }
  });
});
