// Finding the PostgreSQL host that takes writes among those a broker lists:
// every host is asked at once, so a dead host listed first (its machine gone:
// connections to it are neither accepted nor refused) costs a reconnect
// nothing once another host answers.
import { createServer, type Server, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { connectTimeoutMs, connectToPrimary } from "../../src/store/postgres/primary-connection.js";
import { postgresForFile, skipWithoutPostgres } from "../support/postgres-server.js";

const postgres = postgresForFile();

/** A listener that takes connections and never answers: a host as PostgreSQL's clients see a hung machine. */
async function silentHost(): Promise<{ url: string; close(): Promise<void> }> {
  const sockets: Socket[] = [];
  const server: Server = createServer((socket) => sockets.push(socket));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `postgres://holdshelf@127.0.0.1:${port}/postgres`,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe.skipIf(skipWithoutPostgres)("connectToPrimary", () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  it("finds the primary at once when a host listed before it does not answer", async () => {
    const hung = await silentHost();
    cleanups.push(() => hung.close());
    const started = performance.now();
    const url = await connectToPrimary([hung.url, postgres().url()]);
    expect(url).toBe(postgres().url());
    // Asked one after the other, the hung host would hold the reconnect for its whole connect timeout.
    expect(performance.now() - started).toBeLessThan(connectTimeoutMs / 2);
  });

  it("chooses the host listed first of several that take writes, as every broker with the same list does", async () => {
    const [one, two] = await Promise.all([postgres().createDatabase(), postgres().createDatabase()]);
    for (let round = 0; round < 5; round++) {
      expect(await connectToPrimary([one, two])).toBe(one);
      expect(await connectToPrimary([two, one])).toBe(two);
    }
  });

  it("names every host's answer when none takes writes, a hung one after its connect timeout", async () => {
    const hung = await silentHost();
    cleanups.push(() => hung.close());
    const refused = await connectToPrimary([hung.url, "postgres://holdshelf@127.0.0.1:1/postgres"]).catch(
      (error: unknown) => error,
    );
    expect((refused as Error).message).toMatch(
      /^no PostgreSQL host takes writes \(127\.0\.0\.1:\d+: .*timeout.*; 127\.0\.0\.1:1: ECONNREFUSED/,
    );
  });
});
