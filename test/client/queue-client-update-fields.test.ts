// QueueClient.updateQueue with `fields` (UpdateQueue's update_mask) against a
// real server on every store: only the named fields change, no fields still
// replaces everything, tagKeys set or remove single tags (keys that need
// backticks included), an empty list or "tags" beside tagKeys is refused
// before any call, and every field the client can name is the update_mask
// path the server reads for it.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { updateMaskToWire } from "../../src/client/client-convert.js";
import { QueueClient } from "../../src/client/queue-client.js";
import type { QueueConfigField } from "../../src/client/types.js";
import { configFieldOfPath } from "../../src/service/queue-update-wire.js";
import { startGrpcHarness, type GrpcHarness } from "../support/grpc-harness.js";

const redrivePolicy = { deadLetterQueue: "dlq", maxReceiveCount: 3 };

describe("QueueClient.updateQueue with fields", () => {
  let h: GrpcHarness;
  let client: QueueClient;
  beforeEach(async () => {
    h = await startGrpcHarness();
    client = new QueueClient(h.server.address);
    await client.createQueue("dlq");
    await client.createQueue("work", { redrivePolicy, tags: { team: "a" } });
  });
  afterEach(async () => {
    client.close();
    await h.stop();
  });

  it("changes only the named fields, and a named field left unset takes its default", async () => {
    const updated = await client.updateQueue(
      "work",
      { visibilityTimeoutMs: 60_000, delayMs: 5000 },
      {
        fields: ["visibilityTimeoutMs"],
      },
    );
    expect(updated.config).toMatchObject({
      visibilityTimeoutMs: 60_000,
      delayMs: 0,
      redrivePolicy,
      tags: { team: "a" },
    });
    const cleared = await client.updateQueue("work", {}, { fields: ["redrivePolicy"] });
    expect(cleared.config.redrivePolicy).toBeUndefined();
    expect(cleared.config).toMatchObject({ visibilityTimeoutMs: 60_000, tags: { team: "a" } });
  });

  it("replaces the whole configuration without fields, as before", async () => {
    const updated = await client.updateQueue("work", { visibilityTimeoutMs: 60_000 });
    expect(updated.config.redrivePolicy).toBeUndefined();
    expect(updated.config.tags).toEqual({});
  });

  it("refuses an empty list, and a name that is no field, before calling", async () => {
    await expect(client.updateQueue("work", {}, { fields: [] })).rejects.toThrow(RangeError);
    await expect(
      client.updateQueue("work", {}, { fields: ["visibility_timeout" as QueueConfigField] }),
    ).rejects.toThrow(RangeError);
    expect((await client.getQueue("work")).config.redrivePolicy).toEqual(redrivePolicy);
  });

  it("sets or removes single tags with tagKeys, beside fields or alone, and keeps the other tags", async () => {
    await client.updateQueue("work", { tags: { env: "prod", "a`b c": "1" } }, { tagKeys: ["env", "a`b c"] });
    const updated = await client.updateQueue(
      "work",
      { tags: { env: "dev", ignored: "x" }, maxInFlight: 7 },
      { fields: ["maxInFlight"], tagKeys: ["env", "team"] },
    );
    expect(updated.config).toMatchObject({ tags: { env: "dev", "a`b c": "1" }, maxInFlight: 7, redrivePolicy });
  });

  it('refuses an empty tagKeys, and "tags" beside tagKeys, before calling', async () => {
    await expect(client.updateQueue("work", {}, { tagKeys: [] })).rejects.toThrow(RangeError);
    await expect(client.updateQueue("work", {}, { fields: ["tags"], tagKeys: ["team"] })).rejects.toThrow(RangeError);
    expect((await client.getQueue("work")).config.tags).toEqual({ team: "a" });
  });

  it("names each field by the path the server maps back to it", () => {
    const fields = Object.values(configFieldOfPath) as QueueConfigField[];
    const { paths } = updateMaskToWire({ fields })!;
    expect(paths.map((path) => configFieldOfPath[path as keyof typeof configFieldOfPath])).toEqual(fields);
  });
});
