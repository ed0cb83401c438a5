// A queue's history as two charts: how many messages it holds, and how fast
// they come and go. The broker that serves the queue keeps the history, and
// ends it with the counts now (the "Now" boxes), so the depth chart's last
// point is theirs; that point has no rates yet.
import type { QueueHistory } from "./api-types.js";
import { formatCount, formatRate } from "./format.js";
import { LineChart } from "./line-chart.js";

/** The depth and rate charts of one queue; `sampled` is false until the queue's owner has sampled it. */
export function QueueCharts({ history, sampled }: { history: QueueHistory; sampled: boolean }) {
  const empty = sampled
    ? "No history yet: the broker that serves this queue samples it every few seconds."
    : "No history yet: no broker has sampled this queue (it is new, or moving to another broker); its history starts at the next sample.";
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
          { label: "Moved in", values: history.arrived, look: "look-5" },
        ]}
      />
    </div>
  );
}
