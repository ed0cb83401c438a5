import { describe, expect, it } from "vitest";
import { MessageState } from "../../../gen/holdshelf/v1/message_pb.js";
import type { Epoch } from "./crash-epoch.js";
import { TASKS } from "./crash-queues.js";
import type { Lease } from "./lease-calls.js";
import { Ledger } from "./ledger.js";
import { waitUntilReleased } from "./released-leases.js";

// The check that a killed release_on_disconnect consumer's leases end at
// once, against a queue whose peeks are written by hand.

const lease: Lease = {
  delivery: {
    messageId: "m1",
    uid: "u1",
    queue: TASKS,
    handle: "h1",
    start: 0,
    end: 10,
    visibilityMs: 3000,
    receiveCount: 1,
    drain: false,
    wire: "grpc",
  },
  poison: false,
};

/** An epoch whose queue holds m1 in the states `peeks` gives, one per peek (the last one repeated). */
function epochPeeking(peeks: { state: MessageState; receiveCount: number }[]): Epoch {
  let calls = 0;
  const peekMessages = async () => {
    const peek = peeks[Math.min(calls++, peeks.length - 1)]!;
    return { messages: [{ messageId: "m1", ...peek }], nextPageToken: "" };
  };
  return { address: "", rpc: { peekMessages } as unknown as Epoch["rpc"], sqs: undefined, killing: false };
}

describe("waitUntilReleased", () => {
  it("returns once the message is visible again, or received again", async () => {
    for (const back of [
      { state: MessageState.VISIBLE, receiveCount: 1 },
      { state: MessageState.IN_FLIGHT, receiveCount: 2 },
    ]) {
      const ledger = new Ledger();
      const epoch = epochPeeking([{ state: MessageState.IN_FLIGHT, receiveCount: 1 }, back]);
      expect(await waitUntilReleased(epoch, ledger, TASKS, [lease], Date.now(), 1000)).toBeGreaterThanOrEqual(0);
      expect(ledger.unexpected).toEqual([]);
    }
  });

  it("catches a lease still held after the limit: the broker let it run to its deadline", async () => {
    const ledger = new Ledger();
    const epoch = epochPeeking([{ state: MessageState.IN_FLIGHT, receiveCount: 1 }]);
    expect(await waitUntilReleased(epoch, ledger, TASKS, [lease], Date.now(), 100)).toBeUndefined();
    expect(ledger.unexpected).toEqual([
      expect.stringMatching(/^m1 still leased \d+ ms after the release_on_disconnect/),
    ]);
  });
});
