import type { Server, ServerWritableStream } from "@grpc/grpc-js";
import { AdminService, type BackupRequest, type BackupResponse } from "../../gen/holdshelf/v1/admin_service_pb.js";
import type { AuthGate } from "../auth/auth-gate.js";
import { invalidArgument } from "../errors/holdshelf-error.js";
import type { Logger } from "../logging/logger.js";
import { authorizeAdminService } from "../service/admin-service-auth.js";
import type { AdminServiceHandlers } from "../service/admin-service-handlers.js";
import { AnswerTrailer } from "../service/call-context.js";
import { tokenCaller } from "../service/queue-service-auth.js";
import { toErrorStatus } from "./error-status.js";
import { createServerServiceDefinition, MalformedRequest } from "./service-definition.js";
import { bridgeUnaryHandlers } from "./unary-bridge.js";

/** The grpc-js definition of holdshelf.v1.AdminService as the server serves it. */
export const adminServiceDefinition = createServerServiceDefinition(AdminService);

type BackupCall = ServerWritableStream<BackupRequest | MalformedRequest, BackupResponse>;

/**
 * Serves holdshelf.v1.AdminService on a gRPC server; with a gate, only to
 * tokens with admin on every queue. Backup's responses are written as fast
 * as the client reads them: the copy waits while grpc-js's buffer is full,
 * so a slow client holds one snapshot open, not the whole store in memory.
 */
export function addAdminService(
  server: Pick<Server, "addService">,
  handlers: AdminServiceHandlers,
  logger: Logger,
  gate: AuthGate | undefined,
): void {
  const served = gate === undefined ? handlers : authorizeAdminService(handlers, tokenCaller(gate));
  const logUnexpected = (error: unknown): void => logger.error("unexpected error in a call", { error });
  server.addService(adminServiceDefinition, {
    ...bridgeUnaryHandlers(
      { getBrokerStatus: served.getBrokerStatus, getClusterStatus: served.getClusterStatus },
      logUnexpected,
    ),
    backup: (call: BackupCall) => {
      serveBackup(call, served, logger).catch((error: unknown) =>
        call.emit("error", toErrorStatus(error, logUnexpected)),
      );
    },
  });
}

async function serveBackup(call: BackupCall, handlers: AdminServiceHandlers, logger: Logger): Promise<void> {
  const request = call.request;
  if (request instanceof MalformedRequest) throw invalidArgument("request", request.description);
  const abort = new AbortController();
  call.once("cancelled", () => abort.abort());
  const started = performance.now();
  let bytes = 0;
  const context = { metadata: call.metadata, deadline: call.getDeadline(), trailer: new AnswerTrailer() };
  for await (const response of handlers.backup(request, abort.signal, context)) {
    if (abort.signal.aborted) return;
    bytes += response.data.length;
    if (!call.write(response)) await drained(call, abort.signal);
  }
  if (abort.signal.aborted) return;
  call.end();
  logger.info("backup sent", { bytes, seconds: (performance.now() - started) / 1000 });
}

/** Resolves when the call's buffer has room again, or it was cancelled. */
function drained(call: BackupCall, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      call.off("drain", done);
      signal.removeEventListener("abort", done);
      resolve();
    };
    call.on("drain", done);
    signal.addEventListener("abort", done, { once: true });
  });
}
