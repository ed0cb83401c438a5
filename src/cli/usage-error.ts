/** A mistake in how the command was called: printed with a hint, exit code 2. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}
