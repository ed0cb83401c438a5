// Bearer-token authentication and per-queue permissions on a real broker:
// who may call at all (UNAUTHENTICATED), who may do what on which queue
// (PERMISSION_DENIED, decided before the queue is looked up), which queues a
// caller may learn of, and which services stay open (health) or not (reflection).
import { create } from "@bufbuild/protobuf";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import {
  Client,
  credentials,
  InterceptingCall,
  Metadata,
  status,
  type Interceptor,
  type ServiceError,
} from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HealthCheckRequestSchema, HealthCheckResponse_ServingStatus } from "../../gen/grpc/health/v1/health_pb.js";
import * as v1 from "../../gen/grpc/reflection/v1/reflection_pb.js";
import { createQueueServiceRpc, type QueueServiceRpc } from "../../src/client/rpc-client.js";
import { healthServiceDefinition } from "../../src/grpc/health-service.js";
import { reflectionServiceDefinition } from "../../src/grpc/reflection-service.js";
import { expectRpcError } from "../support/expect-rpc-error.js";
import { makeToken, startAuthHarness, type AuthHarness } from "./auth-harness.js";

const root = makeToken("root", { queues: "*", allow: ["admin", "send", "receive"] });
const worker = makeToken("orders-worker", { queues: "orders-*", allow: ["send", "receive"] });
const sender = makeToken("orders-sender", { queues: "orders-*", allow: ["send"] });
const receiver = makeToken("orders-receiver", { queues: "orders-*", allow: ["receive"] });
const ordersAdmin = makeToken("orders-admin", { queues: "orders-*", allow: ["admin"] });
const dlqReader = makeToken(
  "dlq-reader",
  { queues: "shared-dlq", allow: ["receive"] },
  { queues: "orders-1", allow: ["send"] },
);
const loner = makeToken("loner", { queues: "nothing-here", allow: ["receive"] });
const stranger = makeToken("stranger", { queues: "*", allow: ["admin"] }); // never in the file

const unauthenticated = status.UNAUTHENTICATED;
const denied = status.PERMISSION_DENIED;
const body = Buffer.from("x");

