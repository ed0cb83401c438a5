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
