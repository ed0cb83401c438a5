/** A command that could not do its work for a reason the user can act on: its message is printed as it is, exit code 1. */
export class CommandError extends Error {
  override readonly name = "CommandError";
}