describe("bearer-token authorization", () => {
  let h: AuthHarness;
  let as: Record<"root" | "worker" | "sender" | "receiver" | "ordersAdmin" | "dlqReader" | "loner", QueueServiceRpc>;

  beforeAll(async () => {
    h = await startAuthHarness([root, worker, sender, receiver, ordersAdmin, dlqReader, loner]);
    as = {
      root: h.client(root.token),
      worker: h.client(worker.token),
      sender: h.client(sender.token),
      receiver: h.client(receiver.token),
      ordersAdmin: h.client(ordersAdmin.token),
      dlqReader: h.client(dlqReader.token),
      loner: h.client(loner.token),
    };
    await as.root.createQueue({ name: "shared-dlq" });
    const deadLetters = { redrivePolicy: { deadLetterQueue: "shared-dlq", maxReceiveCount: 1 } };
    for (const name of ["orders-1", "orders-2", "orders-3", "payments"]) {
      await as.root.createQueue({ name, config: name === "orders-2" ? {} : deadLetters });
    }
  });
  afterAll(async () => h.stop());

  async function receiveOne(rpc: QueueServiceRpc, queue: string): Promise<string> {
    await as.root.send({ queue, body });
    const { messages } = await rpc.receive({ queue, maxMessages: 1, waitTime: durationFromMs(5_000) });
    expect(messages).toHaveLength(1);
    return messages[0]!.receiptHandle;
  }

  describe("who may call at all", () => {
    it("refuses a call without a token: UNAUTHENTICATED, TOKEN_MISSING", async () => {
      const anonymous = h.client();
      await expectRpcError(anonymous.getQueue({ name: "orders-1" }), unauthenticated, "TOKEN_MISSING");
      await expectRpcError(anonymous.send({ queue: "orders-1", body }), unauthenticated, "TOKEN_MISSING");
      await expectRpcError(anonymous.listQueues({}), unauthenticated, "TOKEN_MISSING");
    });

    it("refuses an unknown token alike on queues that exist and queues that do not", async () => {
      const wrong = h.client(stranger.token);
      const onExisting = await expectRpcError(wrong.getQueue({ name: "payments" }), unauthenticated, "TOKEN_INVALID");
      const onMissing = await expectRpcError(
        wrong.getQueue({ name: "no-such-queue" }),
        unauthenticated,
        "TOKEN_INVALID",
      );
      expect(onMissing.message).toBe(onExisting.message);
      await expectRpcError(wrong.createQueue({ name: "stranger-q" }), unauthenticated, "TOKEN_INVALID");
    });

    it("refuses a token that is almost right, or a hash sent as the token", async () => {
      await expectRpcError(h.client(worker.token.slice(0, -1)).listQueues({}), unauthenticated, "TOKEN_INVALID");
      await expectRpcError(h.client(worker.entry.sha256).listQueues({}), unauthenticated, "TOKEN_INVALID");
    });

    it.each([
      ["no scheme", () => worker.token],
      ["another scheme", () => `Basic ${worker.token}`],
      ["the scheme alone", () => "Bearer"],
      ["two words after Bearer", () => `Bearer ${worker.token} ${worker.token}`],
    ])("refuses a malformed authorization header (%s): TOKEN_INVALID", async (_what, value) => {
      const rpc = createQueueServiceRpc(h.server.address, { channelOptions: { interceptors: [sendHeader(value())] } });
      try {
        await expectRpcError(rpc.listQueues({}), unauthenticated, "TOKEN_INVALID");
      } finally {
        rpc.close();
      }
    });

    it("refuses a caller without a token before reading its request", async () => {
      // Bytes no request decodes from: a handler would answer INVALID_ARGUMENT; the token check comes first.
      const client = new Client(h.server.address, credentials.createInsecure());
      try {
        const code = await new Promise<number>((resolve) =>
          client.makeUnaryRequest(
            "/holdshelf.v1.QueueService/Send",
            (bytes: Buffer) => bytes,
            (bytes: Buffer) => bytes,
            Buffer.from([0x0a, 0x05, 0x61]),
            (error: ServiceError | null) => resolve(error?.code ?? status.OK),
          ),
        );
        expect(code).toBe(unauthenticated);
      } finally {
        client.close();
      }
    });

    it("keeps the health service open to probes without a token", async () => {
      const client = new Client(h.server.address, credentials.createInsecure());
      try {
        const check = healthServiceDefinition["check"]!;
        const answer = await new Promise<{ status: number }>((resolve, reject) =>
          client.makeUnaryRequest(
            check.path,
            check.requestSerialize,
            check.responseDeserialize,
            create(HealthCheckRequestSchema),
            (error: ServiceError | null, response?: unknown) =>
              error ? reject(error) : resolve(response as { status: number }),
          ),
        );
        expect(answer.status).toBe(HealthCheckResponse_ServingStatus.SERVING);
      } finally {
        client.close();
      }
    });

    it("answers reflection only to a caller with a valid token", async () => {
      expect(await listServices(h.server.address, undefined)).toMatchObject({ code: unauthenticated });
      expect(await listServices(h.server.address, stranger.token)).toMatchObject({ code: unauthenticated });
      // Any valid token will do, whatever its permissions.
      expect(await listServices(h.server.address, loner.token)).toContain("holdshelf.v1.QueueService");
    });
  });

  describe("what a token may do", () => {
    it("refuses the right token on the wrong queue, whether that queue exists or not", async () => {
      const onExisting = await expectRpcError(as.worker.send({ queue: "payments", body }), denied, "PERMISSION_DENIED");
      expect(onExisting.message).toBe('token "orders-worker" has no send permission on queue "payments" (queue)');
      const onMissing = await expectRpcError(as.worker.send({ queue: "paymentz", body }), denied, "PERMISSION_DENIED");
      expect(onMissing.message).toBe('token "orders-worker" has no send permission on queue "paymentz" (queue)');
      await expectRpcError(as.worker.receive({ queue: "payments" }), denied, "PERMISSION_DENIED");
      // On its own queues, a missing one is reported as such: nothing hidden there.
      await expectRpcError(as.worker.send({ queue: "orders-none", body }), status.NOT_FOUND, "QUEUE_NOT_FOUND");
    });

    it("does not quote back a queue name that is not one", async () => {
      const error = await expectRpcError(as.worker.send({ queue: "pay/../ments", body }), denied, "PERMISSION_DENIED");
      expect(error.message).toBe('token "orders-worker" has no send permission on that queue name (queue)');
    });

    it("lets a send-only token send but not receive or settle", async () => {
      expect((await as.sender.send({ queue: "orders-2", body })).messageId).not.toBe("");
      await as.sender.sendBatch({ queue: "orders-2", entries: [{ body }] });
      await expectRpcError(as.sender.receive({ queue: "orders-2" }), denied, "PERMISSION_DENIED");
      const handle = await receiveOne(as.worker, "orders-2");
      const timeout = durationFromMs(1_000);
      await expectRpcError(as.sender.delete({ queue: "orders-2", receiptHandle: handle }), denied, "PERMISSION_DENIED");
      await expectRpcError(
        as.sender.deleteBatch({ queue: "orders-2", receiptHandles: [handle] }),
        denied,
        "PERMISSION_DENIED",
      );
      await expectRpcError(
        as.sender.changeVisibility({ queue: "orders-2", receiptHandle: handle, visibilityTimeout: timeout }),
        denied,
        "PERMISSION_DENIED",
      );
      await expectRpcError(
        as.sender.changeVisibilityBatch({ queue: "orders-2", receiptHandles: [handle], visibilityTimeout: timeout }),
        denied,
        "PERMISSION_DENIED",
      );
      await as.worker.delete({ queue: "orders-2", receiptHandle: handle });
      await as.root.purgeQueue({ name: "orders-2" });
    });

    it("lets a receive-only token receive and settle but not send", async () => {
      await expectRpcError(as.receiver.send({ queue: "orders-2", body }), denied, "PERMISSION_DENIED");
      await expectRpcError(
        as.receiver.sendBatch({ queue: "orders-2", entries: [{ body }] }),
        denied,
        "PERMISSION_DENIED",
      );
      const first = await receiveOne(as.receiver, "orders-2");
      await as.receiver.changeVisibility({
        queue: "orders-2",
        receiptHandle: first,
        visibilityTimeout: durationFromMs(60_000),
      });
      await as.receiver.changeVisibilityBatch({
        queue: "orders-2",
        receiptHandles: [first],
        visibilityTimeout: durationFromMs(60_000),
      });
      await as.receiver.delete({ queue: "orders-2", receiptHandle: first });
      const second = await receiveOne(as.receiver, "orders-2");
      const { results } = await as.receiver.deleteBatch({ queue: "orders-2", receiptHandles: [second] });
      expect(results[0]!.code).toBe(status.OK);
    });

    it("gives admin the queue operations, and nothing else", async () => {
      const config = { visibilityTimeout: durationFromMs(5_000) };
      expect((await as.ordersAdmin.createQueue({ name: "orders-admin-made" })).queue?.name).toBe("orders-admin-made");
      await as.ordersAdmin.updateQueue({ name: "orders-admin-made", config });
      await as.ordersAdmin.purgeQueue({ name: "orders-admin-made" });
      await as.ordersAdmin.getQueue({ name: "orders-admin-made" });
      // admin does not imply send or receive.
      await expectRpcError(as.ordersAdmin.send({ queue: "orders-admin-made", body }), denied, "PERMISSION_DENIED");
      await expectRpcError(as.ordersAdmin.receive({ queue: "orders-admin-made" }), denied, "PERMISSION_DENIED");
      await as.ordersAdmin.deleteQueue({ name: "orders-admin-made" });
      // Only on its own pattern.
      const refused = await expectRpcError(
        as.ordersAdmin.createQueue({ name: "payments-2" }),
        denied,
        "PERMISSION_DENIED",
      );
      expect(refused.message).toBe('token "orders-admin" has no admin permission on queue "payments-2" (name)');
      await expectRpcError(as.ordersAdmin.updateQueue({ name: "payments", config }), denied, "PERMISSION_DENIED");
      await expectRpcError(as.ordersAdmin.purgeQueue({ name: "payments" }), denied, "PERMISSION_DENIED");
      await expectRpcError(as.ordersAdmin.deleteQueue({ name: "payments" }), denied, "PERMISSION_DENIED");
    });

    it("keeps queue operations from tokens without admin", async () => {
      for (const rpc of [as.worker, as.sender, as.receiver]) {
        await expectRpcError(rpc.createQueue({ name: "orders-9" }), denied, "PERMISSION_DENIED");
        await expectRpcError(rpc.updateQueue({ name: "orders-1" }), denied, "PERMISSION_DENIED");
        await expectRpcError(rpc.purgeQueue({ name: "orders-1" }), denied, "PERMISSION_DENIED");
        await expectRpcError(rpc.deleteQueue({ name: "orders-1" }), denied, "PERMISSION_DENIED");
        await expectRpcError(rpc.redriveMessages({ deadLetterQueue: "orders-1" }), denied, "PERMISSION_DENIED");
      }
      expect((await as.root.getQueue({ name: "orders-1" })).queue?.name).toBe("orders-1");
    });

    it("needs admin on a dead-letter queue that a queue's config names", async () => {
      const config = { redrivePolicy: { deadLetterQueue: "shared-dlq", maxReceiveCount: 3 } };
      const error = await expectRpcError(
        as.ordersAdmin.createQueue({ name: "orders-with-dlq", config }),
        denied,
        "PERMISSION_DENIED",
      );
      expect(error.message).toContain(
        'admin permission on queue "shared-dlq" (config.redrive_policy.dead_letter_queue)',
      );
      await expectRpcError(as.ordersAdmin.updateQueue({ name: "orders-2", config }), denied, "PERMISSION_DENIED");
      // A dead-letter queue within its pattern is fine.
      await as.ordersAdmin.createQueue({ name: "orders-dlq" });
      await as.ordersAdmin.createQueue({
        name: "orders-with-dlq",
        config: { redrivePolicy: { deadLetterQueue: "orders-dlq", maxReceiveCount: 3 } },
      });
    });

    it("needs admin on a dead-letter queue only when an update_mask names the redrive policy", async () => {
      const config = {
        visibilityTimeout: durationFromMs(7_000),
        redrivePolicy: { deadLetterQueue: "shared-dlq", maxReceiveCount: 9 },
      };
      // orders-1 keeps the policy root gave it: changing another field chooses no dead-letter queue.
      const updated = await as.ordersAdmin.updateQueue({
        name: "orders-1",
        config,
        updateMask: { paths: ["visibility_timeout"] },
      });
      expect(updated.queue?.config?.redrivePolicy).toMatchObject({ deadLetterQueue: "shared-dlq", maxReceiveCount: 1 });
      for (const paths of [["redrive_policy"], ["*"], []]) {
        const error = await expectRpcError(
          as.ordersAdmin.updateQueue({ name: "orders-1", config, updateMask: { paths } }),
          denied,
          "PERMISSION_DENIED",
        );
        expect(error.message).toContain('queue "shared-dlq" (config.redrive_policy.dead_letter_queue)');
      }
    });

    it("needs admin on the dead-letter queue and on a named destination to redrive", async () => {
      await as.ordersAdmin.createQueue({ name: "orders-redrive-dlq" });
      await as.root.send({ queue: "orders-redrive-dlq", body });
      const toPayments = await expectRpcError(
        as.ordersAdmin.redriveMessages({ deadLetterQueue: "orders-redrive-dlq", destinationQueue: "payments" }),
        denied,
        "PERMISSION_DENIED",
      );
      expect(toPayments.message).toContain('queue "payments" (destination_queue)');
      const fromShared = await expectRpcError(
        as.ordersAdmin.redriveMessages({ deadLetterQueue: "shared-dlq" }),
        denied,
        "PERMISSION_DENIED",
      );
      expect(fromShared.message).toContain('queue "shared-dlq" (dead_letter_queue)');
      const moved = await as.ordersAdmin.redriveMessages({
        deadLetterQueue: "orders-redrive-dlq",
        destinationQueue: "orders-3",
      });
      expect(moved.movedCount).toBe(1n);
      await as.root.purgeQueue({ name: "orders-3" });
    });

    it("needs admin on the source queue (and a named destination) to start, list and cancel move tasks", async () => {
      await as.ordersAdmin.createQueue({ name: "orders-move-src" });
      const toPayments = await expectRpcError(
        as.ordersAdmin.startMessageMoveTask({ sourceQueue: "orders-move-src", destinationQueue: "payments" }),
        denied,
        "PERMISSION_DENIED",
      );
      expect(toPayments.message).toContain('queue "payments" (destination_queue)');
      await expectRpcError(
        as.worker.startMessageMoveTask({ sourceQueue: "orders-move-src" }),
        denied,
        "PERMISSION_DENIED",
      );
      await expectRpcError(
        as.worker.listMessageMoveTasks({ sourceQueue: "orders-move-src" }),
        denied,
        "PERMISSION_DENIED",
      );
      const { taskHandle } = await as.root.startMessageMoveTask({
        sourceQueue: "shared-dlq",
        destinationQueue: "payments",
        maxPerSecond: 1,
      });
      const cancel = await expectRpcError(
        as.ordersAdmin.cancelMessageMoveTask({ taskHandle }),
        denied,
        "PERMISSION_DENIED",
      );
      expect(cancel.message).toContain('queue "shared-dlq" (task_handle)');
      await as.root.cancelMessageMoveTask({ taskHandle }).catch(() => undefined); // it may have ended already
      await as.ordersAdmin.startMessageMoveTask({ sourceQueue: "orders-move-src", destinationQueue: "orders-3" });
      expect((await as.ordersAdmin.listMessageMoveTasks({ sourceQueue: "orders-move-src" })).tasks).toHaveLength(1);
    });
  });

  describe("peeking at messages", () => {
    it("needs admin on the queue: a worker that may send and receive is refused, before the queue is looked up", async () => {
      await as.root.send({ queue: "orders-2", body: Buffer.from("peek me") });
      for (const rpc of [as.worker, as.sender, as.receiver]) {
        const refusal = await expectRpcError(rpc.peekMessages({ queue: "orders-2" }), denied, "PERMISSION_DENIED");
        expect(refusal.message).toContain('queue "orders-2" (queue)');
        await expectRpcError(rpc.peekMessages({ queue: "orders-no-such" }), denied, "PERMISSION_DENIED");
      }
      await expectRpcError(as.ordersAdmin.peekMessages({ queue: "payments" }), denied, "PERMISSION_DENIED");
      const { messages } = await as.ordersAdmin.peekMessages({ queue: "orders-2", pageSize: 100 });
      expect(messages.map((message) => Buffer.from(message.body).toString())).toContain("peek me");
    });
  });

  describe("which queues a caller may learn of", () => {
    it("lists only the queues the caller holds a permission on", async () => {
      const names = async (rpc: QueueServiceRpc, prefix = "") =>
        (await rpc.listQueues({ prefix })).queues.map((q) => q.name);
      const all = await names(as.root);
      expect(all).toEqual(expect.arrayContaining(["orders-1", "orders-2", "payments", "shared-dlq"]));
      expect(await names(as.worker)).toEqual(all.filter((name) => name.startsWith("orders-")));
      expect(await names(as.dlqReader)).toEqual(["orders-1", "shared-dlq"]);
      expect(await names(as.dlqReader, "s")).toEqual(["shared-dlq"]);
      expect(await names(as.loner)).toEqual([]);
    });

    it("fills pages with visible queues and pages through them with its tokens", async () => {
      const seen: string[] = [];
      let pageToken = "";
      do {
        const page = await as.dlqReader.listQueues({ pageSize: 1, pageToken });
        expect(page.queues.length).toBe(1);
        seen.push(page.queues[0]!.name);
        pageToken = page.nextPageToken;
      } while (pageToken !== "");
      // Five queues lie between and around these two; none of them took a page or ended the listing early.
      expect(seen).toEqual(["orders-1", "shared-dlq"]);
    });

    it("needs some permission to get a queue, and answers alike for a hidden queue and a missing one", async () => {
      expect((await as.sender.getQueue({ name: "orders-1" })).queue?.name).toBe("orders-1");
      expect((await as.receiver.getQueue({ name: "orders-1" })).queue?.name).toBe("orders-1");
      const hidden = await expectRpcError(as.worker.getQueue({ name: "payments" }), denied, "PERMISSION_DENIED");
      expect(hidden.message).toBe('token "orders-worker" has no permission on queue "payments" (name)');
      const missing = await expectRpcError(as.worker.getQueue({ name: "paymentz" }), denied, "PERMISSION_DENIED");
      expect(missing.message).toBe(hidden.message.replace("payments", "paymentz"));
    });

    it("shows a dead-letter queue's sources only where the caller may see them", async () => {
      const sources = async (rpc: QueueServiceRpc) =>
        (await rpc.getQueue({ name: "shared-dlq" })).queue?.deadLetterSourceQueues;
      expect(await sources(as.root)).toEqual(["orders-1", "orders-3", "payments"]);
      expect(await sources(as.dlqReader)).toEqual(["orders-1"]);
      const listed = (await as.dlqReader.listQueues({ prefix: "shared" })).queues[0]!;
      expect(listed.deadLetterSourceQueues).toEqual(["orders-1"]);
    });
  });

  describe("receipt handles of other queues", () => {
    it("refuses a real handle of one queue used on another the caller may receive from", async () => {
      const handle = await receiveOne(as.worker, "orders-1");
      const error = await expectRpcError(
        as.worker.delete({ queue: "orders-3", receiptHandle: handle }),
        status.INVALID_ARGUMENT,
        "RECEIPT_HANDLE_INVALID",
        "receipt_handle",
      );
      expect(error.message).toBe("receipt handle belongs to another queue");
      const { results } = await as.worker.changeVisibilityBatch({
        queue: "orders-3",
        receiptHandles: [handle],
        visibilityTimeout: durationFromMs(0),
      });
      expect(results[0]!.reason).toBe("RECEIPT_HANDLE_INVALID");
      await as.worker.delete({ queue: "orders-1", receiptHandle: handle });
    });

    it("refuses a handle of a queue the caller may not touch, on its own queue and on that one", async () => {
      const handle = await receiveOne(as.root, "payments");
      await expectRpcError(
        as.worker.delete({ queue: "orders-1", receiptHandle: handle }),
        status.INVALID_ARGUMENT,
        "RECEIPT_HANDLE_INVALID",
      );
      await expectRpcError(as.worker.delete({ queue: "payments", receiptHandle: handle }), denied, "PERMISSION_DENIED");
      // The message is still leased to its receiver.
      await as.root.delete({ queue: "payments", receiptHandle: handle });
    });

    it("refuses a tampered handle", async () => {
      const handle = await receiveOne(as.worker, "orders-1");
      const bytes = Buffer.from(handle, "base64url");
      // Point the handle at queue id + 1 without the key: the MAC no longer matches.
      bytes.writeUInt32BE(bytes.readUInt32BE(1) + 1, 1);
      const error = await expectRpcError(
        as.worker.delete({ queue: "orders-1", receiptHandle: bytes.toString("base64url") }),
        status.INVALID_ARGUMENT,
        "RECEIPT_HANDLE_INVALID",
      );
      expect(error.message).toBe("receipt handle was not issued by this broker");
      await as.worker.delete({ queue: "orders-1", receiptHandle: handle });
    });
  });
});

