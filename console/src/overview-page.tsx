// The console's landing page: how much the broker holds, how fast messages
// come and go across every queue (the whole cluster's, in cluster mode),
// who consumes them, the brokers' state, and the queues that need a look.
import { useState } from "preact/hooks";
import { getOverview } from "./api.js";
import { AttentionList } from "./attention-list.js";
import { BrokerTable } from "./broker-table.js";
import { formatCount, formatRate, formatTime, formatWindow, plural } from "./format.js";
import { messageOf } from "./form-errors.js";
import { LineChart } from "./line-chart.js";
import { ErrorMessage } from "./notices.js";
import type { Overview } from "./overview-types.js";
import { PageHeading } from "./page-heading.js";
import { averageRate, latest, samplesIn } from "./rate-window.js";
import { queuesHref } from "./route.js";
import { usePoll } from "./use-poll.js";

// As the queue list: counts change between the broker's samples (every 10 s by default).
const refreshMs = 5000;

/** The Overview page. */
export function OverviewPage() {
  const [overview, setOverview] = useState<Overview | null>(null);
  const [error, setError] = useState<string | null>(null);

  usePoll(
    async () => {
      try {
        setOverview(await getOverview());
        setError(null);
      } catch (caught) {
        setError(messageOf(caught));
      }
    },
    refreshMs,
    [],
  );

  return (
    <>
      <PageHeading title="Overview">Overview</PageHeading>
      <p class="muted updated">
        {overview !== null && `Updated ${formatTime(overview.now)}; refreshes every ${refreshMs / 1000} s.`}
        {error !== null && overview !== null && " The last refresh failed; these numbers may be stale."}
      </p>
      <ErrorMessage error={error} />
      {overview === null ? error === null && <p>Loading…</p> : <OverviewSections overview={overview} />}
    </>
  );
}

function OverviewSections({ overview }: { overview: Overview }) {
  const { totals, consumers } = overview;
  return (
    <>
      <section aria-labelledby="totals-heading">
        <h2 id="totals-heading">Messages</h2>
        <dl class="stats">
          <Stat label="Queues" value={formatCount(totals.queues)} testId="total-queues" />
          <Stat label="Visible" value={formatCount(totals.visible)} testId="total-visible" />
          <Stat label="In flight" value={formatCount(totals.inFlight)} testId="total-in-flight" />
          <Stat label="Delayed" value={formatCount(totals.delayed)} testId="total-delayed" />
          <Stat label="In dead-letter queues" value={formatCount(totals.deadLetterDepth)} testId="total-dead-letter" />
        </dl>
        {overview.truncated && (
          <p>
            The totals count the first {plural(totals.queues, "queue")} by name only:{" "}
            <a href={queuesHref}>the queue list</a> says more.
          </p>
        )}
      </section>
      <OverviewRates overview={overview} />
      <section aria-labelledby="consumers-heading">
        <h2 id="consumers-heading">Connected consumers</h2>
        {consumers === null ? (
          <p class="muted" data-testid="consumers-denied">
            This token may not see the broker's connections.
          </p>
        ) : (
          <dl class="stats">
            <Stat
              label="Heartbeat streams"
              value={formatCount(consumers.heartbeatStreams)}
              testId="heartbeat-streams"
            />
            <Stat
              label="Subscribe streams"
              value={formatCount(consumers.subscribeStreams)}
              testId="subscribe-streams"
            />
          </dl>
        )}
      </section>
      <section aria-labelledby="brokers-heading">
        <h2 id="brokers-heading">
          {overview.brokers !== null && overview.brokers.length === 1 ? "Broker" : "Brokers"}
        </h2>
        {overview.brokers === null ? (
          <p data-testid="brokers-denied">
            Broker status is not shown: {overview.brokersDenied ?? "this token may not read it"}.
          </p>
        ) : (
          <BrokerTable brokers={overview.brokers} />
        )}
      </section>
      <section aria-labelledby="attention-heading">
        <h2 id="attention-heading">Queues that need attention</h2>
        <AttentionList attention={overview.attention} />
      </section>
    </>
  );
}

/**
 * The global rates over the rate window: each figure is the average of the
 * very samples the chart beside it draws.
 */
function OverviewRates({ overview }: { overview: Overview }) {
  const { rates, rateWindowMs, sampleIntervalMs } = overview;
  const count = samplesIn(rateWindowMs, sampleIntervalMs);
  // A broker up for less than the window has fewer samples: the label names the span they cover.
  const window = formatWindow(Math.min(count, Math.max(1, latest(rates.t, count).length)) * sampleIntervalMs);
  const series = [
    { key: "sent", label: "Sent", values: latest(rates.sent, count), look: "look-1" },
    { key: "received", label: "Received", values: latest(rates.received, count), look: "look-2" },
    { key: "deleted", label: "Deleted", values: latest(rates.deleted, count), look: "look-3" },
    { key: "dead-lettered", label: "Dead-lettered", values: latest(rates.deadLettered, count), look: "look-4" },
    // Sent counts sends alone; the list's Sent column adds these, as a queue sees them arrive.
    { key: "moved-in", label: "Moved in", values: latest(rates.arrived, count), look: "look-5" },
  ] as const;
  return (
    <section aria-labelledby="rates-heading">
      <h2 id="rates-heading">Rates</h2>
      <p class="muted">
        Messages a second across every queue, averaged over the last {window} (samples every{" "}
        {formatWindow(sampleIntervalMs)}).
      </p>
      <dl class="stats">
        {series.map((line) => (
          <Stat
            key={line.key}
            label={`${line.label} (${window} avg)`}
            value={line.values.length === 0 ? "–" : formatRate(averageRate(line.values))}
            testId={`overview-${line.key}-rate`}
          />
        ))}
      </dl>
      <div class="overview-chart">
        <LineChart
          title={`Rates over the last ${window} (messages per second)`}
          times={latest(rates.t, count)}
          format={formatRate}
          empty="No rates yet: the broker samples its queues every few seconds."
          series={series}
        />
      </div>
    </section>
  );
}

function Stat({ label, value, testId }: { label: string; value: string; testId: string }) {
  return (
    <div>
      <dt>{label}</dt>
      <dd data-testid={testId}>{value}</dd>
    </div>
  );
}
