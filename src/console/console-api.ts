import type { QueueCalls } from "../service/queue-calls.js";
import { consoleErrors } from "./console-error.js";
import {
  objectBody,
  optionalInteger,
  optionalString,
  optionalStringList,
  stringField,
  stringMap,
} from "./console-input.js";
import type { SessionPermissions } from "./console-permissions.js";
import { moveTaskView, queueView } from "./console-views.js";
import { queueConfigOf } from "./queue-config-json.js";
import { answerMessageRoute } from "./message-routes.js";
import { peekedMessageView } from "./peeked-message-view.js";
import { activitySeries, rowRates } from "./activity-views.js";
import { processingView } from "./processing-view.js";
import { listAllQueues } from "./list-all-queues.js";
import { readActivity } from "./queue-activity.js";
import { answerCluster } from "./cluster-route.js";
import { answerOverview } from "./overview-route.js";
import type { QueueHistory } from "./queue-history.js";
import type { AdminCalls } from "./admin-calls.js";

/** One API request, its body already parsed. */
export interface ApiRequest {
  readonly method: string;
  /** The path after /api/, split at "/" and decoded. */
  readonly segments: readonly string[];
  readonly query: URLSearchParams;
  readonly body: unknown;
}

/** What an API route works with: the broker's handlers as the session's token, and the history. */
export interface ApiContext {
  readonly calls: QueueCalls;
  /** AdminService's status RPCs as the session's token. */
  readonly admin: AdminCalls;
  readonly history: QueueHistory;
  readonly now: () => number;
  /** What the session's token may do, for the views' `permissions`. */
  readonly permissions: SessionPermissions;
  /** Writes the audit line of a per-message action, naming the session's token by its auth file name (never the token). */
  readonly audit: (fields: Record<string, unknown>) => void;
}

type Route = (request: ApiRequest, context: ApiContext, queue: string) => Promise<object>;

// Messages per page of the browser, unless the page asks for another size (up to PeekMessages' 100).
const defaultPeekPageSize = 20;
// Sparklines on the queue list show this many of the latest samples.
const sparklineSamples = 30;

/** Routes under /api/queues/<name>/…, by the segment after the name (""), then method. */
const queueRoutes: Record<string, Record<string, Route>> = {
  "": {
    GET: async (_request, { calls, history, now, permissions }, name) => {
      const { queue } = await calls.call("getQueue", { name });
      const view = queueView(queue!, permissions.on(name));
      // From the broker that serves the queue, whichever serves the console (activity-views.ts).
      const activity = (await readActivity(calls, 0, [name])).get(name);
      return {
        queue: view,
        history: activitySeries(activity, now(), view.stats),
        // null: no broker has sampled the queue yet (it is new, or moving between brokers).
        processing: activity === undefined ? null : processingView(activity),
        sampleIntervalMs: history.shape.sampleIntervalMs,
        // null outside cluster mode, and while no broker has sampled the queue.
        servedBy:
          activity === undefined || activity.nodeId === ""
            ? null
            : { nodeId: activity.nodeId, address: activity.address },
      };
    },
    // With `fields` (QueueConfig's field names), only those change: the settings form sends what the
    // operator edited, so a change another operator made meanwhile to another setting stays.
    PUT: async (request, { calls, permissions }, name) => {
      const body = objectBody(request.body);
      const config = queueConfigOf(body.config);
      const fields = optionalStringList(body, "fields");
      const { queue } = await calls.call("updateQueue", {
        name,
        config,
        ...(fields === undefined ? {} : { updateMask: { paths: fields } }),
      });
      return { queue: queueView(queue!, permissions.on(name)) };
    },
    DELETE: async (_request, { calls }, name) => {
      await calls.call("deleteQueue", { name });
      return {};
    },
  },
  purge: {
    POST: async (_request, { calls }, name) => {
      const { purgedCount } = await calls.call("purgeQueue", { name });
      return { purgedCount: Number(purgedCount) };
    },
  },
  messages: {
    GET: async (request, { calls }, name) => {
      const pageSize = Number(request.query.get("pageSize") ?? defaultPeekPageSize);
      const answer = await calls.call("peekMessages", {
        queue: name,
        // A size that is no number is passed on as one the broker refuses, naming page_size.
        pageSize: Number.isInteger(pageSize) ? pageSize : -1,
        pageToken: request.query.get("pageToken") ?? "",
      });
      return { messages: answer.messages.map(peekedMessageView), nextPageToken: answer.nextPageToken };
    },
    POST: async (request, { calls }, name) => {
      const body = objectBody(request.body);
      const text = stringField(body, "body");
      const attributes = stringMap(body, "attributes");
      const delaySeconds = optionalInteger(body, "delaySeconds", 0, 2 ** 31 - 1);
      // FIFO queues': the broker says which a queue needs, or refuses (NOT_A_FIFO_QUEUE, naming the field).
      const messageGroupId = optionalString(body, "messageGroupId") ?? "";
      const deduplicationId = optionalString(body, "deduplicationId") ?? "";
      const { messageId, sequenceNumber } = await calls.call("send", {
        queue: name,
        body: new TextEncoder().encode(text),
        attributes,
        ...(delaySeconds === undefined ? {} : { delay: { seconds: BigInt(delaySeconds) } }),
        messageGroupId,
        deduplicationId,
      });
      // A FIFO queue's duplicate (same deduplication id within five minutes) answers with the first send's id and number.
      return { messageId, sequenceNumber: sequenceNumber === "" ? null : sequenceNumber };
    },
  },
  "move-tasks": {
    GET: async (_request, { calls, now }, name) => {
      const { tasks } = await calls.call("listMessageMoveTasks", { sourceQueue: name });
      return { tasks: tasks.map((task) => moveTaskView(task, now())) };
    },
    POST: async (request, { calls }, name) => {
      const body = objectBody(request.body);
      const destinationQueue = optionalString(body, "destinationQueue") ?? "";
      const maxPerSecond = optionalInteger(body, "maxPerSecond", 0, 2 ** 31 - 1) ?? 0;
      const { taskHandle } = await calls.call("startMessageMoveTask", {
        sourceQueue: name,
        destinationQueue,
        maxPerSecond,
      });
      return { taskHandle };
    },
  },
};

