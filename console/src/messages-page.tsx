// The message browser: a queue's messages oldest first, a page at a time.
// It only peeks, so browsing never delays or redelivers a message.
import { useEffect, useState } from "preact/hooks";
import { peekMessages } from "./api.js";
import type { MessagePage } from "./api-types.js";
import { formatTime, plural } from "./format.js";
import { messageOf } from "./form-errors.js";
import { MessageCard } from "./message-card.js";
import { ErrorMessage } from "./notices.js";
import { PageHeading } from "./page-heading.js";
import { queueHref } from "./route.js";

/** The message browser of queue `name`. */
export function MessagesPage({ name }: { name: string }) {
  // The token of the page shown ("" for the first) and how many pages in it is.
  const [position, setPosition] = useState({ token: "", number: 1, loads: 0 });
  const [page, setPage] = useState<MessagePage | null>(null);
  const [loadedAt, setLoadedAt] = useState<number | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

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
      <p>
        <a href={queueHref(name)}>Back to queue {name}</a>. Oldest first; browsing reads messages without receiving
        them, so it changes nothing.
        {loadedAt !== null && ` Read at ${formatTime(loadedAt)}.`}
      </p>
      <ErrorMessage error={error} />
      {page === null ? (
        error === null && <p>Loading messages…</p>
      ) : (
        <>
          {pager("Message pages")}
          <p class="muted" role="status" data-testid="message-count">
            {page.messages.length === 0
              ? "No messages on this page."
              : `${plural(page.messages.length, "message")} on this page.`}
          </p>
          <div class="messages">
            {page.messages.map((message) => (
              <MessageCard key={message.messageId} message={message} />
            ))}
          </div>
          {page.messages.length > 3 && pager("Message pages, at the end")}
        </>
      )}
    </>
  );
}
