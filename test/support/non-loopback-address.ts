import { networkInterfaces } from "node:os";

/**
 * An IPv4 address of this machine that is not loopback, for tests of what a
 * client does beyond loopback (TLS by default): its first LAN address, or
 * else the wildcard 0.0.0.0. Linux delivers a connection to 0.0.0.0 to this
 * machine, and no client counts it as loopback, so the tests run the same on
 * a machine with no network interface but lo.
 */
export function nonLoopbackAddress(): string {
  for (const addresses of Object.values(networkInterfaces())) {
    for (const address of addresses ?? []) {
      if (address.family === "IPv4" && !address.internal) return address.address;
    }
  }
  return "0.0.0.0";
}
