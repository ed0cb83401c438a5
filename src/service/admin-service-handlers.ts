import { create } from "@bufbuild/protobuf";
import {
  BackupResponseSchema,
  type BackupRequest,
  type BackupResponse,
} from "../../gen/holdshelf/v1/admin_service_pb.js";
import { HoldshelfError } from "../errors/holdshelf-error.js";
import type { Clock } from "../time/clock.js";
import type { CallContext } from "./call-context.js";

/** Reads the whole store, from one snapshot, as the backup file's bytes (src/store/backup-format.ts). */
export type BackupSource = (snapshotTime: number) => AsyncIterable<Uint8Array>;

/** holdshelf.v1.AdminService's handlers: Backup answers a stream of responses. */
export interface AdminServiceHandlers {
  backup(request: BackupRequest, signal: AbortSignal, context: CallContext): AsyncIterable<BackupResponse>;
}

/** A response's most bytes, as the proto promises: well under gRPC's message limits on both sides. */
export const maxBackupResponseBytes = 1024 * 1024;

/** AdminService over the store's backup; without one (cluster mode) Backup is refused with BACKUP_NOT_SUPPORTED. */
export function adminServiceHandlers(source: BackupSource | undefined, clock: Clock): AdminServiceHandlers {
  return {
    async *backup(_request, signal) {
      if (source === undefined) {
        throw new HoldshelfError(
          "BACKUP_NOT_SUPPORTED",
          "this broker keeps its data in PostgreSQL (cluster mode): back it up with PostgreSQL's tools " +
            "(pg_dump or pg_basebackup), see docs/operations.md#backup",
        );
      }
      for await (const bytes of source(clock.now())) {
        if (signal.aborted) return;
        for (let at = 0; at < bytes.length; at += maxBackupResponseBytes) {
          yield create(BackupResponseSchema, { data: bytes.subarray(at, at + maxBackupResponseBytes) });
        }
      }
    },
  };
}
