// The update_mask paths UpdateQueue takes are exactly QueueConfig's fields:
// a field added to the proto without a path here fails this test.
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { QueueConfigSchema } from "../../gen/holdshelf/v1/queue_pb.js";
import { UpdateQueueRequestSchema } from "../../gen/holdshelf/v1/queue_service_pb.js";
import { configFieldOfPath, queueUpdateFromWire } from "../../src/service/queue-update-wire.js";

describe("update_mask paths", () => {
  it("name every field of QueueConfig and nothing else", () => {
    expect(Object.keys(configFieldOfPath).sort()).toEqual(QueueConfigSchema.fields.map((field) => field.name).sort());
  });

  it('give the broker the named fields in the mask\'s order, and none for "*"', () => {
    const request = (paths: string[]) =>
      create(UpdateQueueRequestSchema, { name: "q", config: { maxInFlight: 5 }, updateMask: { paths } });
    const update = queueUpdateFromWire(request(["tags", "max_in_flight"]));
    expect(update.fields).toEqual(["tags", "maxInFlight"]);
    expect(update.config).toMatchObject({ maxInFlight: 5, tags: {} });
    expect(queueUpdateFromWire(request(["*"])).fields).toBeUndefined();
  });
});

describe("update_mask paths of one tag", () => {
  const request = (paths: string[], tags: Record<string, string> = {}) =>
    create(UpdateQueueRequestSchema, { name: "q", config: { tags, maxInFlight: 5 }, updateMask: { paths } });

  it("give the broker each named tag, reading from config.tags only the keys named", () => {
    const update = queueUpdateFromWire(request(["tags.team", "tags.`team-a`", "max_in_flight"], { team: "x", y: "z" }));
    expect(update.fields).toEqual([{ tag: "team" }, { tag: "team-a" }, "maxInFlight"]);
    expect(update.config.tags).toEqual({ team: "x" });
  });

  it("refuse a malformed path, a key of a field without keys, a repeated key, and tags beside one tag", () => {
    const bad = [
      ["tags.team-a"],
      ["tags.`a"],
      ["redrive_policy.max_receive_count"],
      ["retry_policy.`x`"],
      ["nope.a"],
      ["tags.a", "tags.a"],
      ["tags.team", "tags.`team`"],
      ["tags", "tags.a"],
      ["tags.`a b`", "tags"],
    ];
    for (const paths of bad) {
      expect(() => queueUpdateFromWire(request(paths)), paths.join()).toThrow(
        expect.objectContaining({
          reason: "INVALID_ARGUMENT",
          violations: [expect.objectContaining({ field: "update_mask" })],
        }),
      );
    }
  });
});
