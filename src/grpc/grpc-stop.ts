import type { Server } from "@grpc/grpc-js";
import type { InFlightCalls } from "./in-flight-calls.js";
import type { Logger } from "../logging/logger.js";

// Once no call runs, the connections still open get this long to take their
// last answers and act on the GOAWAY before they are cut: an idle stop must
// not wait on a client that keeps its connection open (issue #37's 10 s stops).
const idleLingerMs = 200;

/**
 * Stops the gRPC server within `graceMs`: it takes no new calls or
 * connections, ends the streams that have sent no request yet with
 * SHUTTING_DOWN, sends every connection a GOAWAY (idle ones close at once),
 * lets the calls in flight finish, and cuts off what still runs at the
 * grace. Resolves once every connection is closed.
 */
export async function stopGrpcServer(
  server: Server,
  calls: InFlightCalls,
  graceMs: number,
  logger: Logger,
): Promise<void> {
  const timers: NodeJS.Timeout[] = [];
  const after = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      timers.push(setTimeout(resolve, ms));
    });
  calls.endUnstartedStreams();
  const closed = new Promise<"closed">((resolve) => server.tryShutdown(() => resolve("closed")));
  const idle = calls.idle().then(() => after(idleLingerMs));
  const graceOver = after(graceMs).then(() => "grace over" as const);
  const outcome = await Promise.race([closed, idle.then(() => "idle" as const), graceOver]);
  for (const timer of timers) clearTimeout(timer);
  if (outcome === "closed") return;
  if (outcome === "grace over")
    logger.warn("shutdown grace ran out: cutting off the calls still running", { calls: calls.count, graceMs });
  server.forceShutdown();
}
