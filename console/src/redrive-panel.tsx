// Redrive for a dead-letter queue: start a move task that sends its messages
// back (or to a named queue), and watch the tasks run.
import { numberOrText } from "./number-field.js";
import { Fragment } from "preact";
import { useState } from "preact/hooks";
import { listMoveTasks, startMoveTask } from "./api.js";
import type { MoveTask } from "./api-types.js";
import { formErrorOf, messageOf, type FormError } from "./form-errors.js";
import { MoveTaskList } from "./move-task-list.js";
import { ErrorMessage, useNotify } from "./notices.js";
import { queueHref } from "./route.js";
import { usePoll } from "./use-poll.js";

// A running task is watched every second, so its progress bar moves; otherwise the list is only kept fresh.
const runningRefreshMs = 1000;
const idleRefreshMs = 10_000;

interface RedrivePanelProps {
  readonly name: string;
  readonly sources: readonly string[];
  /** A FIFO dead-letter queue, whose messages the broker moves only to FIFO queues. */
  readonly fifo: boolean;
  readonly onMoved: () => void;
}

/** The redrive section of dead-letter queue `name`, whose sources are `sources`. */
export function RedrivePanel({ name, sources, fifo, onMoved }: RedrivePanelProps) {
  const notify = useNotify();
  const [tasks, setTasks] = useState<readonly MoveTask[] | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [target, setTarget] = useState<"sources" | "named">("sources");
  const [destination, setDestination] = useState("");
  const [rate, setRate] = useState("");
  const [error, setError] = useState<FormError | null>(null);
  const [busy, setBusy] = useState(false);
  const [reloads, setReloads] = useState(0);

  const running = tasks?.some((task) => task.status === "RUNNING") ?? false;
  usePoll(
    async () => {
      try {
        const next = (await listMoveTasks(name)).tasks;
        // A task that just finished changed the counts the page shows.
        if (tasks?.some((task) => task.status === "RUNNING") && !next.some((task) => task.status === "RUNNING"))
          onMoved();
        setTasks(next);
        setLoadError(null);
      } catch (caught) {
        setLoadError(messageOf(caught));
      }
    },
    running ? runningRefreshMs : idleRefreshMs,
    [name, reloads, running],
  );

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    try {
      await startMoveTask(name, {
        destinationQueue: target === "named" ? destination.trim() : null,
        maxPerSecond: rate.trim() === "" ? null : numberOrText(rate),
      });
      setError(null);
      notify(
        `Started moving messages from ${name} ${target === "named" ? `to ${destination.trim()}` : "back to their source queues"}.`,
      );
      setReloads((n) => n + 1);
    } catch (caught) {
      setError(
        formErrorOf(
          caught,
          (field) =>
            field === "destinationQueue" ||
            field === "destination_queue" ||
            field.endsWith("per_second") ||
            field === "maxPerSecond",
        ),
      );
    } finally {
      setBusy(false);
    }
  };

  const destinationError = error?.fields.get("destinationQueue") ?? error?.fields.get("destination_queue");
  const rateError = error?.fields.get("maxPerSecond") ?? error?.fields.get("max_per_second");
  return (
    <section aria-labelledby="redrive-heading">
      <h2 id="redrive-heading">Redrive</h2>
      <p>
        This is the dead-letter queue of{" "}
        {sources.map((source, i) => (
          <Fragment key={source}>
            {i > 0 && ", "}
            <a href={queueHref(source)}>{source}</a>
          </Fragment>
        ))}
        . A move task sends its messages on in the background, oldest first.
      </p>
      <form class="redrive" onSubmit={submit} noValidate aria-label="Start a redrive">
        <fieldset>
          <legend>Move the messages to</legend>
          <label class="choice">
            <input
              type="radio"
              name="redrive-target"
              checked={target === "sources"}
              onChange={() => setTarget("sources")}
            />
            Back to the queues they came from
          </label>
          <label class="choice">
            <input
              type="radio"
              name="redrive-target"
              checked={target === "named"}
              onChange={() => setTarget("named")}
            />
            Another queue
          </label>
          <div class={destinationError === undefined ? "field" : "field invalid"}>
            <label for="redrive-destination">Destination queue</label>
            <input
              id="redrive-destination"
              value={destination}
              disabled={target !== "named"}
              onInput={(event) => setDestination(event.currentTarget.value)}
              spellcheck={false}
              aria-invalid={destinationError === undefined ? undefined : "true"}
              aria-describedby={`redrive-destination-help${destinationError === undefined ? "" : " redrive-destination-error"}`}
            />
            <p class="help" id="redrive-destination-help">
              {fifo
                ? "A FIFO queue: its messages move only to another FIFO queue, keeping their groups and order."
                : "A standard queue: its messages move only to another standard queue."}
            </p>
            {destinationError !== undefined && (
              <p class="field-error" id="redrive-destination-error">
                {destinationError}
              </p>
            )}
          </div>
        </fieldset>
        <div class={rateError === undefined ? "field" : "field invalid"}>
          <label for="redrive-rate">Rate limit, messages per second (optional)</label>
          <input
            id="redrive-rate"
            type="text"
            inputMode="numeric"
            spellcheck={false}
            value={rate}
            onInput={(event) => setRate(event.currentTarget.value)}
            aria-describedby={`redrive-rate-help${rateError === undefined ? "" : " redrive-rate-error"}`}
            aria-invalid={rateError === undefined ? undefined : "true"}
          />
          <p class="help" id="redrive-rate-help">
            Empty: as fast as the broker goes.
          </p>
          {rateError !== undefined && (
            <p class="field-error" id="redrive-rate-error">
              {rateError}
            </p>
          )}
        </div>
        <ErrorMessage error={error?.message ?? null} />
        <button type="submit" class="primary" disabled={busy || running}>
          Start redrive
        </button>
        {running && <p class="help">A move task is running; one runs at a time per queue.</p>}
      </form>
      <h3>Move tasks</h3>
      <ErrorMessage error={loadError} />
      {tasks === null ? (
        loadError === null && <p>Loading move tasks…</p>
      ) : (
        <MoveTaskList tasks={tasks} onChanged={() => setReloads((n) => n + 1)} />
      )}
    </section>
  );
}
