// SetQueueAttributes, TagQueue and UntagQueue send UpdateQueue an update_mask
// naming only what they change, TagQueue and UntagQueue one path per tag
// (tags.<key>) with no read first: racing each other and gRPC UpdateQueues
// of other fields, round after round, every change stays, and many tag
// changes of different keys at once lose none (on every store, and in the
// cluster run through the forwarding broker). The 50-tag limit holds for tags
// added at once. A SetQueueAttributes that names nothing stored
// (FifoThroughputLimit) changes nothing.
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ListQueueTagsCommand,
  SetQueueAttributesCommand,
  TagQueueCommand,
  UntagQueueCommand,
} from "@aws-sdk/client-sqs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DeduplicationScope } from "../../gen/holdshelf/v1/queue_pb.js";
import { expectSqsError } from "./expect-sqs-error.js";
import { startSqsHarness, testAccountId, type SqsHarness } from "./sqs-harness.js";

const redrivePolicy = JSON.stringify({
  deadLetterTargetArn: `arn:aws:sqs:us-east-1:${testAccountId}:dlq`,
  maxReceiveCount: 3,
});

describe("SQS attribute changes racing other changes", () => {
  let h: SqsHarness;
  beforeEach(async () => {
    h = await startSqsHarness();
    await h.sqs.send(new CreateQueueCommand({ QueueName: "dlq" }));
    await h.sqs.send(new CreateQueueCommand({ QueueName: "work", Attributes: { RedrivePolicy: redrivePolicy } }));
  });
  afterEach(async () => {
    await h.stop();
  });

  const setAttributes = (Attributes: Record<string, string>) =>
    h.sqs.send(new SetQueueAttributesCommand({ QueueUrl: h.urlOf("work"), Attributes }));

  it("keeps every change of two SetQueueAttributes, a TagQueue and a gRPC UpdateQueue made at once", async () => {
    for (let round = 1; round <= 15; round++) {
      await Promise.all([
        setAttributes({ VisibilityTimeout: String(round) }),
        setAttributes({ DelaySeconds: String(round) }),
        h.sqs.send(new TagQueueCommand({ QueueUrl: h.urlOf("work"), Tags: { round: String(round) } })),
        h.rpc.updateQueue({
          name: "work",
          config: { maxInFlight: 100 + round },
          updateMask: { paths: ["max_in_flight"] },
        }),
      ]);
      const { queue } = await h.rpc.getQueue({ name: "work" });
      expect({
        visibility: queue!.config!.visibilityTimeout?.seconds,
        delay: queue!.config!.delay?.seconds,
        tags: queue!.config!.tags,
        maxInFlight: queue!.config!.maxInFlight,
        deadLetterQueue: queue!.config!.redrivePolicy?.deadLetterQueue,
      }).toEqual({
        visibility: BigInt(round),
        delay: BigInt(round),
        tags: { round: String(round) },
        maxInFlight: 100 + round,
        deadLetterQueue: "dlq",
      });
    }
  });

  it("untags while another call changes the redrive policy, and keeps both", async () => {
    await h.sqs.send(new TagQueueCommand({ QueueUrl: h.urlOf("work"), Tags: { a: "1", b: "2" } }));
    await Promise.all([
      h.sqs.send(new UntagQueueCommand({ QueueUrl: h.urlOf("work"), TagKeys: ["a"] })),
      setAttributes({ RedrivePolicy: "" }),
    ]);
    expect((await h.sqs.send(new ListQueueTagsCommand({ QueueUrl: h.urlOf("work") }))).Tags).toEqual({ b: "2" });
    const { Attributes } = await h.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: h.urlOf("work"), AttributeNames: ["RedrivePolicy"] }),
    );
    expect(Attributes?.["RedrivePolicy"]).toBeUndefined();
  });

  const tag = (Tags: Record<string, string>) => h.sqs.send(new TagQueueCommand({ QueueUrl: h.urlOf("work"), Tags }));
  const untag = (TagKeys: string[]) => h.sqs.send(new UntagQueueCommand({ QueueUrl: h.urlOf("work"), TagKeys }));
  const tagsNow = async () => (await h.sqs.send(new ListQueueTagsCommand({ QueueUrl: h.urlOf("work") }))).Tags ?? {};

  it("loses no tag when many TagQueue and UntagQueue calls of different keys race, round after round", async () => {
    // Keys bare and in backticks on the wire: a dash, a dot, a space, a backtick.
    const oddKeys = ["team-a", "a.b", "with space", "x`y"];
    for (let round = 1; round <= 3; round++) {
      const removed = Array.from({ length: 12 }, (_, i) => `old${i}`);
      const added = [...Array.from({ length: 16 }, (_, i) => `new${i}`), ...oddKeys];
      await tag(Object.fromEntries(removed.map((key) => [key, "x"])));
      await Promise.all([
        ...added.map((key) => tag({ [key]: `r${round}` })),
        ...removed.map((key) => untag([key])),
        untag(oddKeys.map((key) => `${key}-absent`)),
        setAttributes({ VisibilityTimeout: String(round) }),
      ]);
      expect(await tagsNow()).toEqual(Object.fromEntries(added.map((key) => [key, `r${round}`])));
      const { queue } = await h.rpc.getQueue({ name: "work" });
      expect(queue!.config!.visibilityTimeout?.seconds).toBe(BigInt(round));
      expect(queue!.config!.redrivePolicy?.deadLetterQueue).toBe("dlq");
    }
  });

  it("keeps the 50-tag limit for tags added at once: of two racing additions to 49 tags, one fails", async () => {
    await tag(Object.fromEntries(Array.from({ length: 49 }, (_, i) => [`k${i}`, "v"])));
    const results = await Promise.allSettled([tag({ first: "1" }), tag({ second: "2" })]);
    expect(results.map((result) => result.status).sort()).toEqual(["fulfilled", "rejected"]);
    const failed = results.findIndex((result) => result.status === "rejected");
    await expectSqsError(
      Promise.reject((results[failed] as PromiseRejectedResult).reason),
      "InvalidParameterValue",
      400,
    );
    const tags = await tagsNow();
    expect(Object.keys(tags)).toHaveLength(50);
    expect(tags).toHaveProperty(failed === 0 ? "second" : "first");
    // Replacing a tag at the limit, and untagging a key twice in one call, are no error.
    await tag({ k0: "w" });
    await untag(["k1", "k1"]);
    expect(Object.keys(await tagsNow())).toHaveLength(49);
  });

  it("changes nothing stored for FifoThroughputLimit alone, keeping the FIFO settings and tags", async () => {
    await h.sqs.send(
      new CreateQueueCommand({
        QueueName: "f.fifo",
        Attributes: { FifoQueue: "true", ContentBasedDeduplication: "true", DeduplicationScope: "messageGroup" },
        tags: { team: "a" },
      }),
    );
    await h.sqs.send(
      new SetQueueAttributesCommand({
        QueueUrl: h.urlOf("f.fifo"),
        Attributes: { FifoThroughputLimit: "perMessageGroupId" },
      }),
    );
    const { queue } = await h.rpc.getQueue({ name: "f.fifo" });
    expect(queue!.config).toMatchObject({
      fifo: true,
      contentBasedDeduplication: true,
      deduplicationScope: DeduplicationScope.MESSAGE_GROUP,
      tags: { team: "a" },
    });
  });
});
