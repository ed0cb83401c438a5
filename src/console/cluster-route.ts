import { brokerFailure } from "../service/broker-failure.js";
import type { AdminCalls } from "./admin-calls.js";
import { adminEverywhereDenied } from "./overview-route.js";

/**
 * GET /api/cluster: the cluster's members, shard owners and recent shard
 * events (GetClusterStatus, which needs admin on every queue), times in
 * epoch ms; `{ clustered: false }` outside cluster mode. A token without
 * admin on every queue is answered `{ clustered: null, denied }`, the
 * reason in words, as the overview answers `brokersDenied`: the page says
 * why instead of showing a refusal.
 */
export async function answerCluster({ admin }: { readonly admin: AdminCalls }): Promise<object> {
  let status: Awaited<ReturnType<AdminCalls["clusterStatus"]>>;
  try {
    status = await admin.clusterStatus();
  } catch (error) {
    if (brokerFailure(error)?.reason !== "PERMISSION_DENIED") throw error;
    return { clustered: null, denied: adminEverywhereDenied };
  }
  if (!status.clustered) return { clustered: false };
  return {
    clustered: true,
    thisNode: status.nodeId,
    members: status.members.map((member) => ({
      nodeId: member.nodeId,
      address: member.address,
      live: member.live,
      shards: member.shards,
      lastHeartbeat: Number(member.lastHeartbeatMs),
    })),
    shards: status.shards.map((shard) => ({
      shard: shard.shard,
      owner: shard.owner === "" ? null : shard.owner,
      epoch: Number(shard.epoch),
    })),
    events: status.events.map((event) => ({
      time: Number(event.timeMs),
      kind: event.kind,
      shard: event.shard,
      nodeId: event.nodeId,
      peer: event.peer === "" ? null : event.peer,
      reason: event.reason,
    })),
  };
}
