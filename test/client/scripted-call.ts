/**
 * A stream the test plays the server of: it sees each request, and answers
 * with what the test pushes, ends or fails, as a real call would. The
 * Heartbeat and Subscribe scripts are this with their own messages.
 */
export class ScriptedCall<Request, Response> implements AsyncIterable<Response> {
  readonly sent: Request[] = [];
  halfClosed = false;
  cancelled = false;
  private readonly responses: Response[] = [];
  private failure: unknown;
  private done = false;
  private wake: (() => void) | undefined;

  send(request: Request): void {
    this.sent.push(request);
  }

  end(): void {
    this.halfClosed = true;
  }

  cancel(): void {
    this.cancelled = true;
  }

  /** Ends the stream as the server would after a half-close. */
  finish(): void {
    this.done = true;
    this.poke();
  }

  /** Breaks the stream with an error. */
  fail(error: unknown): void {
    this.failure = error;
    this.poke();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Response, void, undefined> {
    for (;;) {
      const next = this.responses.shift();
      if (next !== undefined) yield next;
      else if (this.failure !== undefined) throw this.failure;
      else if (this.done) return;
      else await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  /** Hands the reader one response. */
  protected respond(response: Response): void {
    this.responses.push(response);
    this.poke();
  }

  private poke(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}
