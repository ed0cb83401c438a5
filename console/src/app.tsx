// The console's frame: the session check, the header and nav, and the page
// the location hash names.
import { useEffect, useState } from "preact/hooks";
import { onSessionRequired, session as fetchSession, signOut } from "./api.js";
import type { Session } from "./api-types.js";
import { ClusterPage } from "./cluster-page.js";
import { messageOf } from "./form-errors.js";
import { MessagesPage } from "./messages-page.js";
import { ErrorMessage, NoticeProvider } from "./notices.js";
import { OverviewPage } from "./overview-page.js";
import { PageHeading } from "./page-heading.js";
import { QueuePage } from "./queue-page.js";
import { QueuesPage } from "./queues-page.js";
import { clusterHref, overviewHref, queuesHref, useRoute, type Route } from "./route.js";
import { SignInPage } from "./sign-in-page.js";

const signedOut: Session = {
  authRequired: true,
  signedIn: false,
  principal: null,
  csrfToken: null,
  adminEverywhere: false,
};

/** The whole console. */
export function App() {
  const [session, setSession] = useState<Session | null>(null);
  const [error, setError] = useState<string | null>(null);
  const route = useRoute();

  useEffect(() => {
    const load = () => fetchSession().then(setSession, (caught: unknown) => setError(messageOf(caught)));
    void load();
    // A lost session (the broker restarted, the session expired) is asked about again: without
    // an auth file the broker opens a new one at once, so only a token-holding broker shows sign-in.
    return onSessionRequired(() => void load());
  }, []);

  const leave = async () => {
    try {
      await signOut();
      setSession(signedOut);
    } catch (caught) {
      setError(messageOf(caught));
    }
  };

  return (
    <NoticeProvider>
      {/* biome-ignore lint/a11y/useValidAnchor: a skip link is a link without script too; the click only moves focus as well */}
      <a class="skip-link" href="#main" onClick={skipToMain}>
        Skip to main content
      </a>
      <header class="site-header">
        <a class="brand" href={overviewHref}>
          holdshelf <span class="brand-sub">console</span>
        </a>
        <MainNav route={route} />
        {session?.signedIn && session.authRequired && (
          <div class="account">
            <span>
              Signed in as <strong>{session.principal}</strong>
            </span>
            <button type="button" onClick={leave}>
              Sign out
            </button>
          </div>
        )}
      </header>
      <main id="main" tabIndex={-1}>
        <ErrorMessage error={error} />
        {session === null ? (
          error === null && <p>Loading…</p>
        ) : session.signedIn ? (
          <PageOf key={keyOf(route)} route={route} adminEverywhere={session.adminEverywhere} />
        ) : (
          <SignInPage onSignedIn={(answer) => setSession({ ...signedOut, ...answer })} />
        )}
      </main>
    </NoticeProvider>
  );
}

// The nav's sections, each with the pages it covers: a queue's pages belong to Queues.
const sections = [
  { label: "Overview", href: overviewHref, pages: ["overview"] },
  { label: "Queues", href: queuesHref, pages: ["queues", "queue", "messages"] },
  { label: "Cluster", href: clusterHref, pages: ["cluster"] },
] as const;

/** The header's links; the current section is marked for screen readers and by its look. */
function MainNav({ route }: { route: Route }) {
  return (
    <nav aria-label="Main">
      <ul>
        {sections.map((section) => {
          const current = (section.pages as readonly string[]).includes(route.page);
          return (
            <li key={section.label}>
              <a
                href={section.href}
                aria-current={current ? "page" : undefined}
                class={current ? "current" : undefined}
              >
                {section.label}
              </a>
            </li>
          );
        })}
      </ul>
    </nav>
  );
}

/** The page of the current route; keyed by it, so each page starts fresh. `adminEverywhere` is the session's. */
function PageOf({ route, adminEverywhere }: { route: Route; adminEverywhere: boolean }) {
  switch (route.page) {
    case "overview":
      return <OverviewPage />;
    case "queues":
      return <QueuesPage adminEverywhere={adminEverywhere} />;
    case "cluster":
      return <ClusterPage />;
    case "queue":
      return <QueuePage name={route.name} tab={route.tab} />;
    case "messages":
      return <MessagesPage name={route.name} />;
    case "not-found":
      return (
        <>
          <PageHeading title="Not found">Not found</PageHeading>
          <p>
            The console has no page at “{route.hash}”. <a href={overviewHref}>See the overview</a> or{" "}
            <a href={queuesHref}>every queue</a>.
          </p>
        </>
      );
  }
}

function keyOf(route: Route): string {
  return route.page === "queue" || route.page === "messages" ? `${route.page}:${route.name}` : route.page;
}

// The skip link's "#main" would be read as a route; it moves focus instead.
function skipToMain(event: Event) {
  event.preventDefault();
  document.getElementById("main")?.focus();
}
