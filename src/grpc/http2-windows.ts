import type { Http2SecureServer, Http2Server, ServerHttp2Session } from "node:http2";
import type { Server } from "@grpc/grpc-js";
import { receiveWindowBytes } from "../net/http2-receive-window.js";

type Http2Listener = Http2Server | Http2SecureServer;

/**
 * Raises the receive windows (to receiveWindowBytes) of every HTTP/2
 * listener a grpc-js server has bound so far (call it after each bind).
 * grpc-js has no server option for them (its `grpc-node.flow_control_window`
 * is a channel's), so this reaches its listeners through the private
 * `http2Servers` map, and fails loudly if that map is gone:
 * test/grpc/server-http2-windows.test.ts checks the settings a real client
 * receives.
 */
export function raiseReceiveWindows(server: Server): void {
  const listeners = (server as unknown as { http2Servers?: unknown }).http2Servers;
  if (!(listeners instanceof Map)) {
    throw new Error("grpc-js no longer keeps its HTTP/2 listeners in `http2Servers`: see src/grpc/http2-windows.ts");
  }
  for (const listener of listeners.keys() as IterableIterator<Http2Listener>) {
    if (raised.has(listener)) continue;
    raised.add(listener);
    // The stream window is a setting, sent in each new session's SETTINGS frame.
    listener.updateSettings({ initialWindowSize: receiveWindowBytes });
    // The connection window is not: a WINDOW_UPDATE on stream 0 raises it once the session starts.
    listener.on("session", (session: ServerHttp2Session) => session.setLocalWindowSize(receiveWindowBytes));
  }
}

/** Listeners already raised, so that a second bind does not add a second listener to the first. */
const raised = new WeakSet<Http2Listener>();
