import { createQueueServiceRpc, type QueueServiceRpc } from "../../src/client/rpc-client.js";
import { startHoldshelfServer, type HoldshelfServer } from "../../src/server/holdshelf-server.js";
import type { HoldshelfLimits } from "../../src/server/server-limits.js";
import type { Clock } from "../../src/time/clock.js";
import { makeTempDir } from "../support/temp-dir.js";

/** A client of the harness's broker on a connection of its own. */
export type LimitsClient = QueueServiceRpc & { close(): void };

/** A real broker on a free loopback port with small limits, and clients that each get their own connection. */
export interface LimitsHarness {
  readonly server: HoldshelfServer;
  /** A client on a new connection (grpc-js would otherwise share one subchannel between clients). */
  connect(): LimitsClient;
  stop(): Promise<void>;
}

/** Starts a broker with these limits (fsync durability, the system clock unless a test gives its own). */
export async function startLimitsHarness(limits: Partial<HoldshelfLimits>, clock?: Clock): Promise<LimitsHarness> {
  const dir = await makeTempDir("holdshelf-limits-");
  const server = await startHoldshelfServer({
    dataDir: dir.path,
    listen: "127.0.0.1:0",
    limits,
    ...(clock === undefined ? {} : { clock }),
  });
  const clients: LimitsClient[] = [];
  return {
    server,
    connect() {
      const client = createQueueServiceRpc(server.address, {
        channelOptions: { "grpc.use_local_subchannel_pool": 1, "grpc.max_send_message_length": -1 },
      });
      clients.push(client);
      return client;
    },
    async stop() {
      for (const client of clients) client.close();
      await server.shutdown();
      await dir.remove();
    },
  };
}
