// A queue's history as two charts: how many messages it holds, and how fast
// they come and go.
import type { QueueHistory } from "./api-types.js";
import { formatCount, formatRate } from "./format.js";
import { LineChart } from "./line-chart.js";

/** The depth and rate charts of one queue. */
export function QueueCharts({ history, sampledHere }: { history: QueueHistory; sampledHere: boolean }) {
  // A queue another broker serves has its history there (cluster mode); a new one gets it at the next samples.
  const empty = sampledHere
    ? "No history yet: the broker samples its queues every few seconds."
    : "No history on this broker: it samples the queues it serves (in cluster mode, open the console of the broker that serves this queue), and a new queue from its next sample on.";
  return (
    <div class="charts">
      <LineChart
        title="Depth (messages)"
        times={history.t}
        format={formatCount}
        empty={empty}
        series={[
          { label: "Visible", values: history.visible, look: "look-1" },
          { label: "In flight", values: history.inFlight, look: "look-2" },
          { label: "Delayed", values: history.delayed, look: "look-3" },
        ]}
      />
      <LineChart
        title="Rates (messages per second)"
        times={history.t}
        format={formatRate}
        empty={empty}
        series={[
          { label: "Sent", values: history.sent, look: "look-1" },
          { label: "Received", values: history.received, look: "look-2" },
          { label: "Deleted", values: history.deleted, look: "look-3" },
          { label: "Dead-lettered", values: history.deadLettered, look: "look-4" },
        ]}
      />
    </div>
  );
}
