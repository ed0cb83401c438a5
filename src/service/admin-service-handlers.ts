import { create } from "@bufbuild/protobuf";
import {
  BackupResponseSchema,
  GetBrokerStatusResponseSchema,
  GetClusterStatusResponseSchema,
  type BackupRequest,
  type BackupResponse,
  type BrokerStatus,
  type GetBrokerStatusRequest,
  type GetBrokerStatusResponse,
  type GetClusterStatusRequest,
  type GetClusterStatusResponse,
} from "../../gen/holdshelf/v1/admin_service_pb.js";
import type { ClusterSnapshot } from "../cluster/shard-cluster.js";
import { HoldshelfError } from "../errors/holdshelf-error.js";
import type { Clock } from "../time/clock.js";
import type { CallContext } from "./call-context.js";

/** Reads the whole store, from one snapshot, as the backup file's bytes (src/store/backup-format.ts). */
export type BackupSource = (snapshotTime: number) => AsyncIterable<Uint8Array>;

/** What the status RPCs read: this broker's status, and the cluster's as this broker sees it (undefined outside cluster mode). */
export interface StatusSource {
  broker(): BrokerStatus;
  cluster(): Promise<ClusterSnapshot | undefined>;
}

/** holdshelf.v1.AdminService's handlers: Backup answers a stream of responses, the status RPCs one each. */
export interface AdminServiceHandlers {
  backup(request: BackupRequest, signal: AbortSignal, context: CallContext): AsyncIterable<BackupResponse>;
  getBrokerStatus(
    request: GetBrokerStatusRequest,
    signal: AbortSignal,
    context: CallContext,
  ): Promise<GetBrokerStatusResponse>;
  getClusterStatus(
    request: GetClusterStatusRequest,
    signal: AbortSignal,
    context: CallContext,
  ): Promise<GetClusterStatusResponse>;
}

/** A response's most bytes, as the proto promises: well under gRPC's message limits on both sides. */
export const maxBackupResponseBytes = 1024 * 1024;

/**
 * AdminService over the store's backup (without one, in cluster mode, Backup
 * is refused with BACKUP_NOT_SUPPORTED) and this broker's status; the other
 * members' are gathered by the gRPC layer (admin-status-fan-out.ts).
 */
export function adminServiceHandlers(
  source: BackupSource | undefined,
  clock: Clock,
  status: StatusSource,
): AdminServiceHandlers {
  return {
    async getBrokerStatus() {
      return create(GetBrokerStatusResponseSchema, { brokers: [status.broker()] });
    },
    async getClusterStatus() {
      const snapshot = await status.cluster();
      if (snapshot === undefined) return create(GetClusterStatusResponseSchema, { clustered: false });
      return create(GetClusterStatusResponseSchema, {
        clustered: true,
        nodeId: snapshot.nodeId,
        members: snapshot.members.map((member) => ({
          nodeId: member.nodeId,
          address: member.address,
          shards: member.shards,
          lastHeartbeatMs: BigInt(member.lastHeartbeat),
          live: member.live,
        })),
        shards: snapshot.shards.map((shard) => ({
          shard: shard.shard,
          owner: shard.owner ?? "",
          epoch: BigInt(shard.epoch),
        })),
        events: snapshot.events.flatMap((event) =>
          event.shards.map((shard) => ({
            timeMs: BigInt(event.time),
            kind: event.kind,
            shard,
            nodeId: event.nodeId,
            peer: event.peer ?? "",
            reason: event.reason,
          })),
        ),
      });
    },
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
