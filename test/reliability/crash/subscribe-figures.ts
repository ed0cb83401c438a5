import type { Ledger } from "./ledger.js";
import type { SubscribeConsumer, SubscribeCounts } from "./subscribe-consumer.js";

/** A distribution of delays, in ms. */
export interface DelaySummary {
  readonly count: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
}

/** What the Subscribe consumers of a crash run did, and how the leases of killed consumer processes came back. */
export interface SubscribeFigures extends SubscribeCounts {
  /** Leases held by consumer processes at their SIGKILL, with release_on_disconnect and without. */
  readonly leasesAtKills: { readonly released: number; readonly leftToDeadline: number };
  /** With release_on_disconnect: from a consumer process's SIGKILL until none of its leases was held any more (peeked). */
  readonly releasedAfterKill: DelaySummary;
  /** Without: from the SIGKILL to each lease's next delivery (to any consumer, or the drain). */
  readonly redeliveredAfterKill: DelaySummary;
}

/** Sums the consumers' counts and works out, from the ledger, when the leases of each killed consumer process were delivered again. */
export function subscribeFigures(consumers: readonly SubscribeConsumer[], ledger: Ledger): SubscribeFigures {
  const counts = {} as SubscribeCounts;
  for (const consumer of consumers)
    for (const [key, value] of Object.entries(consumer.counts) as [keyof SubscribeCounts, number][])
      counts[key] = (counts[key] ?? 0) + value;
  const deliveriesOf = new Map<string, { handle: string; end: number }[]>();
  for (const d of ledger.deliveries) deliveriesOf.set(d.messageId, [...(deliveriesOf.get(d.messageId) ?? []), d]);
  const released: number[] = [];
  const redelivered: number[] = [];
  const held = { released: 0, leftToDeadline: 0 };
  for (const kill of consumers.flatMap((consumer) => consumer.kills)) {
    held[kill.releaseOnDisconnect ? "released" : "leftToDeadline"] += kill.leases.length;
    if (kill.releasedAfterMs !== undefined) released.push(kill.releasedAfterMs);
    if (kill.releaseOnDisconnect) continue;
    for (const { delivery } of kill.leases) {
      const next = (deliveriesOf.get(delivery.messageId) ?? [])
        .filter((d) => d.handle !== delivery.handle && d.end >= kill.at)
        .map((d) => d.end - kill.at);
      // None when an ack whose answer the kill cut off had deleted it.
      if (next.length > 0) redelivered.push(Math.min(...next));
    }
  }
  return {
    ...counts,
    leasesAtKills: held,
    releasedAfterKill: summary(released),
    redeliveredAfterKill: summary(redelivered),
  };
}

function summary(values: readonly number[]): DelaySummary {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (share: number): number => sorted[Math.min(sorted.length - 1, Math.ceil(share * sorted.length) - 1)] ?? 0;
  return { count: sorted.length, p50: at(0.5), p99: at(0.99), max: sorted.at(-1) ?? 0 };
}
