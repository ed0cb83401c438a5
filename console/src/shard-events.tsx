// The cluster's recent changes of shard owners, newest first: a shard
// claimed (taken over from a broker that stopped, or handed over by one),
// released to a peer, or lost.
import { formatAgo, formatDateTime } from "./format.js";
import type { ShardEvent } from "./overview-types.js";

/** What an event means, in words. */
function describe(event: ShardEvent): string {
  switch (event.kind) {
    case "claimed":
      return event.peer === null ? "claimed" : `claimed from ${event.peer}`;
    case "released":
      return event.peer === null ? "handed over" : `handed over to ${event.peer}`;
    case "lost":
      return "lost";
  }
}

// The reasons the brokers record, in words; one not listed here is shown as it is.
const reasonText: Record<string, string> = {
  start: "broker started",
  takeover: "takeover: the previous holder stopped or its lease ran out",
  balance: "balance: shards spread over the members",
  handover: "hand-over",
  shutdown: "broker shut down",
  "claimed-by-another": "another broker claimed it",
  "lease-lapsed": "its lease ran out",
  "storage-failure": "storage failure",
};

/** A table of the events, newest first; `now` for their "ago". */
export function ShardEvents({ events, now }: { events: readonly ShardEvent[]; now: number }) {
  if (events.length === 0) return <p data-testid="events-none">No shard has changed owner recently.</p>;
  const newestFirst = [...events].sort((a, b) => b.time - a.time);
  return (
    <div class="table-scroll">
      <table class="event-table">
        <caption class="visually-hidden">Recent changes of shard owners, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Broker</th>
            <th scope="col">Change</th>
            <th scope="col" class="numeric">
              Shard
            </th>
            <th scope="col">Reason</th>
          </tr>
        </thead>
        <tbody>
          {newestFirst.map((event, i) => (
            <tr key={`${event.time}-${event.shard}-${event.nodeId}-${i}`} data-testid="shard-event">
              <th scope="row">
                {formatDateTime(event.time)} <span class="muted">({formatAgo(event.time, now)})</span>
              </th>
              <td>{event.nodeId}</td>
              <td>{describe(event)}</td>
              <td class="numeric">{event.shard}</td>
              <td>{reasonText[event.reason] ?? event.reason}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
