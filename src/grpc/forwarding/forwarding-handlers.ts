import { toBinary, type DescMessage } from "@bufbuild/protobuf";
import { QueueService } from "../../../gen/holdshelf/v1/queue_service_pb.js";
import type { ClusterPeer, QueueRouter } from "../../cluster/queue-router.js";
import { queueFieldOfCall, queueOfCall, type QueueCall } from "../../protocol/queue-of-call.js";
import { queueServiceDefinition } from "../../protocol/queue-service-definition.js";
import type { CallContext } from "../../service/call-context.js";
import { ForwardedStatus } from "../../service/forwarded-status.js";
import { PreEncoded } from "../../service/pre-encoded.js";
import type { UnaryHandlers } from "../../service/unary-handlers.js";
import { forwardUnary } from "./forward-unary.js";
import { fanOutListQueues } from "./list-queues-fan-out.js";
import { OwnerHints } from "./owner-hints.js";
import { fanOutQueueActivity } from "./queue-activity-fan-out.js";
import type { PeerClients } from "./peer-clients.js";
import { forwardedMetadata, isForwarded } from "./peer-metadata.js";
import { notServedHere } from "./queue-moving.js";

type Handlers = UnaryHandlers<typeof QueueService>;
type Handler = (request: unknown, signal: AbortSignal, context: CallContext) => Promise<unknown>;

/**
 * Wraps QueueService's unary handlers so that any broker answers any call: a
 * call on a queue this broker serves runs here; one on a queue another
 * broker owns is passed to that owner (its answer and errors come back as
 * they are); one on a queue nobody serves this moment fails with the route's
 * error (QUEUE_MOVING). Each answer on a queue carries the owner hint.
 * Authorization wraps this, so a caller is refused before its queue's
 * owner is looked up.
 */
export function routeQueueCalls(handlers: Handlers, router: QueueRouter, peers: PeerClients): Handlers {
  const hints = new OwnerHints();
  const routed: Record<string, Handler> = {
    listQueues: fanOutListQueues(handlers.listQueues, router, peers) as Handler,
    listQueueActivity: fanOutQueueActivity(handlers.listQueueActivity, router, peers) as Handler,
  };
  for (const name of Object.keys(queueFieldOfCall) as QueueCall[]) {
    const run = handlers[name] as Handler;
    const queueOfRequest = (request: unknown): string => queueOfCall(name, request as object)!;
    const input = QueueService.method[name].input as DescMessage;
    const path = queueServiceDefinition[name]!.path;
    const forward = async (
      owner: ClusterPeer,
      request: unknown,
      signal: AbortSignal,
      context: CallContext,
    ): Promise<unknown> => {
      try {
        const answer = await forwardUnary(peers, {
          owner,
          path,
          // protobuf-es keeps unknown fields, so the owner reads what the caller sent.
          request: toBinary(input, request as never),
          metadata: forwardedMetadata(context.metadata, router.self.nodeId),
          deadline: context.deadline,
          signal,
        });
        context.trailer.metadata = hints.of(owner.address);
        return new PreEncoded(answer);
      } catch (error) {
        // The owner answered: it served the call. QUEUE_MOVING names no owner.
        if (error instanceof ForwardedStatus) context.trailer.metadata = hints.of(owner.address);
        throw error;
      }
    };
    routed[name] = (request, signal, context) => {
      const queue = queueOfRequest(request);
      const route = router.route(queue);
      if (route.kind === "local") {
        context.trailer.metadata = hints.of(router.self.address);
        return run(request, signal, context);
      }
      if (route.kind === "unavailable") return Promise.reject(route.error);
      if (isForwarded(context.metadata)) return Promise.reject(notServedHere(queue));
      return forward(route.owner, request, signal, context);
    };
  }
  return routed as Handlers;
}
