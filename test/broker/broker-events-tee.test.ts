import { describe, expect, it } from "vitest";
import { ignoredBrokerEvents, type BrokerEvents } from "../../src/broker/broker-events.js";
import { teeEvents } from "../../src/broker/broker-events-tee.js";

type EventName = keyof BrokerEvents;
// Every method of BrokerEvents: the no-op events must have them all, so a new event is tested here too.
const eventNames = Object.keys(ignoredBrokerEvents) as EventName[];

/** How many arguments each event takes; a Record, so a new event does not compile until it is added. */
const arity: Record<EventName, number> = {
  sent: 3,
  delivered: 3,
  emptyReceive: 1,
  deleted: 2,
  deadLettered: 3,
  arrived: 2,
  movedByTask: 2,
  retentionExpired: 2,
  leaseExpired: 2,
  leaseExtended: 2,
  leaseReleased: 2,
  pushed: 2,
  streamAcked: 2,
  creditFilled: 1,
};

/** A listener that records each call through `this`, as a class's methods (BrokerMetrics') need. */
function recorder(): BrokerEvents & { readonly calls: unknown[][] } {
  const methods = eventNames.map((name) => [
    name,
    function (this: { calls: unknown[][] }, ...args: unknown[]) {
      this.calls.push([name, ...args]);
    },
  ]);
  return { ...(Object.fromEntries(methods) as BrokerEvents), calls: [] };
}

describe("teeEvents", () => {
  it("passes every event, with its arguments, to each listener", () => {
    const first = recorder();
    const second = recorder();
    const tee = teeEvents(first, second);
    const calls = eventNames.map((name, i) => [name, ...[`queue-${i}`, i, `third-${i}`].slice(0, arity[name])]);
    for (const [name, ...args] of calls) (tee[name as EventName] as (...values: unknown[]) => void)(...args);
    expect(first.calls).toEqual(calls);
    expect(second.calls).toEqual(calls);
  });

  it("hands back a single listener as it is", () => {
    const only = recorder();
    expect(teeEvents(only)).toBe(only);
  });
});
