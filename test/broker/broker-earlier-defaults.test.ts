// max_message_bytes's default rose to 1 MiB in 0.2.0. A queue stored with the
// default before it, 262144, keeps it: a whole configuration that leaves the
// field unset (a CreateQueue of the queue again, an UpdateQueue without
// fields) means 262144 for that queue, not today's default. The release
// fixture test (test/store/release-0.1.0-message-size.test.ts) runs the same
// over gRPC on 0.1.0's own data.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { earlierDefaultMaxMessageBytes } from "../../src/broker/queue-config.js";
import { expectFailure, openBrokerHarness, type BrokerHarness } from "./broker-harness.js";

const mib = 1_048_576;

describe("max_message_bytes of a queue stored at the earlier default", () => {
  let h: BrokerHarness;
  beforeEach(async () => {
    h = await openBrokerHarness();
    // As 0.1.0 stored a queue created with nothing set.
    await h.broker.createQueue("old", { maxMessageBytes: earlierDefaultMaxMessageBytes });
  });
  afterEach(async () => {
    expect(h.backgroundErrors).toEqual([]);
    await h.dispose();
  });

  const sizeOf = (name: string) => h.broker.getQueue(name).config.maxMessageBytes;

  it("is 262144, and a new queue's default is 1 MiB", async () => {
    expect(earlierDefaultMaxMessageBytes).toBe(262_144);
    expect((await h.broker.createQueue("new")).config.maxMessageBytes).toBe(mib);
  });

  it("matches a CreateQueue that leaves it unset, not one that names another size", async () => {
    expect((await h.broker.createQueue("old")).config.maxMessageBytes).toBe(earlierDefaultMaxMessageBytes);
    await expectFailure(() => h.broker.createQueue("old", { maxMessageBytes: mib }), "QUEUE_ALREADY_EXISTS");
  });

  it("stays through an UpdateQueue without fields that leaves it unset, and survives a restart", async () => {
    await h.broker.updateQueue("old", { maxInFlight: 5 });
    await h.restart();
    expect(h.broker.getQueue("old").config).toMatchObject({ maxInFlight: 5, maxMessageBytes: 262_144 });
  });

  it("takes today's default when an update names the field without a value", async () => {
    await h.broker.updateQueue("old", {}, ["maxMessageBytes"]);
    expect(sizeOf("old")).toBe(mib);
  });

  it("is kept only at the earlier default: a queue of another size takes today's default when unset", async () => {
    await h.broker.createQueue("other", { maxMessageBytes: 4096 });
    await expectFailure(() => h.broker.createQueue("other"), "QUEUE_ALREADY_EXISTS");
    await h.broker.updateQueue("other", {});
    expect(sizeOf("other")).toBe(mib);
  });
});
