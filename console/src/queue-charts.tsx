// A queue's history as two charts: how many messages it holds, and how fast
// they come and go. The depth chart ends at the counts read with the page
// (the "Now" boxes), not at the last sample, which may be seconds older.
import { useMemo } from "preact/hooks";
import type { QueueHistory, QueueStats } from "./api-types.js";
import { formatCount, formatRate } from "./format.js";
import { LineChart } from "./line-chart.js";

/** The depth and rate charts of one queue; `stats` are its counts now. */
export function QueueCharts(props: { history: QueueHistory; sampledHere: boolean; stats: QueueStats }) {
  const { history, sampledHere, stats } = props;
  // Stamped when the counts arrive, so a re-render (a hover) does not move the last point.
  const depth = useMemo(() => withNow(history, stats, Date.now()), [history, stats]);
  // A queue another broker serves has its history there (cluster mode); a new one gets it at the next samples.
  const empty = sampledHere
    ? "No history yet: the broker samples its queues every few seconds."
    : "No history on this broker: it samples the queues it serves (in cluster mode, open the console of the broker that serves this queue), and a new queue from its next sample on.";
  return (
    <div class="charts">
      <LineChart
        title="Depth (messages)"
        times={depth.t}
        format={formatCount}
        empty={empty}
        series={[
          { label: "Visible", values: depth.visible, look: "look-1" },
          { label: "In flight", values: depth.inFlight, look: "look-2" },
          { label: "Delayed", values: depth.delayed, look: "look-3" },
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

/** The depth samples with the counts now after them (at `now`, or just after the last sample if the clocks disagree). */
function withNow(history: QueueHistory, stats: QueueStats, now: number) {
  const last = history.t[history.t.length - 1];
  if (last === undefined) return history;
  return {
    t: [...history.t, Math.max(now, last + 1)],
    visible: [...history.visible, stats.visible],
    inFlight: [...history.inFlight, stats.inFlight],
    delayed: [...history.delayed, stats.delayed],
  };
}
