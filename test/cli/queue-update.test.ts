// `holdshelf queue update` changes only the settings given (UpdateQueue's
// update_mask), the command running in this process against a real broker.
import { create } from "@bufbuild/protobuf";
import { Server, ServerCredentials, type sendUnaryData, type ServerUnaryCall } from "@grpc/grpc-js";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { UpdateQueueResponseSchema, type UpdateQueueRequest } from "../../gen/holdshelf/v1/queue_service_pb.js";
import { main } from "../../src/cli/main.js";
import { queueServiceDefinition } from "../../src/protocol/queue-service-definition.js";
import { startGrpcHarness, type GrpcHarness } from "../support/grpc-harness.js";

describe("holdshelf queue update", () => {
  let h: GrpcHarness;
  beforeEach(async () => {
    h = await startGrpcHarness();
    await h.rpc.createQueue({ name: "dlq" });
    await h.rpc.createQueue({
      name: "work",
      config: {
        maxInFlight: 9,
        redrivePolicy: { deadLetterQueue: "dlq", maxReceiveCount: 3 },
        retryPolicy: { minBackoff: { seconds: 1n }, maxBackoff: { seconds: 60n } },
      },
    });
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    await h.stop();
  });

  async function holdshelf(...argv: string[]): Promise<{ code: number; stderr: string }> {
    const err: string[] = [];
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    vi.spyOn(console, "error").mockImplementation((line: string) => void err.push(line));
    try {
      return { code: await main(argv, { HOLDSHELF_ADDRESS: h.server.address }), stderr: err.join("\n") };
    } finally {
      vi.restoreAllMocks();
    }
  }

  const config = async () => (await h.rpc.getQueue({ name: "work" })).queue!.config!;

  it("sends only the settings given, named in update_mask", async () => {
    // A stand-in broker that keeps the request: what the command sends, whatever a broker makes of it.
    const requests: UpdateQueueRequest[] = [];
    const server = new Server();
    server.addService(queueServiceDefinition, {
      updateQueue(call: ServerUnaryCall<UpdateQueueRequest, unknown>, done: sendUnaryData<unknown>) {
        requests.push(call.request);
        done(null, create(UpdateQueueResponseSchema, { queue: { name: call.request.name } }));
      },
    });
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (error, bound) =>
        error ? reject(error) : resolve(bound),
      ),
    );
    try {
      const code = await main(
        [
          "queue",
          "update",
          "work",
          "--visibility-timeout",
          "60s",
          "--dead-letter-queue",
          "d",
          "--max-receive-count",
          "2",
        ],
        { HOLDSHELF_ADDRESS: `127.0.0.1:${port}` },
      );
      expect(code).toBe(0);
    } finally {
      server.forceShutdown();
    }
    expect(requests).toHaveLength(1);
    const [request] = requests;
    expect(request!.updateMask?.paths).toEqual(["visibility_timeout", "redrive_policy"]);
    expect(request!.config).toMatchObject({
      visibilityTimeout: { seconds: 60n },
      redrivePolicy: { deadLetterQueue: "d", maxReceiveCount: 2 },
      maxInFlight: 0,
    });
    expect(request!.config?.retryPolicy).toBeUndefined();
  });

  // Needs the broker side of update_mask (0.2.0): a broker that ignores the mask replaces the whole configuration.
  it("keeps the dead-letter and retry policies and every other setting when one setting changes", async () => {
    expect((await holdshelf("queue", "update", "work", "--visibility-timeout", "60s")).code).toBe(0);
    expect(await config()).toMatchObject({
      visibilityTimeout: { seconds: 60n },
      maxInFlight: 9,
      redrivePolicy: { deadLetterQueue: "dlq", maxReceiveCount: 3 },
      retryPolicy: { minBackoff: { seconds: 1n }, maxBackoff: { seconds: 60n } },
    });
  });

  it("removes a policy with --no-dead-letter-queue or --no-retry-policy", async () => {
    expect((await holdshelf("queue", "update", "work", "--no-dead-letter-queue", "--no-retry-policy")).code).toBe(0);
    const { redrivePolicy, retryPolicy } = await config();
    expect({ redrivePolicy, retryPolicy }).toEqual({ redrivePolicy: undefined, retryPolicy: undefined });
  });

  it("sets tags at create with --tag, and removes them with --no-tags", async () => {
    expect((await holdshelf("queue", "create", "tagged", "--tag", "team=core", "--tag", "tier=1")).code).toBe(0);
    const tags = async () => (await h.rpc.getQueue({ name: "tagged" })).queue!.config!.tags;
    expect(await tags()).toEqual({ team: "core", tier: "1" });
    expect((await holdshelf("queue", "update", "tagged", "--no-tags")).code).toBe(0);
    expect(await tags()).toEqual({});
  });

  it("refuses an update without settings, or with half a policy, as a usage error, changing nothing", async () => {
    const before = await config();
    for (const args of [[], ["--dead-letter-queue", "dlq"], ["--max-backoff", "5m"]]) {
      const refused = await holdshelf("queue", "update", "work", ...args);
      expect(refused.code).toBe(2);
    }
    expect((await holdshelf("queue", "update", "work")).stderr).toContain("needs at least one setting");
    expect(await config()).toEqual(before);
  });
});
