import { BlockList, isIP } from "node:net";

/** The flag an operator passes to let a listener without authentication take connections from the network. */
export const allowOpenFlag = "--allow-unauthenticated-network";

/** What decides whether `holdshelf serve` may listen beyond loopback. */
export interface ListenPolicyInput {
  /** The gRPC address (--listen). */
  readonly listen: string;
  /** The metrics address (--metrics-listen), if that listener is on. */
  readonly metricsListen?: string | undefined;
  /** Whether gRPC callers must present a bearer token (--auth-file). */
  readonly authenticated: boolean;
  /** Whether gRPC callers must present a certificate from --tls-client-ca. */
  readonly grpcClientCertificates: boolean;
  /** Whether scrapers must present a certificate from --tls-client-ca (--metrics-tls with a client CA). */
  readonly metricsClientCertificates: boolean;
  /** The operator said the listeners are meant to be open (--allow-unauthenticated-network). */
  readonly allowUnauthenticatedNetwork: boolean;
}

/** A listener address the safe-by-default rule refuses; its message names the flag and the ways out. */
export class ListenPolicyError extends Error {
  override readonly name = "ListenPolicyError";
}

// Every loopback address: 127.0.0.0/8 and ::1 (BlockList also matches ::ffff:127.x.y.z against the IPv4 rule).
const loopback = new BlockList();
loopback.addSubnet("127.0.0.0", 8, "ipv4");
loopback.addAddress("::1", "ipv6");

/**
 * Whether a listen address only takes connections from this machine:
 * a loopback IP (127.0.0.0/8, ::1, written with or without brackets and port),
 * `localhost`, or a Unix socket (`unix:` or `unix-abstract:`, as grpc-js binds them).
 * Anything else — a wildcard, a LAN IP, another host name, an address that cannot be read — is not.
 */
export function isLoopbackAddress(address: string): boolean {
  if (address.startsWith("unix:") || address.startsWith("unix-abstract:")) return true;
  const host = hostOf(address);
  if (host === undefined) return false;
  if (host.toLowerCase() === "localhost") return true;
  const family = isIP(host);
  if (family === 0) return false;
  return loopback.check(host, family === 4 ? "ipv4" : "ipv6");
}

/**
 * Refuses, with a ListenPolicyError, a listener that would take unauthenticated
 * connections from beyond this machine unless the operator allowed it explicitly;
 * returns the addresses that are open only because of that permission (to warn of).
 * gRPC counts as authenticated with bearer tokens or client certificates; the
 * metrics listener has no tokens, so only client certificates count there.
 */
export function checkListenPolicy(input: ListenPolicyInput): string[] {
  const open: { address: string; refusal: string }[] = [];
  if (!input.authenticated && !input.grpcClientCertificates && !isLoopbackAddress(input.listen)) {
    open.push({
      address: input.listen,
      refusal:
        `--listen ${input.listen} is not a loopback address and callers are not authenticated: ` +
        `pass --auth-file (bearer tokens) or --tls-client-ca (client certificates), ` +
        `listen on 127.0.0.1, or pass ${allowOpenFlag} if anyone who can reach the port may use every queue`,
    });
  }
  const metrics = input.metricsListen;
  if (metrics !== undefined && !input.metricsClientCertificates && !isLoopbackAddress(metrics)) {
    open.push({
      address: metrics,
      refusal:
        `--metrics-listen ${metrics} is not a loopback address and the metrics listener has no authentication: ` +
        `pass --metrics-tls with --tls-client-ca (scrapers present client certificates), ` +
        `listen on 127.0.0.1, or pass ${allowOpenFlag} if anyone who can reach the port may read the metrics`,
    });
  }
  if (!input.allowUnauthenticatedNetwork && open.length > 0) throw new ListenPolicyError(open[0]!.refusal);
  return open.map(({ address }) => address);
}

/** The host of "host:port", "[v6]:port", "[v6]", a bare IPv6 address or a bare host; undefined if unreadable. */
function hostOf(address: string): string | undefined {
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(address);
  if (bracketed) return bracketed[1];
  // An unbracketed address with two or more colons can only be a bare IPv6 address.
  if (isIP(address) === 6) return address;
  const hostPort = /^([^:[\]]+)(?::\d+)?$/.exec(address);
  return hostPort?.[1];
}