/** An interceptor that sends this exact authorization header. */
function sendHeader(value: string): Interceptor {
  return (options, nextCall) =>
    new InterceptingCall(nextCall(options), {
      start(metadata, listener, next) {
        metadata.set("authorization", value);
        next(metadata, listener);
      },
    });
}

/** The service names reflection lists, or the status it refused with. */
async function listServices(address: string, token: string | undefined): Promise<string[] | { code: number }> {
  const client = new Client(address, credentials.createInsecure());
  const method = reflectionServiceDefinition["serverReflectionInfo"]!;
  const metadata = new Metadata();
  if (token !== undefined) metadata.set("authorization", `Bearer ${token}`);
  const call = client.makeBidiStreamRequest(method.path, method.requestSerialize, method.responseDeserialize, metadata);
  try {
    return await new Promise((resolve) => {
      call.on("data", (response: v1.ServerReflectionResponse) => {
        const answer = response.messageResponse;
        resolve(answer.case === "listServicesResponse" ? answer.value.service.map((s) => s.name) : { code: -1 });
        call.end();
      });
      call.on("error", (error: ServiceError) => resolve({ code: error.code }));
      call.write(create(v1.ServerReflectionRequestSchema, { messageRequest: { case: "listServices", value: "" } }));
    });
  } finally {
    client.close();
  }
}
