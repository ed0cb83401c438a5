// A dead-letter queue's move tasks, newest first, with progress and a
// Cancel button on the one that runs.
import { useState } from "preact/hooks";
import { cancelMoveTask } from "./api.js";
import type { MoveTask } from "./api-types.js";
import { formatCount, formatRate, formatTime } from "./format.js";
import { messageOf } from "./form-errors.js";
import { ErrorMessage, useNotify } from "./notices.js";

const statusIcons: Record<MoveTask["status"], string> = { RUNNING: "⟳", COMPLETED: "✓", CANCELLED: "⊘", FAILED: "✗" };

/** The table of move tasks; `onChanged` reloads it after a cancel. */
export function MoveTaskList({ tasks, onChanged }: { tasks: readonly MoveTask[]; onChanged: () => void }) {
  const notify = useNotify();
  const [error, setError] = useState<string | null>(null);
  const [cancelling, setCancelling] = useState<string | null>(null);
  if (tasks.length === 0) return <p class="muted">No move tasks have run from this queue.</p>;

  const cancel = async (handle: string) => {
    setCancelling(handle);
    try {
      const { movedCount } = await cancelMoveTask(handle);
      setError(null);
      notify(`Cancelled the move task after ${formatCount(movedCount)} messages.`);
      onChanged();
    } catch (caught) {
      setError(messageOf(caught));
    } finally {
      setCancelling(null);
    }
  };

  return (
    <>
      <ErrorMessage error={error} />
      <div class="table-scroll">
        <table class="move-tasks">
          <caption>Move tasks, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Started</th>
              <th scope="col">Status</th>
              <th scope="col">Destination</th>
              <th scope="col">Progress</th>
              <th scope="col" class="numeric">
                Rate
              </th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {tasks.map((task) => (
              <tr key={`${task.startTime}-${task.status}`}>
                <th scope="row">{task.startTime === null ? "–" : formatTime(task.startTime)}</th>
                <td>
                  <span class={`status status-${task.status.toLowerCase()}`}>
                    <span aria-hidden="true">{statusIcons[task.status]} </span>
                    <span data-testid="move-task-status">{task.status}</span>
                  </span>
                  {task.failureReason !== null && (
                    <p class="field-error" data-testid="move-task-failure">
                      {task.failureReason}
                    </p>
                  )}
                </td>
                <td>{task.destinationQueue ?? "back to the source queues"}</td>
                <td>
                  <progress
                    max={Math.max(task.toMoveCount, 1)}
                    value={task.movedCount}
                    aria-label={`Moved ${formatCount(task.movedCount)} of ${formatCount(task.toMoveCount)} messages`}
                  />{" "}
                  <span data-testid="move-task-moved">{task.movedCount}</span> of{" "}
                  <span data-testid="move-task-total">{task.toMoveCount}</span>
                </td>
                <td class="numeric">
                  {task.ratePerSecond === null ? "–" : formatRate(task.ratePerSecond)}
                  {task.maxPerSecond !== null && <span class="muted"> (limit {task.maxPerSecond}/s)</span>}
                </td>
                <td>
                  {task.status === "RUNNING" && task.taskHandle !== null && (
                    <button
                      type="button"
                      onClick={() => cancel(task.taskHandle!)}
                      disabled={cancelling === task.taskHandle}
                    >
                      Cancel move task
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}