/**
 * Answers one API request with the broker's handlers: every route is one or
 * a few QueueService calls made as the session's token, so the console can
 * do exactly what that token may do over gRPC, and no more.
 */
export async function answerApi(request: ApiRequest, context: ApiContext): Promise<object> {
  const [first, name, sub, ...rest] = request.segments;
  if (first === "queues" && name === undefined) {
    if (request.method === "GET") return listQueues(context);
    if (request.method === "POST") return createQueue(request, context);
    throw consoleErrors.methodNotAllowed();
  }
  if (first === "queues" && name !== undefined && rest.length === 0) {
    // Own keys only: a path segment such as "constructor" names no route.
    const routes = Object.hasOwn(queueRoutes, sub ?? "") ? queueRoutes[sub ?? ""] : undefined;
    if (routes === undefined) throw consoleErrors.notFound();
    const route = Object.hasOwn(routes, request.method) ? routes[request.method] : undefined;
    if (route === undefined) throw consoleErrors.methodNotAllowed();
    return route(request, context, name);
  }
  // Whole-broker (whole-cluster) views: overview-route.ts, cluster-route.ts.
  if ((first === "overview" || first === "cluster") && name === undefined) {
    if (request.method !== "GET") throw consoleErrors.methodNotAllowed();
    return first === "overview" ? answerOverview(context) : answerCluster(context);
  }
  if (first === "queues" && name !== undefined && sub === "messages")
    return answerMessageRoute(request, context, name, rest);
  if (first === "move-tasks" && name === "cancel" && sub === undefined) {
    if (request.method !== "POST") throw consoleErrors.methodNotAllowed();
    const taskHandle = stringField(objectBody(request.body), "taskHandle");
    const { movedCount } = await context.calls.call("cancelMessageMoveTask", { taskHandle });
    return { movedCount: Number(movedCount) };
  }
  throw consoleErrors.notFound();
}

/** Every queue the token may see, with its recent rates from the history of the broker that serves it. */
async function listQueues({ calls, history, now, permissions }: ApiContext): Promise<object> {
  const { queues, truncated } = await listAllQueues(calls);
  // One sample more than the sparklines show: it starts their window (rowRates).
  const activities = await readActivity(calls, sparklineSamples + 1);
  return {
    queues: queues.map((queue) => {
      const view = queueView(queue, permissions.on(queue.name));
      const activity = activities.get(queue.name);
      return {
        name: view.name,
        ...view.stats,
        deadLetterQueue: queue.config?.redrivePolicy?.deadLetterQueue || null,
        deadLetterSourceQueues: view.deadLetterSourceQueues,
        fifo: view.fifo,
        ...rowRates(activity),
        // null where no broker has sampled the queue yet: it cannot tell, rather than "no".
        deadLettering: activity?.deadLettering ?? null,
        oldestAgeGrowing: activity?.oldestAgeGrowing ?? null,
        permissions: view.permissions,
      };
    }),
    sampleIntervalMs: history.shape.sampleIntervalMs,
    rateWindowMs: sparklineSamples * history.shape.sampleIntervalMs,
    now: now(),
    truncated,
  };
}

async function createQueue(request: ApiRequest, { calls, permissions }: ApiContext): Promise<object> {
  const body = objectBody(request.body);
  const name = stringField(body, "name");
  const { queue } = await calls.call("createQueue", { name, config: queueConfigOf(body.config) });
  return { queue: queueView(queue!, permissions.on(name)) };
}
