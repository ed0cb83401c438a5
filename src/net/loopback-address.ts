import { BlockList, isIP } from "node:net";

// Every loopback address: 127.0.0.0/8 and ::1 (BlockList also matches ::ffff:127.x.y.z against the IPv4 rule).
const loopback = new BlockList();
loopback.addSubnet("127.0.0.0", 8, "ipv4");
loopback.addAddress("::1", "ipv6");

/**
 * Whether an address only reaches this machine: a loopback IP (127.0.0.0/8,
 * ::1, written with or without brackets and port), `localhost`, or a Unix
 * socket (`unix:` or `unix-abstract:`, as grpc-js names them). Anything else
 * — a wildcard, a LAN IP, another host name, an address that cannot be read —
 * is not. The server asks it of a listen address, the client of a target.
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

/** The host of "host:port", "[v6]:port", "[v6]", a bare IPv6 address or a bare host; undefined if unreadable. */
function hostOf(address: string): string | undefined {
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(address);
  if (bracketed) return bracketed[1];
  // An unbracketed address with two or more colons can only be a bare IPv6 address.
  if (isIP(address) === 6) return address;
  const hostPort = /^([^:[\]]+)(?::\d+)?$/.exec(address);
  return hostPort?.[1];
}
