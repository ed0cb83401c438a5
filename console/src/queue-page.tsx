// One queue, in tabs (issue #36): Overview (what it is, its counts, its
// history), Messages (the browser, a page of its own), Send (a test message),
// Settings, and Redrive on a dead-letter queue. The actions on the whole
// queue (purge, delete) stay above the tabs. What the session's token may not
// do is shown disabled with the reason, never refused after the click.
import { useState } from "preact/hooks";
import { deleteQueue, getQueue, purgeQueue } from "./api.js";
import type { QueueDetail } from "./api-types.js";
import { ConfirmDialog } from "./confirm-dialog.js";
import { plural } from "./format.js";
import { messageOf } from "./form-errors.js";
import { ErrorMessage, useNotify } from "./notices.js";
import { PageHeading } from "./page-heading.js";
import { ActionButton, DeniedReason, deniedReason } from "./permitted-action.js";
import { QueueOverview } from "./queue-overview.js";
import { QueueSettingsForm } from "./queue-settings-form.js";
import { QueueTabs } from "./queue-tabs.js";
import { RedrivePanel } from "./redrive-panel.js";
import { queuesHref, type QueueTab } from "./route.js";
import { SendMessageForm } from "./send-message-form.js";
import { usePoll } from "./use-poll.js";

const refreshMs = 5000;

/** The page of queue `name`, at tab `tab`. */
export function QueuePage({ name, tab }: { name: string; tab: QueueTab }) {
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
          <a href={queuesHref}>Back to every queue</a>
        </p>
      </>
    );
  }

  const { queue } = detail;
  const { stats, permissions } = queue;
  const total = stats.visible + stats.inFlight + stats.delayed;
  const sources = queue.deadLetterSourceQueues;
  const adminDenied = deniedReason(permissions, "admin", name);
  return (
    <>
      {heading}
      <ErrorMessage
        error={error === null ? null : `The last refresh failed: ${error}. The numbers below may be stale.`}
      />
      {/* biome-ignore lint/a11y/useSemanticElements: a row of actions, not a form's fieldset */}
      <div class="actions" role="group" aria-label="Queue actions">
        <ActionButton class="danger" denied={adminDenied} onClick={() => setConfirming("purge")} testId="purge">
          Purge…
        </ActionButton>
        <ActionButton class="danger" denied={adminDenied} onClick={() => setConfirming("delete")} testId="delete">
          Delete queue…
        </ActionButton>
      </div>
      <QueueTabs name={name} current={tab} deadLetterQueue={sources.length > 0} messagesDenied={adminDenied} />

      {tab === "overview" && <QueueOverview detail={detail} />}
      {tab === "send" && (
        <SendMessageForm
          name={name}
          fifo={queue.fifo}
          onSent={reload}
          denied={deniedReason(permissions, "send", name)}
        />
      )}
      {tab === "settings" && <QueueSettingsForm queue={queue} onSaved={reload} denied={adminDenied} />}
      {tab === "redrive" &&
        (sources.length === 0 ? (
          <p>{name} is the dead-letter queue of no queue: there is nothing to redrive.</p>
        ) : adminDenied !== null ? (
          <section aria-labelledby="redrive-heading">
            <h2 id="redrive-heading">Redrive</h2>
            <p>
              <button type="button" class="primary" disabled aria-describedby="redrive-denied" title={adminDenied}>
                Start moving messages
              </button>{" "}
              <DeniedReason id="redrive-denied">{adminDenied}</DeniedReason>
            </p>
          </section>
        ) : (
          <RedrivePanel name={name} sources={sources} fifo={queue.fifo !== null} onMoved={reload} />
        ))}

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
            location.hash = queuesHref;
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
