// ListQueues in cluster mode: the broker asked lists its own queues and
// every other owner's, merged in name order, a page at a time; page tokens
// name a queue, so one token resumes every broker's listing.
import { status } from "@grpc/grpc-js";
import { afterEach, beforeEach, expect, it } from "vitest";
import type { QueueServiceRpc } from "../../src/client/rpc-client.js";
import { expectRpcError } from "../support/expect-rpc-error.js";
import { deadPeer, describeForwarding, hintingRpc, startBroker, type TestBroker } from "./forwarding-harness.js";

/** Every page of a listing through `rpc`, as names. */
async function pages(rpc: QueueServiceRpc, prefix: string, pageSize: number): Promise<string[][]> {
  const listed: string[][] = [];
  let pageToken = "";
  do {
    const page = await rpc.listQueues({ prefix, pageSize, pageToken });
    listed.push(page.queues.map((queue) => queue.name));
    pageToken = page.nextPageToken;
  } while (pageToken !== "" && listed.length < 20);
  return listed;
}

describeForwarding("ListQueues across brokers", () => {
  let a: TestBroker;
  let b: TestBroker;
  let c: TestBroker;
  beforeEach(async () => {
    [a, b, c] = await Promise.all([startBroker("a"), startBroker("b"), startBroker("c")]);
    a.router.others = [b.peer, c.peer];
    const queues: [TestBroker, string[]][] = [
      [a, ["jobs-1", "jobs-4", "mail-a"]],
      [b, ["jobs-2", "jobs-5", "mail-b"]],
      [c, ["jobs-3", "jobs-6", "jobs-7", "mail-c", "solo-1", "solo-2", "solo-3"]],
    ];
    for (const [broker, names] of queues) for (const name of names) await broker.rpc.createQueue({ name });
  });
  afterEach(async () => {
    await Promise.all([a.stop(), b.stop(), c.stop()]);
  });

  it("merges every owner's queues in name order, page by page", async () => {
    expect(await pages(a.rpc, "jobs-", 2)).toEqual([
      ["jobs-1", "jobs-2"],
      ["jobs-3", "jobs-4"],
      ["jobs-5", "jobs-6"],
      ["jobs-7"],
    ]);
    expect(await pages(a.rpc, "jobs-", 7)).toEqual([
      ["jobs-1", "jobs-2", "jobs-3", "jobs-4", "jobs-5", "jobs-6", "jobs-7"],
    ]);
    // A page that ends exactly where one broker's queues do still says more are left at another.
    expect(await pages(a.rpc, "jobs-", 3)).toEqual([
      ["jobs-1", "jobs-2", "jobs-3"],
      ["jobs-4", "jobs-5", "jobs-6"],
      ["jobs-7"],
    ]);
    // A full page from one broker alone, which has more.
    expect(await pages(a.rpc, "solo-", 2)).toEqual([["solo-1", "solo-2"], ["solo-3"]]);
  });

  it("applies the prefix at every broker, and page size 0 as the default of 100", async () => {
    expect(await pages(a.rpc, "mail-", 0)).toEqual([["mail-a", "mail-b", "mail-c"]]);
    const all = await a.rpc.listQueues({});
    expect(all.queues).toHaveLength(13);
    expect(all.nextPageToken).toBe("");
    // The owners' answers carry their queues' details, not just names.
    expect(all.queues.find((queue) => queue.name === "jobs-5")).toEqual(
      (await b.rpc.getQueue({ name: "jobs-5" })).queue,
    );
  });

  it("lists only its own queues for a call another broker passed on", async () => {
    const posing = hintingRpc(a.peer.address, { forwardedFrom: "z" });
    try {
      expect((await posing.rpc.listQueues({ prefix: "jobs-" })).queues.map((queue) => queue.name)).toEqual([
        "jobs-1",
        "jobs-4",
      ]);
    } finally {
      posing.rpc.close();
    }
  });

  it("fails when one owner fails: QUEUE_MOVING when it cannot be reached", async () => {
    a.router.others = [b.peer, await deadPeer("broker-gone"), c.peer];
    const error = await expectRpcError(a.rpc.listQueues({}), status.UNAVAILABLE, "QUEUE_MOVING");
    expect(error.message).toContain("broker-gone");
  });

  it("checks its arguments before asking any other broker", async () => {
    a.router.others = [await deadPeer("broker-gone")];
    await expectRpcError(
      a.rpc.listQueues({ pageSize: 1001 }),
      status.INVALID_ARGUMENT,
      "INVALID_ARGUMENT",
      "page_size",
    );
    await expectRpcError(
      a.rpc.listQueues({ pageToken: "not-a-token" }),
      status.INVALID_ARGUMENT,
      "INVALID_ARGUMENT",
      "page_token",
    );
  });
});
