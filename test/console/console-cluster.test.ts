import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HoldshelfServer } from "../../src/server/holdshelf-server.js";
import { queueOn } from "../support/cluster-brokers.js";
import { startPostgres, skipWithoutPostgres, type PostgresServer } from "../support/postgres-server.js";
import { makeTempDir } from "../support/temp-dir.js";
import { settledRoutes, startClusterMember } from "../support/test-cluster.js";
import { authFileText, makeToken } from "../security/auth-harness.js";
import { ConsoleBrowser } from "./console-harness.js";

// The console on a broker that owns no shards: every queue it shows and every
// action it takes is served by another broker, which checks the session's
// token again.
describe.skipIf(skipWithoutPostgres)("the console in cluster mode", () => {
  const ops = makeToken("ops", { queues: "*", allow: ["admin", "send", "receive"] });
  const sender = makeToken("sender", { queues: "jobs-*", allow: ["send"] });
  let postgres: PostgresServer;
  let dir: Awaited<ReturnType<typeof makeTempDir>>;
  let owners: HoldshelfServer[];
  let entry: HoldshelfServer;
  beforeAll(async () => {
    postgres = await startPostgres();
    dir = await makeTempDir();
    const authFile = join(dir.path, "auth.json");
    await writeFile(authFile, authFileText([ops, sender]));
    const url = await postgres.createDatabase();
    owners = [
      await startClusterMember(url, "owner-1", { authFile }),
      await startClusterMember(url, "owner-2", { authFile }),
    ];
    entry = await startClusterMember(url, "entry", { authFile, routeOnly: true, consoleListen: "127.0.0.1:0" });
    await settledRoutes(entry, owners);
  }, 60_000);
  afterAll(async () => {
    await entry?.shutdown();
    await Promise.all((owners ?? []).map((owner) => owner.shutdown()));
    await postgres?.stop();
    await dir?.remove();
  });

  it("lists, creates, sends to, browses and purges queues other brokers serve, as the signed-in token", async () => {
    const browser = new ConsoleBrowser(entry.consoleUrl!);
    await browser.signIn(ops.token);
    const members = ["owner-1", "owner-2"];
    const names = [queueOn("owner-1", members, "jobs"), queueOn("owner-2", members, "jobs")];
    for (const name of names) {
      expect((await browser.api("POST", "/api/queues", { name })).status).toBe(200);
      expect((await browser.api("POST", `/api/queues/${name}/messages`, { body: `for ${name}` })).status).toBe(200);
    }
    const list = await browser.api("GET", "/api/queues");
    expect(list.body.queues.map((q: { name: string; visible: number }) => [q.name, q.visible])).toEqual(
      names.sort().map((name) => [name, 1]),
    );
    for (const name of names) {
      const peeked = await browser.api("GET", `/api/queues/${name}/messages`);
      expect(
        peeked.body.messages.map((m: { bodyText: string; receiveCount: number }) => [m.bodyText, m.receiveCount]),
      ).toEqual([[`for ${name}`, 0]]);
      expect((await browser.api("GET", `/api/queues/${name}`)).body.queue.stats.visible).toBe(1);
    }
    // Every call above reached its owner with the session's token (owners refuse calls without one);
    // a send-only token is refused as it is over gRPC.
    const limited = new ConsoleBrowser(entry.consoleUrl!);
    await limited.signIn(sender.token);
    const refused = await limited.api("POST", `/api/queues/${names[0]}/purge`, {});
    expect(refused.body.error.reason).toBe("PERMISSION_DENIED");
    expect((await browser.api("POST", `/api/queues/${names[1]}/purge`, {})).body).toEqual({ purgedCount: 1 });
  });
});
