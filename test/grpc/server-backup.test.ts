// AdminService.Backup against a real broker: on LevelDB a stream of a whole,
// checked backup file holding what was sent; on PostgreSQL (the postgres and
// cluster projects) the stable refusal that names PostgreSQL's own tools.
import { create } from "@bufbuild/protobuf";
import { Client, credentials, Metadata, status, type ClientReadableStream } from "@grpc/grpc-js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import * as reflection from "../../gen/grpc/reflection/v1/reflection_pb.js";
import { AdminService, BackupRequestSchema, type BackupResponse } from "../../gen/holdshelf/v1/admin_service_pb.js";
import { RpcError } from "../../src/client/rpc-error.js";
import { createServiceDefinition } from "../../src/protocol/service-definition.js";
import { verifyBackup } from "../../src/store/backup-format.js";
import { startGrpcHarness, type GrpcHarness } from "../support/grpc-harness.js";
import { onPostgres } from "../support/test-storage.js";

const backup = createServiceDefinition(AdminService)["backup"]!;

describe("AdminService.Backup", () => {
  let h: GrpcHarness;
  let client: Client;
  beforeEach(async () => {
    h = await startGrpcHarness();
    client = new Client(h.server.address, credentials.createInsecure());
  });
  afterEach(async () => {
    client.close();
    await h.stop();
  });

  const call = (): ClientReadableStream<BackupResponse> =>
    client.makeServerStreamRequest(
      backup.path,
      backup.requestSerialize,
      backup.responseDeserialize,
      create(BackupRequestSchema),
      new Metadata(),
    );

  async function* data(stream: ClientReadableStream<BackupResponse>): AsyncGenerator<Uint8Array> {
    try {
      for await (const response of stream) yield (response as BackupResponse).data;
    } catch (error) {
      throw RpcError.fromServiceError(error as never);
    }
  }

  it.runIf(!onPostgres)("streams a whole backup of the store", async () => {
    await h.rpc.createQueue({ name: "work" });
    for (let i = 0; i < 20; i++) await h.rpc.send({ queue: "work", body: Buffer.from(`m-${i}`) });
    const before = Date.now();
    const summary = await verifyBackup(data(call()));
    // Two keys a message, the queue record, the sequence, the handle key and the format version.
    expect(summary.records).toBe(2 * 20 + 4);
    expect(summary.snapshotTime).toBeGreaterThanOrEqual(before - 1000);
  });

  it.runIf(!onPostgres)("lets a broker shut down after a client gave up on a backup", async () => {
    await h.rpc.createQueue({ name: "work" });
    const stream = call();
    stream.on("error", () => undefined);
    await new Promise((resolve) => stream.once("data", resolve));
    stream.cancel();
    await h.restart();
    expect((await h.rpc.getQueue({ name: "work" })).queue?.name).toBe("work");
  });

  it("is listed by server reflection", async () => {
    const info = createServiceDefinition(reflection.ServerReflection)["serverReflectionInfo"]!;
    const stream = client.makeBidiStreamRequest(
      info.path,
      info.requestSerialize,
      info.responseDeserialize,
      new Metadata(),
      {},
    );
    stream.write(
      create(reflection.ServerReflectionRequestSchema, { messageRequest: { case: "listServices", value: "*" } }),
    );
    const [answer] = (await new Promise((resolve) => stream.once("data", (data) => resolve([data])))) as [
      reflection.ServerReflectionResponse,
    ];
    stream.end();
    const names =
      answer.messageResponse.case === "listServicesResponse"
        ? answer.messageResponse.value.service.map((service) => service.name)
        : [];
    expect(names).toContain("holdshelf.v1.AdminService");
  });

  it.runIf(onPostgres)("is refused in cluster mode with BACKUP_NOT_SUPPORTED", async () => {
    const failure = await verifyBackup(data(call())).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(RpcError);
    expect(failure).toMatchObject({ code: status.FAILED_PRECONDITION, reason: "BACKUP_NOT_SUPPORTED" });
    expect((failure as RpcError).message).toMatch(/docs\/operations.md#backup/);
  });
});
