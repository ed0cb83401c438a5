import { createHmac } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  counts,
  createQueue,
  expectFailure,
  openBrokerHarness,
  receiveOne,
  sendText,
  type BrokerHarness,
} from "./broker-harness.js";

// Leases held across an upgrade from 0.1: their consumers still hold the
// HMAC-tagged (version 1) handles that release issued, and must be able to
// act on them with every fencing rule intact.
describe("receipt handles issued by holdshelf 0.1", () => {
  let h: BrokerHarness;

  beforeEach(async () => {
    h = await openBrokerHarness();
    await createQueue(h, "q", { visibilityTimeoutMs: 30_000 });
  });

  afterEach(async () => {
    await h.dispose();
  });

  /** The version 1 handle of the same delivery as a handle this broker issued, tagged as 0.1 tagged it. */
  async function asVersionOne(handle: string): Promise<string> {
    const { handleKey } = await h.store.load();
    const body = Buffer.from(handle, "base64url").subarray(0, 25);
    expect(body[0]).toBe(2);
    body[0] = 1;
    const tag = createHmac("sha256", handleKey).update(body).digest().subarray(0, 16);
    return Buffer.concat([body, tag]).toString("base64url");
  }

  it("extend, release and delete the delivery they name", async () => {
    await sendText(h, "q", "held across the upgrade");
    const delivery = await receiveOne(h, "q");
    const old = await asVersionOne(delivery.receiptHandle);

    const deadline = await h.broker.changeVisibility("q", old, 60_000);
    expect(deadline).toBe(h.clock.now() + 60_000);
    await h.broker.delete("q", old);
    expect(counts(h, "q")).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
  });

  it("are superseded once the message is received again, and refused on another queue", async () => {
    await createQueue(h, "other");
    await sendText(h, "q", "m");
    const first = await receiveOne(h, "q");
    const old = await asVersionOne(first.receiptHandle);
    await h.broker.changeVisibility("q", first.receiptHandle, 0);
    await receiveOne(h, "q");

    await expectFailure(() => h.broker.delete("q", old), "LEASE_SUPERSEDED");
    await expectFailure(() => h.broker.delete("other", old), "RECEIPT_HANDLE_INVALID", "receipt_handle");
    expect(counts(h, "q")).toEqual({ visible: 0, inFlight: 1, delayed: 0 });
  });
});
