import type { Deadline } from "@grpc/grpc-js";

/** Whether a call's deadline (a Date, or epoch milliseconds; Infinity for none) has passed. */
export function deadlinePassed(deadline: Deadline): boolean {
  const at = deadline instanceof Date ? deadline.getTime() : deadline;
  return at <= Date.now();
}
