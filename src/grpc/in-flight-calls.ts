import { ServerInterceptingCall, type ServerInterceptor } from "@grpc/grpc-js";

/**
 * Counts the gRPC calls running now, so that a stop knows when none is left:
 * from then on, a connection still open is idle, and the stop need not wait
 * for its client to act on the GOAWAY (src/server/grpc-stop.ts).
 */
export class InFlightCalls {
  private running = 0;
  private idleWaiters: (() => void)[] = [];

  /** The interceptor that counts: a call counts from its start until grpc-js reports its end. */
  readonly interceptor: ServerInterceptor = (_method, call) => {
    this.running++;
    let ended = false;
    // grpc-js reports the end of every call through onCancel (also after a
    // status is sent), once; sendStatus covers a handler that ends first.
    const end = (): void => {
      if (ended) return;
      ended = true;
      this.running--;
      if (this.running === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
    };
    return new ServerInterceptingCall(call, {
      start(next) {
        next({ onCancel: end });
      },
      sendStatus(status, next) {
        next(status);
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
}
