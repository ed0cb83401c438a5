// The queue list: every queue the token may see, refreshed every few
// seconds, with a prefix filter and a Create queue button that opens the form
// in a dialog.
import { useState } from "preact/hooks";
import { listQueues } from "./api.js";
import type { QueueList } from "./api-types.js";
import { CreateQueueDialog } from "./create-queue-dialog.js";
import { formatTime, plural } from "./format.js";
import { messageOf } from "./form-errors.js";
import { ErrorMessage } from "./notices.js";
import { PageHeading } from "./page-heading.js";
import { ActionButton } from "./permitted-action.js";
import { QueueTable } from "./queue-table.js";
import { usePoll } from "./use-poll.js";

// Counts change between the broker's samples (every 10 s by default), so the list refreshes more often than that.
const refreshMs = 5000;

/** The queue list page; `adminEverywhere` (the session's admin on "*") lets it offer Create queue for any name. */
export function QueuesPage({ adminEverywhere }: { adminEverywhere: boolean }) {
  const [list, setList] = useState<QueueList | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [prefix, setPrefix] = useState("");
  const [reloads, setReloads] = useState(0);
  const [creating, setCreating] = useState(false);

  usePoll(
    async () => {
      try {
        setList(await listQueues());
        setError(null);
      } catch (caught) {
        setError(messageOf(caught));
      }
    },
    refreshMs,
    [reloads],
  );

  const shown = list?.queues.filter((queue) => queue.name.startsWith(prefix)) ?? [];
  const total = list?.queues.length ?? 0;
  // CreateQueue needs admin on the new name: certain with admin on "*"; without it, only when the
  // token is admin somewhere (a grant such as "orders-*" may cover the name). The broker still decides.
  const mayCreate = adminEverywhere || (list?.queues.some((queue) => queue.permissions.admin) ?? false);
  return (
    <>
      <PageHeading title="Queues">Queues</PageHeading>
      <div class="toolbar">
        <div class="field inline">
          <label for="queue-filter">Filter by name prefix</label>
          <input
            id="queue-filter"
            type="search"
            value={prefix}
            onInput={(event) => setPrefix(event.currentTarget.value)}
            spellcheck={false}
          />
        </div>
        <ActionButton
          class="primary"
          denied={mayCreate ? null : "needs admin permission on the new queue's name"}
          onClick={() => setCreating(true)}
          testId="create-queue"
        >
          Create queue…
        </ActionButton>
        <p class="muted updated">
          {list !== null && `Updated ${formatTime(list.now)}; refreshes every ${refreshMs / 1000} s.`}
          {error !== null && list !== null && " The last refresh failed; these numbers may be stale."}
        </p>
      </div>
      <ErrorMessage error={error} />
      {list === null ? (
        error === null && <p>Loading queues…</p>
      ) : total === 0 ? (
        <p>There are no queues that this token may see.</p>
      ) : (
        <>
          <QueueTable
            queues={shown}
            rateWindowMs={list.rateWindowMs}
            sampleIntervalMs={list.sampleIntervalMs}
            caption={
              prefix === ""
                ? plural(total, "queue")
                : `${shown.length} of ${plural(total, "queue")}, names starting “${prefix}”`
            }
          />
          {shown.length === 0 && <p>No queue's name starts with “{prefix}”.</p>}
          {list.truncated && (
            <p>
              Only the first {total.toLocaleString("en-US")} queues by name are listed; filter with holdshelf queue list
              --prefix to see the rest.
            </p>
          )}
        </>
      )}
      {creating && <CreateQueueDialog onCreated={() => setReloads((n) => n + 1)} onClose={() => setCreating(false)} />}
    </>
  );
}
