import pg from "pg";

// A host that does not answer in this long is passed over for the next one.
const connectTimeoutMs = 3000;

/**
 * The URL, of `urls`, of the PostgreSQL host that takes writes: the one not
 * in recovery. After a failover the promoted standby is the one, so brokers
 * list every host and ask again on each reconnect. Throws naming each host's
 * answer (never a password) when none takes writes.
 */
export async function connectToPrimary(urls: readonly string[]): Promise<string> {
  const answers: string[] = [];
  for (const url of urls) {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: connectTimeoutMs });
    client.on("error", () => undefined);
    try {
      await client.connect();
      const { rows } = await client.query<{ standby: boolean }>("SELECT pg_is_in_recovery() AS standby");
      if (!rows[0]!.standby) return url;
      answers.push(`${hostOf(url)}: a standby`);
    } catch (error) {
      answers.push(`${hostOf(url)}: ${describeConnectError(error)}`);
    } finally {
      await client.end().catch(() => undefined);
    }
  }
  throw new Error(`no PostgreSQL host takes writes (${answers.join("; ")})`);
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
