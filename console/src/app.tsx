// The console's frame: the session check, the header and nav, and the page
// the location hash names.
import { useEffect, useState } from "preact/hooks";
import { onSessionRequired, session as fetchSession, signOut } from "./api.js";
import type { Session } from "./api-types.js";
import { messageOf } from "./form-errors.js";
import { MessagesPage } from "./messages-page.js";
import { ErrorMessage, NoticeProvider } from "./notices.js";
import { PageHeading } from "./page-heading.js";
import { QueuePage } from "./queue-page.js";
import { QueuesPage } from "./queues-page.js";
import { useRoute, type Route } from "./route.js";
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
        <a class="brand" href="#/">
          holdshelf <span class="brand-sub">console</span>
        </a>
        <nav aria-label="Main">
          <ul>
            <li>
              <a href="#/">Queues</a>
            </li>
          </ul>
        </nav>
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
          <Pages />
        ) : (
          <SignInPage onSignedIn={(answer) => setSession({ ...signedOut, ...answer })} />
        )}
      </main>
    </NoticeProvider>
  );
}

/** The page of the current route; keyed by it, so each page starts fresh. */
function Pages() {
  const route = useRoute();
  return <PageOf key={keyOf(route)} route={route} />;
}

function PageOf({ route }: { route: Route }) {
  switch (route.page) {
    case "queues":
      return <QueuesPage />;
    case "queue":
      return <QueuePage name={route.name} tab={route.tab} />;
    case "messages":
      return <MessagesPage name={route.name} />;
    case "not-found":
      return (
        <>
          <PageHeading title="Not found">Not found</PageHeading>
          <p>
            The console has no page at “{route.hash}”. <a href="#/">See every queue.</a>
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
