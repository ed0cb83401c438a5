import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import {
  ListQueuesRequestSchema,
  ListQueuesResponseSchema,
  type ListQueuesResponse,
  type QueueService,
} from "../../../gen/holdshelf/v1/queue_service_pb.js";
import type { Queue } from "../../../gen/holdshelf/v1/queue_pb.js";
import type { QueueRouter } from "../../cluster/queue-router.js";
import { queueServiceDefinition } from "../../protocol/queue-service-definition.js";
import { defaultPageSize, encodePageToken } from "../../protocol/queue-pages.js";
import { PreEncoded } from "../../service/pre-encoded.js";
import type { UnaryHandlers } from "../../service/unary-handlers.js";
import { forwardUnary } from "./forward-unary.js";
import type { PeerClients } from "./peer-clients.js";
import { forwardedMetadata, isForwarded } from "./peer-metadata.js";

type ListQueues = UnaryHandlers<typeof QueueService>["listQueues"];

const path = queueServiceDefinition["listQueues"]!.path;

/**
 * ListQueues across a cluster: this broker's page and the same page asked
 * of every other broker that owns shards, merged by name. Each owner gets
 * the caller's metadata, so it shows only the queues the caller's token may
 * see. Page tokens name the last queue of a page, so the merged page's token
 * resumes every broker's listing at once. A call another broker passed here
 * lists this broker's queues only.
 */
export function fanOutListQueues(local: ListQueues, router: QueueRouter, peers: PeerClients): ListQueues {
  return async (request, signal, context) => {
    if (isForwarded(context.metadata)) return local(request, signal, context);
    const owners = router.owners();
    if (owners.length === 0) return local(request, signal, context);
    // First: it checks page_size and page_token before any broker is asked.
    const own = pageOf(await local(request, signal, context));
    const bytes = toBinary(ListQueuesRequestSchema, request);
    // One owner failing fails the call: the others' calls are of no use then.
    const abandon = new AbortController();
    const cancelled = (): void => abandon.abort();
    signal.addEventListener("abort", cancelled, { once: true });
    try {
      const theirs = await Promise.all(
        owners.map(async (owner) => {
          const answer = await forwardUnary(peers, {
            owner,
            path,
            request: bytes,
            metadata: forwardedMetadata(context.metadata, router.self.nodeId),
            deadline: context.deadline,
            signal: abandon.signal,
          });
          return fromBinary(ListQueuesResponseSchema, answer);
        }),
      );
      return mergePages([own, ...theirs], request.pageSize || defaultPageSize);
    } catch (error) {
      abandon.abort();
      throw error;
    } finally {
      signal.removeEventListener("abort", cancelled);
    }
  };
}

function pageOf(answer: Awaited<ReturnType<ListQueues>>): ListQueuesResponse {
  return answer instanceof PreEncoded
    ? fromBinary(ListQueuesResponseSchema, answer.bytes)
    : create(ListQueuesResponseSchema, answer);
}

/**
 * The first `size` queues of the pages by name (a queue listed twice, as it
 * moves, once), and a token after the last of them if any broker has more.
 */
function mergePages(pages: readonly ListQueuesResponse[], size: number): ListQueuesResponse {
  const byName = new Map<string, Queue>();
  for (const page of pages) {
    for (const queue of page.queues) if (!byName.has(queue.name)) byName.set(queue.name, queue);
  }
  // Names are ASCII, so code-unit order is the byte order each broker lists in.
  const kept = [...byName.keys()].sort().slice(0, size);
  const more = byName.size > size || pages.some((page) => page.nextPageToken !== "");
  return create(ListQueuesResponseSchema, {
    queues: kept.map((name) => byName.get(name)!),
    nextPageToken: more && kept.length > 0 ? encodePageToken(kept[kept.length - 1]!) : "",
  });
}
