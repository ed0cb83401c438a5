/**
 * What a Delete did: deleted the message now; found it already deleted by the
 * same delivery (a repeat); or found the lease lost before the delete, the
 * message dead-lettered, received again by someone else, or gone some way
 * the broker no longer knows (see RecentDepartures).
 */
export type DeleteOutcome = "deleted" | "already-deleted" | "dead-lettered" | "received-again" | "no-longer-held";
