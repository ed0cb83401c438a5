import pg from "pg";

// A host that does not answer in this long is passed over (a dead machine never refuses a connection).
export const connectTimeoutMs = 3000;

// Once one host takes writes, how long the hosts listed before it may still answer: with two that take
// writes (a split brain, a standby promoted while the old primary lives) the one listed first is chosen, as
// every broker with the same list chooses, unless it is too slow to tell.
const listOrderGraceMs = 250;

/**
 * The URL, of `urls`, of the PostgreSQL host that takes writes: the one not
 * in recovery. After a failover the promoted standby is the one, so brokers
 * list every host and ask again on each reconnect. Every host is asked at
 * once: a dead host listed first (its machine gone, so nothing refuses the
 * connection) costs at most listOrderGraceMs once another answers that it
 * takes writes. Of several that take writes, the first listed that answered
 * by then wins. Throws naming each host's answer (never a password) when
 * none takes writes.
 */
export async function connectToPrimary(urls: readonly string[]): Promise<string> {
  const answers = urls.map((url) => askHost(url));
  const answered: (string | undefined)[] = urls.map(() => undefined);
  answers.forEach((answer, index) => void answer.then((said) => (answered[index] = said)));
  // The first host to say it takes writes ends the wait; every probe closes its own connection when it ends.
  const first = await Promise.any(
    answers.map(async (answer, index) => {
      if ((await answer) !== "takes writes") throw new Error("not the primary");
      return index;
    }),
  ).catch(() => undefined);
  if (first !== undefined) {
    const earlier = answers.slice(0, first);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(earlier),
      new Promise((resolve) => (timer = setTimeout(resolve, listOrderGraceMs))),
    ]);
    clearTimeout(timer);
    return urls[answered.indexOf("takes writes")]!;
  }
  const described = await Promise.all(answers);
  throw new Error(
    `no PostgreSQL host takes writes (${urls.map((url, i) => `${hostOf(url)}: ${described[i]}`).join("; ")})`,
  );
}

/** "takes writes", "a standby", or why the host could not be asked. */
async function askHost(url: string): Promise<string> {
  // The query bounded too: a host that takes the connection and then hangs must not hold a reconnect.
  const client = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: connectTimeoutMs,
    query_timeout: connectTimeoutMs,
  });
  client.on("error", () => undefined);
  try {
    await client.connect();
    const { rows } = await client.query<{ standby: boolean }>("SELECT pg_is_in_recovery() AS standby");
    return rows[0]!.standby ? "a standby" : "takes writes";
  } catch (error) {
    return describeConnectError(error);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** host:port of a connection URL, without user or password. */
export function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return "(unparsable URL)";
  }
}

/** A connection or query failure in a few words: its code (errno or SQLSTATE) and message, never a URL. */
export function describeConnectError(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  return typeof code === "string" ? `${code} ${message}` : message;
}
