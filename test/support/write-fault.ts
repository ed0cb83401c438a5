/**
 * A fault switch shared by a test and the storage it breaks: while it holds
 * an error, writes fail with it, as they would on a failing disk.
 */
export class WriteFault {
  /** The error writes fail with now; undefined while they work. */
  error: Error | undefined = undefined;

  /** Makes writes fail with `fault`, or work again with undefined. */
  inject(fault: Error | undefined): void {
    this.error = fault;
  }
}
