import { create } from "@bufbuild/protobuf";
import {
  status,
  type sendUnaryData,
  type Server,
  type ServerUnaryCall,
  type ServerWritableStream,
  type StatusObject,
} from "@grpc/grpc-js";
import {
  Health,
  HealthCheckResponse_ServingStatus as ServingStatus,
  HealthCheckResponseSchema,
  type HealthCheckRequest,
  type HealthCheckResponse,
} from "../../gen/grpc/health/v1/health_pb.js";
import { QueueService } from "../../gen/holdshelf/v1/queue_service_pb.js";
import { createServerServiceDefinition, MalformedRequest } from "./service-definition.js";

/** The grpc-js definition of grpc.health.v1.Health. */
export const healthServiceDefinition = createServerServiceDefinition(Health);

// "" is the server as a whole: what Kubernetes and most load balancers ask about.
const reportedServices = ["", QueueService.typeName];

// The health protocol is gRPC's, not holdshelf's: its errors are plain
// statuses, without the holdshelf ErrorInfo that QueueService promises.
const malformedRequest: Partial<StatusObject> = {
  code: status.INVALID_ARGUMENT,
  details: "request: is not a valid protobuf message of this method's type",
};

/**
 * The serving status of the server and its services, as the gRPC health
 * service reports it. Everything starts SERVING: the server only takes calls
 * once the broker is loaded. `shutdown()` ends the Watch calls.
 */
export class HealthStatus {
  private readonly statuses = new Map<string, ServingStatus>(
    reportedServices.map((service) => [service, ServingStatus.SERVING]),
  );
  private readonly listeners = new Set<() => void>();
  private shutDown = false;

  /** The status of a service ("" for the whole server), or undefined for a service it does not know. */
  statusOf(service: string): ServingStatus | undefined {
    return this.statuses.get(service);
  }

  /** Whether the server as a whole reports SERVING: what /readyz answers too. */
  get isServing(): boolean {
    return this.statuses.get("") === ServingStatus.SERVING;
  }

  /** True once `shutdown()` was called: Watch calls end after their next update. */
  get isShutDown(): boolean {
    return this.shutDown;
  }

  /** Reports every service as serving, unless shut down (a shutdown is final). */
  setServing(): void {
    if (this.shutDown) return;
    this.setAll(ServingStatus.SERVING);
  }

  /** Reports every service as not serving, so that probes take the server out of rotation. */
  setNotServing(): void {
    this.setAll(ServingStatus.NOT_SERVING);
  }

  /**
   * Reports NOT_SERVING and ends every Watch call: a graceful server
   * shutdown waits for open calls, and a Watch would otherwise never end.
   */
  shutdown(): void {
    this.shutDown = true;
    this.setAll(ServingStatus.NOT_SERVING);
  }

  /** Calls `listener` after every status update until the returned function is called. */
  onUpdate(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private setAll(servingStatus: ServingStatus): void {
    for (const service of this.statuses.keys()) this.statuses.set(service, servingStatus);
    // Listeners unsubscribe while being called; iterate over a copy.
    for (const listener of [...this.listeners]) listener();
  }
}

type CheckCall = ServerUnaryCall<HealthCheckRequest | MalformedRequest, HealthCheckResponse>;
type WatchCall = ServerWritableStream<HealthCheckRequest | MalformedRequest, HealthCheckResponse>;

/** Serves grpc.health.v1.Health (Check and Watch) from a HealthStatus on a gRPC server. */
export function addHealthService(server: Pick<Server, "addService">, health: HealthStatus): void {
  server.addService(healthServiceDefinition, {
    check: (call: CheckCall, callback: sendUnaryData<HealthCheckResponse>) => {
      if (call.request instanceof MalformedRequest) return callback(malformedRequest);
      const current = health.statusOf(call.request.service);
      if (current === undefined) {
        return callback({ code: status.NOT_FOUND, details: `unknown service "${call.request.service}"` });
      }
      callback(null, create(HealthCheckResponseSchema, { status: current }));
    },
    watch: (call: WatchCall) => {
      if (call.request instanceof MalformedRequest) {
        call.emit("error", malformedRequest);
        return;
      }
      const { service } = call.request;
      let sent: ServingStatus | undefined;
      const update = (): void => {
        // An unknown service is watched all the same: the spec says it may become known later.
        const current = health.statusOf(service) ?? ServingStatus.SERVICE_UNKNOWN;
        // The spec promises a message per change, so repeated settings send nothing.
        if (current !== sent) {
          sent = current;
          call.write(create(HealthCheckResponseSchema, { status: current }));
        }
        if (health.isShutDown) {
          stop();
          call.end();
        }
      };
      const stop = health.onUpdate(update);
      call.on("cancelled", stop);
      update();
    },
  });
}
