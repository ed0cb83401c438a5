// A queue record's SQS settings (accessPolicy, sqsEncryption, new in 0.2.0):
// left out of records of queues without them, so those records stay as
// 0.1.0 wrote them, read back as written, and what release 0.1.0's own codec
// (from its package, test/fixtures/release-0.1.0) does with a record that
// has them: it reads the queue, and drops them when it writes the record
// again (docs/upgrading.md says so).
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultQueueConfig } from "../../src/broker/queue-config.js";
import type { QueueRecord } from "../../src/store/store.js";
import { decodeQueueRecord, encodeQueueRecord } from "../../src/store/value-codecs.js";
import { unpackRelease } from "../support/release-0.1.0.js";
import { makeTempDir } from "../support/temp-dir.js";
import { t0 } from "./store-fixtures.js";

type Codec = { encodeQueueRecord(record: unknown): Buffer; decodeQueueRecord(value: Buffer): QueueRecord };

const standard: QueueRecord = {
  name: "q",
  queueId: 1,
  dataId: 2,
  config: defaultQueueConfig,
  createTime: t0,
  updateTime: t0,
};
const sqsSettings = {
  accessPolicy: '{"Version":"2012-10-17","Statement":[]}',
  sqsEncryption: { kmsMasterKeyId: "alias/app", kmsDataKeyReusePeriodMs: 600_000, sqsManagedSseEnabled: false },
};
const withSettings: QueueRecord = { ...standard, config: { ...standard.config, ...sqsSettings } };

describe("a queue record's SQS settings", () => {
  let dir: Awaited<ReturnType<typeof makeTempDir>>;
  let release010: Codec;
  beforeAll(async () => {
    dir = await makeTempDir();
    await unpackRelease(dir.path);
    release010 = (await import(join(dir.path, "package", "dist", "src", "store", "value-codecs.js"))) as Codec;
  }, 60_000);
  afterAll(async () => {
    await dir?.remove();
  });

  it("are left out of a record without them, and read back as written", () => {
    const json = JSON.parse(encodeQueueRecord(standard).toString("utf8")) as { config: object };
    expect(Object.keys(json.config)).not.toContain("accessPolicy");
    expect(Object.keys(json.config)).not.toContain("sqsEncryption");
    expect(encodeQueueRecord(standard)).toEqual(release010.encodeQueueRecord(standard));
    expect(decodeQueueRecord(encodeQueueRecord(withSettings))).toEqual(withSettings);
  });

  it("are read past by release 0.1.0, which drops them when it writes the record again", () => {
    const read = release010.decodeQueueRecord(encodeQueueRecord(withSettings));
    // Its reader spreads the stored config: the queue reads whole, the unknown fields riding along unused.
    expect(read).toEqual(withSettings);
    const rewritten = decodeQueueRecord(release010.encodeQueueRecord(read));
    expect(rewritten).toEqual(standard);
  });
});
