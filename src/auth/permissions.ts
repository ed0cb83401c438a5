import type { QueuePattern } from "./queue-pattern.js";

/** What a token may do on a queue. admin does not imply send or receive: grant each that is meant. */
export const actions = ["admin", "send", "receive"] as const;
/** One permission: admin (manage queues), send, or receive (and settle what was received). */
export type Action = (typeof actions)[number];

/** Actions granted on the queues a pattern matches. */
export interface Grant {
  readonly queues: QueuePattern;
  readonly allow: ReadonlySet<Action>;
}

/** A caller who presented a known token: what it is called and what it may do. */
export class Principal {
  constructor(
    /** The entry's name in the auth file: a label, not a secret. */
    readonly name: string,
    private readonly grants: readonly Grant[],
  ) {}

  /** Whether any grant allows `action` on `queue`. */
  may(action: Action, queue: string): boolean {
    return this.grants.some((grant) => grant.allow.has(action) && grant.queues.matches(queue));
  }

  /** Whether one grant allows `action` on every queue, present and future (a pattern of "*"). */
  mayOnEveryQueue(action: Action): boolean {
    return this.grants.some((grant) => grant.allow.has(action) && grant.queues.matchesEveryName);
  }

  /** Whether the caller holds any permission on `queue`: only then may it learn the queue exists. */
  canSee(queue: string): boolean {
    return this.grants.some((grant) => grant.queues.matches(queue));
  }
}
