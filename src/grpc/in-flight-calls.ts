import { ServerInterceptingCall, type ServerInterceptor } from "@grpc/grpc-js";
import { HoldshelfError } from "../errors/holdshelf-error.js";
import { toErrorStatus } from "./error-status.js";

/**
 * Counts the gRPC calls running now, so that a stop knows when none is left:
 * from then on, a connection still open is idle, and the stop need not wait
 * for its client to act on the GOAWAY (src/grpc/grpc-stop.ts). It also
 * knows the streams whose client has sent no request yet, which a stop ends.
 */
export class InFlightCalls {
  private running = 0;
  private idleWaiters: (() => void)[] = [];
  private readonly unstarted = new Set<() => void>();

  /** The interceptor that counts: a call counts from its start until grpc-js reports its end. */
  readonly interceptor: ServerInterceptor = (method, call) => {
    this.running++;
    let ended = false;
    let endedByStop = false;
    // grpc-js reports the end of every call through onCancel (also after a
    // status is sent), once; sendStatus covers a handler that ends first.
    const end = (): void => {
      this.unstarted.delete(endForStop);
      if (ended) return;
      ended = true;
      this.running--;
      if (this.running === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
    };
    const endForStop = (): void => {
      endedByStop = true;
      call.sendStatus(
        toErrorStatus(new HoldshelfError("SHUTTING_DOWN", "the broker is shutting down"), () => undefined),
      );
      end();
    };
    if (method.requestStream) this.unstarted.add(endForStop);
    const unstarted = this.unstarted;
    return new ServerInterceptingCall(call, {
      start(next) {
        next({
          onReceiveMessage(message, nextMessage) {
            unstarted.delete(endForStop);
            nextMessage(message);
          },
          onCancel: end,
        });
      },
      sendStatus(status, next) {
        // A stream the stop ended has had its status; its handler's, later, has no call to go to.
        if (!endedByStop) next(status);
        end();
      },
    });
  };

  /** How many calls run now. */
  get count(): number {
    return this.running;
  }

  /** Resolves once no call runs (at once if none does). */
  idle(): Promise<void> {
    if (this.running === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Ends, with the retryable UNAVAILABLE / SHUTTING_DOWN, every stream whose client has sent no
   * request yet: it holds no lease, and would otherwise wait out the stop's grace. Streams under
   * way end by the broker's own close (Broker.close), which leaves their leases as they are.
   */
  endUnstartedStreams(): void {
    for (const endForStop of [...this.unstarted]) endForStop();
  }
}
