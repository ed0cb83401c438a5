import type { Principal } from "../auth/permissions.js";
import { HoldshelfError } from "../errors/holdshelf-error.js";
import type { AdminServiceHandlers } from "./admin-service-handlers.js";
import type { CallContext } from "./call-context.js";

/**
 * Wraps AdminService's handlers so that each call needs admin on every
 * queue: a backup holds every queue's messages and the key that signs
 * receipt handles, and the brokers' and cluster's status speak of every
 * queue's broker, so a token scoped to some queues, even all of today's, is
 * refused with PERMISSION_DENIED before anything is read.
 */
export function authorizeAdminService(
  handlers: AdminServiceHandlers,
  identify: (context: CallContext) => Principal,
): AdminServiceHandlers {
  const check = (context: CallContext, what: string): void => {
    const principal = identify(context);
    if (!principal.mayOnEveryQueue("admin")) {
      throw new HoldshelfError(
        "PERMISSION_DENIED",
        `token "${principal.name}" has no admin permission on every queue (a grant of admin on "*"), which ${what} needs`,
      );
    }
  };
  return {
    backup(request, signal, context) {
      check(context, "a backup");
      return handlers.backup(request, signal, context);
    },
    async getBrokerStatus(request, signal, context) {
      check(context, "the brokers' status");
      return handlers.getBrokerStatus(request, signal, context);
    },
    async getClusterStatus(request, signal, context) {
      check(context, "the cluster's status");
      return handlers.getClusterStatus(request, signal, context);
    },
  };
}
