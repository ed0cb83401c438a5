import type { FieldViolation } from "../protocol/error-reasons.js";
import { HoldshelfError } from "./holdshelf-error.js";

/**
 * Every bad field of one request, gathered so that one answer names them all
 * (issue #36: a form refused one field at a time is fixed one field at a
 * time). The error it throws keeps the first violation's wording as its
 * message's start, so a request with one bad field reads as it always did.
 */
export class ViolationList {
  private readonly found: FieldViolation[] = [];

  /** Records a bad field. */
  add(field: string, description: string): void {
    this.found.push({ field, description });
  }

  /**
   * Runs one check, recording the fields of the INVALID_ARGUMENT it throws
   * instead of passing it on; its result, or undefined when it refused.
   * Any other error (a bug, another reason) is thrown at once.
   */
  collect<T>(check: () => T): T | undefined {
    try {
      return check();
    } catch (error) {
      if (!(error instanceof HoldshelfError) || error.reason !== "INVALID_ARGUMENT" || error.violations.length === 0)
        throw error;
      this.found.push(...error.violations);
      return undefined;
    }
  }

  /** Throws INVALID_ARGUMENT naming every recorded field, if there is one. */
  throwIfAny(): void {
    if (this.found.length === 0) return;
    const message = this.found.map(({ field, description }) => `${field}: ${description}`).join("; ");
    throw new HoldshelfError("INVALID_ARGUMENT", message, { violations: [...this.found] });
  }
}
