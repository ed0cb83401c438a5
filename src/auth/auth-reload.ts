import type { Logger } from "../logging/logger.js";
import type { AuthGate } from "./auth-gate.js";

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
  try {
    const tokens = await gate.reload();
    logger.info("auth file reloaded", { path: gate.path, tokens });
    return true;
  } catch (error) {
    // AuthFileError messages name the entry and field, never a hash or token.
    logger.error("auth file reload failed; keeping the tokens in use", {
      path: gate.path,
      reason: error instanceof Error ? error.message : String(error),
    });
    return false;
  }
}
