import {
  Client,
  connectivityState,
  credentials,
  InterceptingCall,
  type ChannelCredentials,
  type Interceptor,
} from "@grpc/grpc-js";
import { HoldshelfError } from "../../errors/holdshelf-error.js";
import { receiveWindowBytes } from "../../net/http2-receive-window.js";
import { peerProofKey } from "../../protocol/routing-metadata.js";

/** How a broker's channels to the other brokers are made. */
export interface PeerClientsOptions {
  /** The broker's own --max-request-bytes: no request it passes on is larger. */
  readonly maxRequestBytes: number;
  /** TLS to the other brokers; plaintext if unset. */
  readonly credentials?: ChannelCredentials | undefined;
  /** Sent as holdshelf-peer-proof on every call, so the other brokers read its internal metadata (src/security/peer-proof.ts). */
  readonly proof?: string | undefined;
}

// The largest answer a broker sends is a Receive's: up to 4 MiB of messages
// and their framing, the same bound the client allows (rpc-client.ts).
const maxAnswerBytes = 8 * 1024 * 1024;
// A broker that went away and came back (a restart on the same address) is
// reached again within this, not after grpc-js's default of up to 2 minutes
// of backoff: its calls fail QUEUE_MOVING meanwhile.
const maxReconnectBackoffMs = 2_000;
// Pings find an owner that answers nothing: frozen (SIGSTOP, a paused VM, a
// stalled event loop) or gone without a reset. While calls are open, one is
// sent each second, and one unanswered for two seconds ends the connection:
// its calls, long polls and forwarded streams fail QUEUE_MOVING, which
// clients retry, within 3 s (docs/cluster.md), under the 4 s shard lease, so
// a client never waits out its deadline on a frozen owner. A healthy broker
// answers a ping between two event-loop turns; grpc-js servers set no limit
// on how often a client pings.
const keepaliveTimeMs = 1_000;
const keepaliveTimeoutMs = 2_000;
// A connection counts as made only once the other broker's HTTP/2 settings
// arrive, which a frozen one never sends (its kernel still accepts the TCP
// connection), and grpc-js queues calls meanwhile with no bound of its own.
// A channel still connecting after this is closed, failing its queued calls
// QUEUE_MOVING; the next call makes a new one.
const connectBoundMs = 2_000;

/**
 * One grpc-js client per other broker's address, made on first use and kept
 * until close(): forwarded calls share a connection per owner, as HTTP/2
 * means them to. Requests and answers pass through as bytes.
 */
export class PeerClients {
  private readonly clients = new Map<string, Client>();
  private closed = false;
  private readonly stop = new AbortController();
  /** Aborts when this broker starts stopping: forwarded unary calls end then with SHUTTING_DOWN (forwardUnary). */
  readonly stopping: AbortSignal = this.stop.signal;

  constructor(private readonly options: PeerClientsOptions) {}

  /** The client of the broker at `address` (host:port). Throws SHUTTING_DOWN once closed. */
  client(address: string): Client {
    let client = this.clients.get(address);
    if (client !== undefined) return client;
    if (this.closed) throw new HoldshelfError("SHUTTING_DOWN", "the broker is shutting down");
    client = new Client(address, this.options.credentials ?? credentials.createInsecure(), {
      "grpc.max_send_message_length": this.options.maxRequestBytes,
      "grpc.max_receive_message_length": maxAnswerBytes,
      "grpc-node.flow_control_window": receiveWindowBytes,
      "grpc.max_reconnect_backoff_ms": maxReconnectBackoffMs,
      "grpc.keepalive_time_ms": keepaliveTimeMs,
      "grpc.keepalive_timeout_ms": keepaliveTimeoutMs,
      // Its own connections, so that closing a channel stuck connecting drops them, not a shared one that stays stuck.
      "grpc.use_local_subchannel_pool": 1,
      ...(this.options.proof === undefined ? {} : { interceptors: [proving(this.options.proof)] }),
    });
    this.clients.set(address, client);
    this.bindConnecting(address, client);
    return client;
  }

  /** Closes `client` whenever it stays connecting longer than connectBoundMs (see there). */
  private bindConnecting(address: string, client: Client): void {
    const channel = client.getChannel();
    const current = (): boolean => this.clients.get(address) === client;
    const watch = (): void => {
      if (!current()) return;
      const state = channel.getConnectivityState(false);
      if (state === connectivityState.SHUTDOWN) return;
      if (state !== connectivityState.CONNECTING) return channel.watchConnectivityState(state, Infinity, watch);
      channel.watchConnectivityState(state, Date.now() + connectBoundMs, (timedOut) => {
        if (timedOut === undefined || !current()) return watch();
        this.clients.delete(address);
        client.close();
      });
    };
    watch();
  }

  /** Ends every forwarded unary call open now or made later with SHUTTING_DOWN: at the start of shutdown. */
  stopCalls(): void {
    this.stop.abort();
  }

  /** Closes every channel: at shutdown, once the server has stopped taking calls. */
  close(): void {
    this.closed = true;
    for (const client of this.clients.values()) client.close();
    this.clients.clear();
  }
}

/** Adds the peer proof to every call's metadata, whichever forwarding path made it. */
function proving(proof: string): Interceptor {
  return (options, nextCall) =>
    new InterceptingCall(nextCall(options), {
      start(metadata, listener, next) {
        metadata.set(peerProofKey, proof);
        next(metadata, listener);
      },
    });
}
