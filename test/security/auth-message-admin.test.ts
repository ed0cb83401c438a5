// Who may DiscardMessage and MoveMessage with an auth file: admin on the
// queue, and on a named destination (as for a message move task), refused
// before any queue or message is looked up; and the audit line names the
// caller's token.
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { QueueServiceRpc } from "../../src/client/rpc-client.js";
import { createLogger } from "../../src/logging/logger.js";
import { expectRpcError } from "../support/expect-rpc-error.js";
import { makeToken, startAuthHarness, type AuthHarness } from "./auth-harness.js";

const root = makeToken("root", { queues: "*", allow: ["admin", "send", "receive"] });
const worker = makeToken("orders-worker", { queues: "orders-*", allow: ["send", "receive"] });
const sender = makeToken("orders-sender", { queues: "orders-*", allow: ["send"] });
const dlqAdmin = makeToken("dlq-admin", { queues: "orders-dlq", allow: ["admin"] });
const ordersAdmin = makeToken("orders-admin", { queues: "orders-*", allow: ["admin"] });

const denied = status.PERMISSION_DENIED;
const unknownId = "019b76da-a80b-772c-b498-ce91a4eb059e";

describe("per-message actions with an auth file", () => {
  let h: AuthHarness;
  let as: Record<"root" | "worker" | "sender" | "dlqAdmin" | "ordersAdmin", QueueServiceRpc>;
  const lines: Record<string, unknown>[] = [];
  const audits = (): Record<string, unknown>[] => lines.filter((line) => line["msg"] === "message action");

  beforeAll(async () => {
    const logger = createLogger({ write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) });
    h = await startAuthHarness([root, worker, sender, dlqAdmin, ordersAdmin], logger);
    as = {
      root: h.client(root.token),
      worker: h.client(worker.token),
      sender: h.client(sender.token),
      dlqAdmin: h.client(dlqAdmin.token),
      ordersAdmin: h.client(ordersAdmin.token),
    };
    await as.root.createQueue({ name: "orders-dlq" });
    await as.root.createQueue({
      name: "orders-work",
      config: { redrivePolicy: { deadLetterQueue: "orders-dlq", maxReceiveCount: 1 } },
    });
    await as.root.createQueue({ name: "payments" });
  });
  afterAll(async () => h.stop());
  beforeEach(() => {
    lines.length = 0;
  });

  /** A message in orders-dlq, dead-lettered from orders-work. */
  async function deadLetter(): Promise<string> {
    // What earlier tests left or moved back there would be received instead.
    await as.root.purgeQueue({ name: "orders-work" });
    const { messageId } = await as.root.send({ queue: "orders-work", body: Buffer.from("poison") });
    const [message] = (await as.root.receive({ queue: "orders-work" })).messages;
    await as.root.changeVisibility({
      queue: "orders-work",
      receiptHandle: message!.receiptHandle,
      visibilityTimeout: durationFromMs(0),
    });
    await h.server.broker.settled();
    return messageId;
  }

  it("DiscardMessage needs admin on the queue, refused alike for a message or queue that does not exist", async () => {
    const { messageId } = await as.root.send({ queue: "orders-work", body: Buffer.from("m") });
    for (const rpc of [as.worker, as.sender, as.dlqAdmin]) {
      const refusal = await expectRpcError(
        rpc.discardMessage({ queue: "orders-work", messageId }),
        denied,
        "PERMISSION_DENIED",
      );
      expect(refusal.message).toContain('queue "orders-work" (queue)');
      await expectRpcError(
        rpc.discardMessage({ queue: "orders-none", messageId: unknownId }),
        denied,
        "PERMISSION_DENIED",
      );
    }
    await expectRpcError(as.ordersAdmin.discardMessage({ queue: "payments", messageId }), denied, "PERMISSION_DENIED");
    expect(audits()).toEqual([]);
    await as.ordersAdmin.discardMessage({ queue: "orders-work", messageId });
    expect(audits()).toEqual([
      expect.objectContaining({ action: "DiscardMessage", queue: "orders-work", messageId, caller: "orders-admin" }),
    ]);
  });

  it("MoveMessage back to the dead-letter source needs admin on the dead-letter queue alone, as a move task does", async () => {
    const messageId = await deadLetter();
    for (const rpc of [as.worker, as.sender]) {
      await expectRpcError(rpc.moveMessage({ queue: "orders-dlq", messageId }), denied, "PERMISSION_DENIED");
    }
    expect((await as.dlqAdmin.moveMessage({ queue: "orders-dlq", messageId })).destinationQueue).toBe("orders-work");
    expect(audits()).toEqual([
      expect.objectContaining({
        level: "info",
        action: "MoveMessage",
        queue: "orders-dlq",
        messageId,
        destinationQueue: "orders-work",
        caller: "dlq-admin",
      }),
    ]);
  });

  it("MoveMessage to a named queue needs admin on that queue too (destination_queue)", async () => {
    const messageId = await deadLetter();
    const refusal = await expectRpcError(
      as.dlqAdmin.moveMessage({ queue: "orders-dlq", messageId, destinationQueue: "orders-work" }),
      denied,
      "PERMISSION_DENIED",
    );
    expect(refusal.message).toContain('queue "orders-work" (destination_queue)');
    await expectRpcError(
      as.ordersAdmin.moveMessage({ queue: "orders-dlq", messageId, destinationQueue: "payments" }),
      denied,
      "PERMISSION_DENIED",
    );
    expect(audits()).toEqual([]);
    const moved = await as.ordersAdmin.moveMessage({ queue: "orders-dlq", messageId, destinationQueue: "orders-work" });
    expect(moved.destinationQueue).toBe("orders-work");
    expect(audits()).toEqual([expect.objectContaining({ action: "MoveMessage", caller: "orders-admin" })]);
  });
});
