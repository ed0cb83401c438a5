// One queue: its counts now, its history, how long its consumers take, and
// everything an operator does to it (settings, purge, delete, test message,
// redrive when it is a dead-letter queue).
import { Fragment } from "preact";
import { useState } from "preact/hooks";
import { deleteQueue, getQueue, purgeQueue } from "./api.js";
import type { QueueDetail } from "./api-types.js";
import { ConfirmDialog } from "./confirm-dialog.js";
import { fifoDeduplication } from "./fifo-text.js";
import { formatAge, formatCount, formatTime, plural } from "./format.js";
import { messageOf } from "./form-errors.js";
import { ErrorMessage, useNotify } from "./notices.js";
import { PageHeading } from "./page-heading.js";
import { ProcessingTime } from "./processing-time.js";
import { QueueCharts } from "./queue-charts.js";
import { QueueSettingsForm } from "./queue-settings-form.js";
import { RedrivePanel } from "./redrive-panel.js";
import { messagesHref, queueHref } from "./route.js";
import { SendMessageForm } from "./send-message-form.js";
import { ServedBy } from "./served-by.js";
import { usePoll } from "./use-poll.js";

const refreshMs = 5000;

/** The page of queue `name`. */
export function QueuePage({ name }: { name: string }) {
  const notify = useNotify();
  const [detail, setDetail] = useState<QueueDetail | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [reloads, setReloads] = useState(0);
  const [confirming, setConfirming] = useState<"purge" | "delete" | null>(null);
  const reload = () => setReloads((n) => n + 1);

  usePoll(
    async () => {
      try {
        setDetail(await getQueue(name));
        setError(null);
      } catch (caught) {
        setError(messageOf(caught));
      }
    },
    refreshMs,
    [name, reloads],
  );

  const heading = (
    <PageHeading title={`Queue ${name}`}>
      <span class="heading-kind">Queue </span>
      {name}
    </PageHeading>
  );
  if (detail === null) {
    return (
      <>
        {heading}
        <ErrorMessage error={error} />
        {error === null && <p>Loading…</p>}
        <p>
          <a href="#/queues">Back to every queue</a>
        </p>
      </>
    );
  }

  const { queue, history, processing } = detail;
  const { stats } = queue;
  const total = stats.visible + stats.inFlight + stats.delayed;
  const dlq = queue.config.redrivePolicy?.deadLetterQueue;
  const sources = queue.deadLetterSourceQueues;
  return (
    <>
      {heading}
      <ErrorMessage
        error={error === null ? null : `The last refresh failed: ${error}. The numbers below may be stale.`}
      />
      {/* biome-ignore lint/a11y/useSemanticElements: a row of actions, not a form's fieldset */}
      <div class="actions" role="group" aria-label="Queue actions">
        <a class="button-link" href={messagesHref(name)}>
          Browse messages
        </a>
        <button type="button" class="danger" onClick={() => setConfirming("purge")}>
          Purge…
        </button>
        <button type="button" class="danger" onClick={() => setConfirming("delete")}>
          Delete queue…
        </button>
      </div>
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
        <li class="muted">Created {formatTime(queue.createTime)}</li>
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

      {/* A dead-letter queue is opened to redrive it: that comes before its history. */}
      {sources.length > 0 && <RedrivePanel name={name} sources={sources} fifo={queue.fifo !== null} onMoved={reload} />}

      <section aria-labelledby="history-heading">
        <h2 id="history-heading">History</h2>
        <QueueCharts history={history} sampledHere={processing !== null} />
      </section>

      <SendMessageForm name={name} fifo={queue.fifo} onSent={reload} />
      <QueueSettingsForm queue={queue} onSaved={reload} />

      {confirming === "purge" && (
        <ConfirmDialog
          title={`Purge ${name}?`}
          confirmLabel={`Purge ${plural(total, "message")}`}
          onClose={() => setConfirming(null)}
          onConfirm={async () => {
            const { purgedCount } = await purgeQueue(name);
            notify(`Purged ${plural(purgedCount, "message")} from ${name}.`);
            reload();
          }}
        >
          <p>
            Purge {plural(total, "message")} from {name}? Every message is removed, in flight and delayed ones too. This
            cannot be undone.
          </p>
        </ConfirmDialog>
      )}
      {confirming === "delete" && (
        <ConfirmDialog
          title={`Delete queue ${name}?`}
          confirmLabel="Delete queue"
          typeToConfirm={name}
          onClose={() => setConfirming(null)}
          onConfirm={async () => {
            await deleteQueue(name);
            notify(`Deleted queue ${name}.`);
            location.hash = "#/queues";
          }}
        >
          <p>
            Delete the queue {name} and its {plural(total, "message")}? This cannot be undone.
            {sources.length > 0 &&
              " It is the dead-letter queue of other queues, so the broker will refuse until their redrive policies name another."}
          </p>
        </ConfirmDialog>
      )}
    </>
  );
}
