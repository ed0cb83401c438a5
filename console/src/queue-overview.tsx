// A queue page's Overview tab: what the queue is (its type, its dead-letter
// relations), its counts now, how long its consumers take, and its history.
import { Fragment } from "preact";
import type { QueueDetail } from "./api-types.js";
import { fifoDeduplication } from "./fifo-text.js";
import { formatAge, formatCount, formatTime, plural } from "./format.js";
import { ProcessingTime } from "./processing-time.js";
import { QueueCharts } from "./queue-charts.js";
import { queueHref } from "./route.js";
import { ServedBy } from "./served-by.js";

/** The Overview tab of a queue's page. */
export function QueueOverview({ detail }: { detail: QueueDetail }) {
  const { queue, history, processing } = detail;
  const { stats } = queue;
  const dlq = queue.config.redrivePolicy?.deadLetterQueue;
  const sources = queue.deadLetterSourceQueues;
  return (
    <>
      <ul class="relations">
        <li data-testid="queue-type">
          Type:{" "}
          {queue.fifo === null ? (
            <>
              standard <span class="muted">(best-effort order)</span>
            </>
          ) : (
            <>
              <strong>FIFO</strong>{" "}
              <span class="muted">(each message group delivered in send order, one message at a time)</span>
            </>
          )}
        </li>
        {queue.fifo !== null && (
          <li data-testid="queue-deduplication">Deduplication: {fifoDeduplication(queue.fifo)}</li>
        )}
        <li>
          Dead-letter queue:{" "}
          {dlq === undefined || dlq === "" ? (
            <span class="muted">none</span>
          ) : (
            <>
              <a href={queueHref(dlq)}>{dlq}</a> after{" "}
              {plural(Number(queue.config.redrivePolicy!.maxReceiveCount), "receive")}
            </>
          )}
        </li>
        {sources.length > 0 && (
          <li>
            Dead-letter queue of:{" "}
            {sources.map((source, i) => (
              <Fragment key={source}>
                {i > 0 && ", "}
                <a href={queueHref(source)}>{source}</a>
              </Fragment>
            ))}
          </li>
        )}
        <ServedBy servedBy={detail.servedBy} />
        {queue.createTime !== null && <li class="muted">Created {formatTime(queue.createTime)}</li>}
      </ul>

      <section aria-labelledby="now-heading">
        <h2 id="now-heading">Now</h2>
        <dl class="stats">
          <div>
            <dt>Visible</dt>
            <dd data-testid="queue-visible">{formatCount(stats.visible)}</dd>
          </div>
          <div>
            <dt>In flight</dt>
            <dd data-testid="queue-in-flight">{formatCount(stats.inFlight)}</dd>
          </div>
          <div>
            <dt>Delayed</dt>
            <dd data-testid="queue-delayed">{formatCount(stats.delayed)}</dd>
          </div>
          <div>
            <dt>Oldest message</dt>
            <dd data-testid="queue-oldest-age">
              {stats.oldestMessageAgeMs === null ? "empty" : formatAge(stats.oldestMessageAgeMs)}
            </dd>
          </div>
        </dl>
        <ProcessingTime processing={processing} visibilityTimeout={queue.config.visibilityTimeout} />
      </section>

      <section aria-labelledby="history-heading">
        <h2 id="history-heading">History</h2>
        <QueueCharts history={history} sampled={processing !== null} />
      </section>
    </>
  );
}
