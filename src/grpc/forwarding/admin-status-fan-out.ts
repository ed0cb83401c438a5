import { create, fromBinary, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import {
  BrokerStatusSchema,
  GetBrokerStatusResponseSchema,
  GetClusterStatusResponseSchema,
  type GetClusterStatusResponse,
} from "../../../gen/holdshelf/v1/admin_service_pb.js";
import type { ClusterPeer } from "../../cluster/queue-router.js";
import type { AdminServiceHandlers } from "../../service/admin-service-handlers.js";
import type { CallContext } from "../../service/call-context.js";
import { adminServiceDefinition as definition } from "../admin-service.js";
import { forwardUnary } from "./forward-unary.js";
import type { PeerClients } from "./peer-clients.js";
import { peerFailure, type PeerFailure } from "./peer-failure.js";
import { forwardedMetadata, isForwarded } from "./peer-metadata.js";

/** Who to ask besides this broker: the other live members, and this broker's node id for the forwarded mark. */
export interface StatusPeers {
  readonly selfId: string;
  members(): ReadonlyMap<string, string>;
}

/**
 * The status RPCs across a cluster: GetBrokerStatus adds every other live
 * member's own status (one that does not answer is listed with why, as
 * peerFailure() names it: "unreachable", "unsupported" or "denied"),
 * and GetClusterStatus adds their shard events (a member that does not
 * answer adds none), each member asked with the caller's metadata, so it
 * checks the token again. A call another broker passed here answers this
 * broker's own.
 */
export function fanOutAdminStatus(
  handlers: AdminServiceHandlers,
  peers: PeerClients,
  cluster: StatusPeers | undefined,
): AdminServiceHandlers {
  if (cluster === undefined) return handlers;
  const askAll = <O extends DescMessage>(
    method: "getBrokerStatus" | "getClusterStatus",
    output: O,
    context: CallContext,
    signal: AbortSignal,
  ): Promise<({ member: ClusterPeer; answer: MessageShape<O> } | { member: ClusterPeer; failure: PeerFailure })[]> =>
    Promise.all(
      [...cluster.members()].map(async ([nodeId, address]) => {
        const member = { nodeId, address };
        try {
          const bytes = await forwardUnary(peers, {
            owner: member,
            path: definition[method]!.path,
            request: new Uint8Array(0),
            metadata: forwardedMetadata(context.metadata, cluster.selfId),
            deadline: context.deadline,
            signal,
          });
          return { member, answer: fromBinary(output, bytes) };
        } catch (error) {
          return { member, failure: peerFailure(error) };
        }
      }),
    );
  return {
    backup: handlers.backup,
    async getBrokerStatus(request, signal, context) {
      const own = await handlers.getBrokerStatus(request, signal, context);
      if (isForwarded(context.metadata)) return own;
      const theirs = await askAll("getBrokerStatus", GetBrokerStatusResponseSchema, context, signal);
      const others = theirs
        .flatMap((asked) =>
          "failure" in asked
            ? [create(BrokerStatusSchema, { ...asked.member, state: asked.failure })]
            : asked.answer.brokers.slice(0, 1),
        )
        .sort((a, b) => (a.nodeId < b.nodeId ? -1 : a.nodeId > b.nodeId ? 1 : 0));
      return create(GetBrokerStatusResponseSchema, { brokers: [...own.brokers, ...others] });
    },
    async getClusterStatus(request, signal, context) {
      const own = await handlers.getClusterStatus(request, signal, context);
      if (isForwarded(context.metadata) || !own.clustered) return own;
      const theirs = await askAll("getClusterStatus", GetClusterStatusResponseSchema, context, signal);
      return withEvents(
        own,
        theirs.flatMap((asked) => ("answer" in asked ? asked.answer.events : [])),
      );
    },
  };
}

/** The answer with other members' events added, newest first. */
function withEvents(
  own: GetClusterStatusResponse,
  events: GetClusterStatusResponse["events"],
): GetClusterStatusResponse {
  const all = [...own.events, ...events].sort((a, b) => Number(b.timeMs - a.timeMs));
  return create(GetClusterStatusResponseSchema, { ...own, events: all });
}
