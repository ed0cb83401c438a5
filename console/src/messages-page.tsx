// The message browser: a queue's messages oldest first, a page at a time, as
// compact rows that open to the whole message and its actions; or the
// matches of a search. It only peeks, so browsing never delays or
// redelivers a message.
import { useEffect, useState } from "preact/hooks";
import { peekMessages } from "./api.js";
import type { MessagePage, PeekedMessage } from "./api-types.js";
import { formatCount, formatTime, plural } from "./format.js";
import { messageOf } from "./form-errors.js";
import { MessageRow } from "./message-row.js";
import { type MessageSearch, MessageSearchForm } from "./message-search-form.js";
import { ErrorMessage } from "./notices.js";
import { PageHeading } from "./page-heading.js";
import { deniedReason } from "./permitted-action.js";
import { QueueTabs } from "./queue-tabs.js";
import { queueHref } from "./route.js";
import { searchMessages } from "./triage-api.js";
import { loadTriageQueue, type TriageQueue } from "./triage-queue.js";

/** A search shown: its matches so far, each with the page token its scan started from. */
interface SearchState {
  readonly search: MessageSearch;
  readonly matches: readonly { message: PeekedMessage; pageToken: string }[];
  readonly scanned: number;
  readonly scanLimit: number;
  readonly nextPageToken: string;
}

/** The message browser of queue `name`. */
export function MessagesPage({ name }: { name: string }) {
  // The token of the page shown ("" for the first) and how many pages in it is.
  const [position, setPosition] = useState({ token: "", number: 1, loads: 0 });
  const [page, setPage] = useState<MessagePage | null>(null);
  const [loadedAt, setLoadedAt] = useState<number | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [queue, setQueue] = useState<TriageQueue | null>(null);
  const [searched, setSearched] = useState<SearchState | null>(null);
  // Messages deleted or moved from this page: gone from the list without a reload.
  const [gone, setGone] = useState<ReadonlySet<string>>(new Set());

  useEffect(() => {
    let current = true;
    loadTriageQueue(name).then(
      (loaded) => current && setQueue(loaded),
      (caught: unknown) => current && setError(messageOf(caught)),
    );
    return () => {
      current = false;
    };
  }, [name]);

  useEffect(() => {
    let current = true;
    setBusy(true);
    peekMessages(name, position.token)
      .then((answer) => {
        if (!current) return;
        setPage(answer);
        setLoadedAt(Date.now());
        setError(null);
      })
      .catch((caught: unknown) => current && setError(messageOf(caught)))
      .finally(() => current && setBusy(false));
    return () => {
      current = false;
    };
  }, [name, position]);

  const runSearch = async (search: MessageSearch, from: SearchState | null) => {
    setBusy(true);
    const pageToken = from?.nextPageToken ?? "";
    try {
      const answer = await searchMessages(name, search.field, search.text, pageToken);
      setSearched({
        search,
        matches: [...(from?.matches ?? []), ...answer.matches.map((message) => ({ message, pageToken }))],
        scanned: (from?.scanned ?? 0) + answer.scanned,
        scanLimit: answer.scanLimit,
        nextPageToken: answer.nextPageToken,
      });
      setLoadedAt(Date.now());
      setError(null);
    } catch (caught) {
      setError(messageOf(caught));
    } finally {
      setBusy(false);
    }
  };

  const rows = (messages: readonly { message: PeekedMessage; pageToken: string }[]) => (
    <ul class="message-rows">
      {messages
        .filter(({ message }) => !gone.has(message.messageId))
        .map(({ message, pageToken }) => (
          <MessageRow
            key={message.messageId}
            message={message}
            readAt={loadedAt ?? Date.now()}
            queue={queue}
            pageToken={pageToken}
            onDone={(messageId, left) => left && setGone(new Set([...gone, messageId]))}
          />
        ))}
    </ul>
  );

  const pager = (label: string) =>
    page !== null && (
      <nav class="pager" aria-label={label}>
        <button
          type="button"
          onClick={() => setPosition({ token: "", number: 1, loads: position.loads + 1 })}
          disabled={busy}
        >
          First page
        </button>
        <button
          type="button"
          onClick={() =>
            setPosition({ token: page.nextPageToken, number: position.number + 1, loads: position.loads + 1 })
          }
          disabled={busy || page.nextPageToken === ""}
        >
          Next page
        </button>
        <span class="muted">
          Page {position.number}
          {page.nextPageToken === "" && " (the last)"}
        </span>
      </nav>
    );

  return (
    <>
      <PageHeading title={`Messages of ${name}`}>
        <span class="heading-kind">Messages of </span>
        {name}
      </PageHeading>
      {queue !== null && (
        <QueueTabs
          name={name}
          current="messages"
          deadLetterQueue={queue.deadLetterSources.length > 0}
          messagesDenied={deniedReason(queue.permissions, "admin", name)}
        />
      )}
      <p>
        <a href={queueHref(name)}>Back to queue {name}</a>. Oldest first; browsing and searching read messages without
        receiving them, so they change nothing. Open a message for all of it and its actions.
        {loadedAt !== null && ` Read at ${formatTime(loadedAt)}.`}
      </p>
      <MessageSearchForm
        busy={busy}
        onSearch={(search) => void runSearch(search, null)}
        onClear={searched === null ? null : () => setSearched(null)}
      />
      <ErrorMessage error={error} />
      {searched !== null ? (
        <section aria-label="Search results">
          <p class="muted" role="status" data-testid="search-status">
            {formatCount(searched.matches.length)} {searched.matches.length === 1 ? "match" : "matches"} in{" "}
            {plural(searched.scanned, "message")} read
            {searched.nextPageToken === ""
              ? ", to the end of the queue."
              : `; a search reads at most ${formatCount(searched.scanLimit)} messages at a time.`}
          </p>
          {rows(searched.matches)}
          {searched.nextPageToken !== "" && (
            <button type="button" disabled={busy} onClick={() => void runSearch(searched.search, searched)}>
              Search further
            </button>
          )}
        </section>
      ) : page === null ? (
        error === null && <p>Loading messages…</p>
      ) : (
        <>
          {pager("Message pages")}
          <p class="muted" role="status" data-testid="message-count">
            {page.messages.length === 0
              ? "No messages on this page."
              : `${plural(page.messages.length, "message")} on this page.`}
          </p>
          {rows(page.messages.map((message) => ({ message, pageToken: position.token })))}
          {page.messages.length > 3 && pager("Message pages, at the end")}
        </>
      )}
    </>
  );
}
