import { setTimeout as sleep } from "node:timers/promises";

/** How often the console's pages refresh (console/src/queues-page.tsx and queue-page.tsx). */
const refreshMs = 5_000;

/** What a poller did, counted when it stopped. */
export interface ConsolePolls {
  /** GET /api/queues and GET /api/queues/<queue> answered 200. */
  readonly answered: number;
  /** Calls that failed or answered anything else (each is a measured window's fault to report, not to hide). */
  readonly failed: number;
}

/** An operator's console left open while a window runs. */
export interface ConsolePoller {
  /** The calls so far. */
  polls(): ConsolePolls;
  /** Ends the polling, once the calls under way have answered. */
  stop(): Promise<ConsolePolls>;
}

/**
 * Opens the console as its page does (GET /api/session, keeping the session
 * cookie) and, until stopped, polls it as two open tabs would: the queue
 * list and `queue`'s page, each loaded at once and again 5 s after each
 * answer, never two at once (console/src/use-poll.ts). A bench client of
 * its own rather than test/console/console-harness.ts's ConsoleBrowser:
 * that file brings the test harness (a server, auth files, temp dirs) into
 * the bench's build.
 */
export async function startConsolePoller(consoleUrl: string, queue: string): Promise<ConsolePoller> {
  let cookie: string | undefined;
  let answered = 0;
  let failed = 0;
  const get = async (path: string): Promise<Response> => {
    const response = await fetch(new URL(path, consoleUrl), {
      // Sec-Fetch-Site as a browser sends it on the page's own calls.
      headers: {
        accept: "application/json",
        "sec-fetch-site": "same-origin",
        ...(cookie === undefined ? {} : { cookie }),
      },
    });
    const setCookie = response.headers.get("set-cookie");
    if (setCookie !== null) cookie = setCookie.split(";")[0];
    return response;
  };
  const session = await get("api/session");
  await session.arrayBuffer();
  if (!session.ok || cookie === undefined)
    throw new Error(`GET /api/session answered ${session.status} without a session cookie`);

  const stopping = new AbortController();
  const poll = async (path: string): Promise<void> => {
    while (!stopping.signal.aborted) {
      try {
        const response = await get(path);
        // The page parses every answer, so the body is read whole here too.
        await response.json();
        if (response.ok) answered += 1;
        else failed += 1;
      } catch {
        failed += 1;
      }
      await sleep(refreshMs, undefined, { signal: stopping.signal }).catch(() => undefined);
    }
  };
  const polling = Promise.all([poll("api/queues"), poll(`api/queues/${encodeURIComponent(queue)}`)]);
  return {
    polls: () => ({ answered, failed }),
    async stop() {
      stopping.abort();
      await polling;
      return { answered, failed };
    },
  };
}
