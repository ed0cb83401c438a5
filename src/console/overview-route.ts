import type { GetBrokerStatusResponse } from "../../gen/holdshelf/v1/admin_service_pb.js";
import { brokerFailure } from "../service/broker-failure.js";
import { totalRates } from "./activity-views.js";
import type { QueueCalls } from "../service/queue-calls.js";
import type { AdminCalls } from "./admin-calls.js";
import { listAllQueues } from "./list-all-queues.js";
import { readActivity } from "./queue-activity.js";

// The overview's rate chart: this many sample intervals, as the list's sparklines.
const overviewSamples = 30;

/** Why a token may not read broker or cluster status, in the words the page shows. */
export const adminEverywhereDenied = 'needs admin on every queue (a grant of admin on "*")';

/** What the overview reads: the console API's context (ApiContext), its parts the overview uses. */
export interface OverviewContext {
  readonly calls: QueueCalls;
  readonly admin: AdminCalls;
  readonly history: { readonly shape: { readonly sampleIntervalMs: number } };
  readonly now: () => number;
}

/** Why a queue needs a look. */
type AttentionReason = "dead-lettering" | "oldest-age-growing" | "at-max-in-flight";

/**
 * GET /api/overview: the whole broker (the whole cluster, in cluster mode)
 * at a glance. Totals and attention come from the queues the token may see,
 * rates from their owners' histories, and the brokers' status from
 * GetBrokerStatus, which needs admin on every queue: for another token
 * `brokers` is null and `brokersDenied` says why.
 */
export async function answerOverview({ calls, admin, history, now }: OverviewContext): Promise<object> {
  const { queues, truncated } = await listAllQueues(calls);
  const [activities, status] = await Promise.all([readActivity(calls, overviewSamples + 1), brokerStatus(admin)]);
  const totals = { queues: queues.length, visible: 0, inFlight: 0, delayed: 0, deadLetterDepth: 0 };
  const attention: { queue: string; reasons: AttentionReason[] }[] = [];
  for (const queue of queues) {
    const visible = Number(queue.stats?.visible ?? 0);
    const inFlight = Number(queue.stats?.inFlight ?? 0);
    const delayed = Number(queue.stats?.delayed ?? 0);
    totals.visible += visible;
    totals.inFlight += inFlight;
    totals.delayed += delayed;
    // A dead-letter queue is one some queue names in its redrive policy.
    if (queue.deadLetterSourceQueues.length > 0) totals.deadLetterDepth += visible + inFlight + delayed;
    const activity = activities.get(queue.name);
    const maxInFlight = queue.config?.maxInFlight ?? 0;
    const reasons: AttentionReason[] = [];
    if (activity?.deadLettering === true) reasons.push("dead-lettering");
    if (activity?.oldestAgeGrowing === true) reasons.push("oldest-age-growing");
    if (maxInFlight > 0 && inFlight >= maxInFlight) reasons.push("at-max-in-flight");
    if (reasons.length > 0) attention.push({ queue: queue.name, reasons });
  }
  const brokers = status.answer?.brokers.map((broker) => ({
    nodeId: broker.nodeId === "" ? null : broker.nodeId,
    address: broker.address === "" ? null : broker.address,
    version: broker.version === "" ? null : broker.version,
    startedAt: broker.startedAtMs === 0n ? null : Number(broker.startedAtMs),
    uptimeMs: broker.startedAtMs === 0n ? null : now() - Number(broker.startedAtMs),
    storage: broker.storage === "" ? null : broker.storage,
    state: broker.state,
    budgets: broker.budgets.map((budget) => ({
      name: budget.name,
      used: Number(budget.used),
      limit: Number(budget.limit),
      unit: budget.unit,
    })),
    heartbeatStreams: Number(broker.heartbeatStreams),
    subscribeStreams: Number(broker.subscribeStreams),
  }));
  return {
    now: now(),
    sampleIntervalMs: history.shape.sampleIntervalMs,
    rateWindowMs: overviewSamples * history.shape.sampleIntervalMs,
    totals,
    rates: totalRates([...activities.values()], overviewSamples),
    consumers:
      brokers === undefined
        ? null
        : {
            heartbeatStreams: brokers.reduce((sum, broker) => sum + broker.heartbeatStreams, 0),
            subscribeStreams: brokers.reduce((sum, broker) => sum + broker.subscribeStreams, 0),
          },
    brokers: brokers ?? null,
    brokersDenied: status.denied ?? null,
    attention,
    truncated,
  };
}

/** The brokers' status, or why the token may not read it. */
async function brokerStatus(admin: AdminCalls): Promise<{ answer?: GetBrokerStatusResponse; denied?: string }> {
  try {
    return { answer: await admin.brokerStatus() };
  } catch (error) {
    if (brokerFailure(error)?.reason !== "PERMISSION_DENIED") throw error;
    return { denied: adminEverywhereDenied };
  }
}
