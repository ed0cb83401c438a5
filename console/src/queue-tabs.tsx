// A queue page's tabs: each is a link to its own fragment ("#/queues/jobs/settings"),
// so a tab can be bookmarked and shared, and the browser's back button goes
// back a tab. Links in a nav, marked with aria-current, rather than an ARIA
// tablist: each tab is a page of its own, and links need no key handling to be keyboard usable.
import { messagesHref, queueHref, type QueueTab } from "./route.js";

/** Which tab is shown: one of the queue page's, or the message browser. */
export type CurrentTab = QueueTab | "messages";

/** The tabs of queue `name`; Redrive only on a dead-letter queue, where it is. */
export function QueueTabs({
  name,
  current,
  deadLetterQueue,
  messagesDenied,
}: {
  name: string;
  current: CurrentTab;
  deadLetterQueue: boolean;
  /** Why the token may not browse the messages (PeekMessages needs admin); null when it may. */
  messagesDenied: string | null;
}) {
  const tabs: { tab: CurrentTab; label: string; href: string }[] = [
    { tab: "overview", label: "Overview", href: queueHref(name) },
    { tab: "messages", label: "Messages", href: messagesHref(name) },
    { tab: "send", label: "Send", href: queueHref(name, "send") },
    { tab: "settings", label: "Settings", href: queueHref(name, "settings") },
  ];
  if (deadLetterQueue || current === "redrive")
    tabs.push({ tab: "redrive", label: "Redrive", href: queueHref(name, "redrive") });
  return (
    <nav class="tabs" aria-label={`Queue ${name}`}>
      <ul>
        {tabs.map(({ tab, label, href }) => (
          <li key={tab}>
            {tab === "messages" && messagesDenied !== null ? (
              <span class="disabled" aria-disabled="true" title={messagesDenied}>
                {label} <span class="denied">({messagesDenied})</span>
              </span>
            ) : (
              <a
                href={href}
                aria-current={tab === current ? "page" : undefined}
                class={tab === current ? "current" : undefined}
              >
                {label}
              </a>
            )}
          </li>
        ))}
      </ul>
    </nav>
  );
}
