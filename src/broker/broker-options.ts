import type { Store } from "../store/store.js";
import { systemClock, type Clock } from "../time/clock.js";
import { ignoredBrokerEvents, type BrokerEvents } from "./broker-events.js";
import { defaultBrokerLimits, type BrokerLimits } from "./broker-limits.js";
import type { BrokerMemoryOptions } from "./broker-memory.js";
import { noneElsewhere, type ClusterQueues } from "../store/cluster-queues.js";
import { defaultRenewalLinger, type RenewalLinger } from "./renewal-linger.js";

/** What a Broker is built on. */
export interface BrokerOptions {
  readonly store: Store;
  readonly clock?: Clock;
  /** Told of failures in background work (timers, cleanup), which have no caller to answer. */
  readonly onBackgroundError?: (error: unknown) => void;
  /** Told of messages and leases as they move, for metrics. */
  readonly events?: BrokerEvents;
  /** Capacity limits; unset ones take their defaults. */
  readonly limits?: Partial<BrokerLimits>;
  /** When Heartbeat renewals' writes wait for company; defaultRenewalLinger if unset. */
  readonly renewalLinger?: RenewalLinger;
  /** Cluster mode: the queues other brokers serve, for moves and checks across shards; none if unset. */
  readonly cluster?: ClusterQueues;
}

/** A Broker's options with every default filled in: what each load of its memory is built with, and the renewal linger. */
export interface BrokerSettings extends Omit<BrokerMemoryOptions, "store" | "stored"> {
  readonly renewalLinger: RenewalLinger;
}

/** Fills in the defaults of the options left unset. */
export function brokerSettings(options: BrokerOptions): BrokerSettings {
  return {
    clock: options.clock ?? systemClock,
    onBackgroundError: options.onBackgroundError ?? (() => undefined),
    events: options.events ?? ignoredBrokerEvents,
    limits: { ...defaultBrokerLimits, ...options.limits },
    cluster: options.cluster ?? noneElsewhere,
    renewalLinger: options.renewalLinger ?? defaultRenewalLinger,
  };
}
