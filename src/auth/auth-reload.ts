import type { Logger } from "../logging/logger.js";
import type { AuthGate } from "./auth-gate.js";

/** A file of credentials the broker reloads on SIGHUP: the auth file's gate, or the SQS keyring. */
interface ReloadableCredentials {
  readonly path: string;
  /** Reads the file again and returns how many entries it holds; throws, keeping the old ones, if it is bad. */
  reload(): Promise<number>;
}

/**
 * Re-reads the auth file (on SIGHUP) and logs what happened: the token count
 * when the new file took effect, or the problem when it did not, in which
 * case the tokens in use stay. Calls already admitted are not affected.
 */
export async function reloadAuthFile(gate: AuthGate | undefined, logger: Logger): Promise<boolean> {
  if (gate === undefined) {
    logger.warn("auth reload asked but no auth file is in use: nothing to reload");
    return false;
  }
  return reloadLogged(gate, { file: "auth file", entries: "tokens" }, logger);
}

/** Re-reads the SQS endpoint's access keys' file (on SIGHUP, with the auth file), logging as reloadAuthFile does. */
export function reloadSqsCredentials(keyring: ReloadableCredentials, logger: Logger): Promise<boolean> {
  return reloadLogged(keyring, { file: "SQS credentials file", entries: "keys" }, logger);
}

async function reloadLogged(
  credentials: ReloadableCredentials,
  names: { file: string; entries: string },
  logger: Logger,
): Promise<boolean> {
  try {
    const count = await credentials.reload();
    logger.info(`${names.file} reloaded`, { path: credentials.path, [names.entries]: count });
    return true;
  } catch (error) {
    // The files' errors name the entry and field, never a hash, token or secret.
    logger.error(`${names.file} reload failed; keeping the ${names.entries} in use`, {
      path: credentials.path,
      reason: error instanceof Error ? error.message : String(error),
    });
    return false;
  }
}
