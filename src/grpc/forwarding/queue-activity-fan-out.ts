import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import {
  ListQueueActivityRequestSchema,
  ListQueueActivityResponseSchema,
  type ListQueueActivityRequest,
  type ListQueueActivityResponse,
  type QueueActivity,
  type QueueService,
} from "../../../gen/holdshelf/v1/queue_service_pb.js";
import type { ClusterPeer, QueueRouter } from "../../cluster/queue-router.js";
import { queueServiceDefinition } from "../../protocol/queue-service-definition.js";
import { encodePageToken } from "../../protocol/queue-pages.js";
import type { CallContext } from "../../service/call-context.js";
import { PreEncoded } from "../../service/pre-encoded.js";
import { checkActivityRequest } from "../../service/queue-activity-handler.js";
import type { UnaryHandlers } from "../../service/unary-handlers.js";
import { forwardUnary } from "./forward-unary.js";
import type { PeerClients } from "./peer-clients.js";
import { isAbsentPeer } from "./peer-failure.js";
import { forwardedMetadata, isForwarded } from "./peer-metadata.js";

type ListQueueActivity = UnaryHandlers<typeof QueueService>["listQueueActivity"];

const path = queueServiceDefinition["listQueueActivity"]!.path;

/**
 * ListQueueActivity across a cluster, as ListQueues is fanned out: each
 * queue's activity comes from the broker that serves it and sampled it.
 * Without names, every broker that owns shards is asked for the same page,
 * and the pages are merged by name; with names, each name goes only to its
 * owner (a queue moving this moment, which nobody serves, is left out). The
 * caller's metadata goes along, so each owner answers only the queues the
 * caller's token may see. An owner that cannot answer (a 0.1.0 broker, which
 * lacks the method, during a rolling upgrade; one not reached, moving or
 * stopping) adds no activity: its queues show no rates rather than the whole
 * answer failing. A call another broker passed here answers this broker's
 * queues only.
 */
export function fanOutQueueActivity(
  local: ListQueueActivity,
  router: QueueRouter,
  peers: PeerClients,
): ListQueueActivity {
  return async (request, signal, context) => {
    if (isForwarded(context.metadata)) return local(request, signal, context);
    const { size } = checkActivityRequest(request);
    const asks = request.names.length === 0 ? everyOwner(request, router) : byOwner(request, router);
    if (asks.remote.size === 0)
      return asks.local === undefined ? create(ListQueueActivityResponseSchema) : local(asks.local, signal, context);
    const abandon = new AbortController();
    const cancelled = (): void => abandon.abort();
    signal.addEventListener("abort", cancelled, { once: true });
    try {
      const pages = await Promise.all([
        asks.local === undefined ? undefined : local(asks.local, signal, context).then(pageOf),
        ...[...asks.remote].map(async ([owner, asked]) => {
          try {
            return fromBinary(
              ListQueueActivityResponseSchema,
              await ask(peers, router, owner, asked, context, abandon.signal),
            );
          } catch (error) {
            if (isAbsentPeer(error)) return undefined;
            throw error;
          }
        }),
      ]);
      return mergePages(
        pages.filter((page) => page !== undefined),
        size,
      );
    } catch (error) {
      abandon.abort();
      throw error;
    } finally {
      signal.removeEventListener("abort", cancelled);
    }
  };
}

interface Asks {
  readonly local: ListQueueActivityRequest | undefined;
  readonly remote: Map<ClusterPeer, ListQueueActivityRequest>;
}

function everyOwner(request: ListQueueActivityRequest, router: QueueRouter): Asks {
  return { local: request, remote: new Map(router.owners().map((owner) => [owner, request])) };
}

/** The named queues grouped by the broker that serves each; names nobody serves now are asked of nobody. */
function byOwner(request: ListQueueActivityRequest, router: QueueRouter): Asks {
  const localNames: string[] = [];
  const remoteNames = new Map<string, { owner: ClusterPeer; names: string[] }>();
  for (const name of request.names) {
    const route = router.route(name);
    if (route.kind === "local") localNames.push(name);
    else if (route.kind === "remote") {
      const entry = remoteNames.get(route.owner.nodeId) ?? { owner: route.owner, names: [] };
      entry.names.push(name);
      remoteNames.set(route.owner.nodeId, entry);
    }
  }
  const narrowed = (names: string[]): ListQueueActivityRequest =>
    create(ListQueueActivityRequestSchema, { ...request, names });
  return {
    // No names left is no request: an empty list of names would ask for every queue.
    local: localNames.length === 0 ? undefined : narrowed(localNames),
    remote: new Map([...remoteNames.values()].map(({ owner, names }) => [owner, narrowed(names)])),
  };
}

function ask(
  peers: PeerClients,
  router: QueueRouter,
  owner: ClusterPeer,
  request: ListQueueActivityRequest,
  context: CallContext,
  signal: AbortSignal,
): Promise<Buffer> {
  return forwardUnary(peers, {
    owner,
    path,
    request: toBinary(ListQueueActivityRequestSchema, request),
    metadata: forwardedMetadata(context.metadata, router.self.nodeId),
    deadline: context.deadline,
    signal,
  });
}

function pageOf(answer: Awaited<ReturnType<ListQueueActivity>>): ListQueueActivityResponse {
  return answer instanceof PreEncoded
    ? fromBinary(ListQueueActivityResponseSchema, answer.bytes)
    : create(ListQueueActivityResponseSchema, answer);
}

/** The first `size` queues of the pages by name (a queue answered twice, as it moves, once), and a token if any broker has more. */
function mergePages(pages: readonly ListQueueActivityResponse[], size: number): ListQueueActivityResponse {
  const byName = new Map<string, QueueActivity>();
  for (const page of pages) {
    for (const activity of page.activity) if (!byName.has(activity.queue)) byName.set(activity.queue, activity);
  }
  const kept = [...byName.keys()].sort().slice(0, size);
  const more = byName.size > size || pages.some((page) => page.nextPageToken !== "");
  return create(ListQueueActivityResponseSchema, {
    activity: kept.map((name) => byName.get(name)!),
    nextPageToken: more && kept.length > 0 ? encodePageToken(kept[kept.length - 1]!) : "",
  });
}
