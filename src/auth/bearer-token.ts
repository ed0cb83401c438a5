import { createHash, randomBytes } from "node:crypto";

/** The prefix of tokens `holdshelf token` makes: recognizable in a config file or by a secret scanner. */
export const tokenPrefix = "hs_";

// 256 bits: far beyond guessing, so a fast hash is as good as a slow one (see tokenDigest).
const tokenBytes = 32;

/** A new random bearer token. */
export function generateToken(): string {
  return tokenPrefix + randomBytes(tokenBytes).toString("base64url");
}

/**
 * The SHA-256 digest an auth file stores for a token. Tokens are 256 random
 * bits, not passwords: nobody can search that space, so a deliberately slow
 * password hash (scrypt, argon2) would protect nothing more, and would cost
 * every RPC its work factor — a denial of service for the price of a call.
 */
export function tokenDigest(token: string): Buffer {
  return createHash("sha256").update(token, "utf8").digest();
}
