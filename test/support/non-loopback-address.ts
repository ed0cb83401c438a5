import { networkInterfaces } from "node:os";

/**
 * An IPv4 address of this machine that is not loopback, for tests of what a
 * client does beyond loopback (TLS by default); undefined if it has none.
 */
export function nonLoopbackAddress(): string | undefined {
  for (const addresses of Object.values(networkInterfaces())) {
    for (const address of addresses ?? []) {
      if (address.family === "IPv4" && !address.internal) return address.address;
    }
  }
  return undefined;
}
