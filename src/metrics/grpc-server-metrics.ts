import {
  ServerInterceptingCall,
  status as Status,
  type ServerInterceptor,
  type ServiceDefinition,
} from "@grpc/grpc-js";
import { Counter, Histogram, type Registry } from "prom-client";
import { deadlinePassed } from "../protocol/deadline-passed.js";

// The label values Go's grpc-prometheus made standard, so that its
// dashboards and alerts work unchanged: codes as Go's codes.Code.String()
// spells them, indexed by code number.
const goCodeNames = [
  "OK",
  "Canceled",
  "Unknown",
  "InvalidArgument",
  "DeadlineExceeded",
  "NotFound",
  "AlreadyExists",
  "PermissionDenied",
  "ResourceExhausted",
  "FailedPrecondition",
  "Aborted",
  "OutOfRange",
  "Unimplemented",
  "Internal",
  "Unavailable",
  "DataLoss",
  "Unauthenticated",
] as const;

// grpc-prometheus's default buckets (Prometheus's DefBuckets).
const handlingBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

type GrpcLabel = "grpc_type" | "grpc_service" | "grpc_method";

/** A method as the metrics label it. */
interface MethodLabels {
  readonly grpc_type: "unary" | "client_stream" | "server_stream" | "bidi_stream";
  readonly grpc_service: string;
  readonly grpc_method: string;
}

/** Server-side gRPC metrics under grpc-prometheus's names, recorded by an interceptor. */
export interface GrpcServerMetrics {
  /** Records every call of the server it is given to. */
  readonly interceptor: ServerInterceptor;
  /** Exports zero series for every method and code of these services, as grpc-prometheus does, so rates start at 0. */
  preRegister(services: readonly ServiceDefinition[]): void;
}

/** Registers the grpc_server_* metrics. */
export function createGrpcServerMetrics(registry: Registry): GrpcServerMetrics {
  const registers = [registry];
  const labelNames: GrpcLabel[] = ["grpc_type", "grpc_service", "grpc_method"];
  const started = new Counter({
    name: "grpc_server_started_total",
    help: "Total number of RPCs started on the server.",
    labelNames,
    registers,
  });
  const handled = new Counter({
    name: "grpc_server_handled_total",
    help: "Total number of RPCs completed on the server, regardless of success or failure.",
    labelNames: [...labelNames, "grpc_code"],
    registers,
  });
  const received = new Counter({
    name: "grpc_server_msg_received_total",
    help: "Total number of RPC stream messages received on the server.",
    labelNames,
    registers,
  });
  const sent = new Counter({
    name: "grpc_server_msg_sent_total",
    help: "Total number of gRPC stream messages sent by the server.",
    labelNames,
    registers,
  });
  const handling = new Histogram({
    name: "grpc_server_handling_seconds",
    help: "Histogram of response latency (seconds) of gRPC that had been application-level handled by the server.",
    labelNames,
    buckets: handlingBuckets,
    registers,
  });

  // Label objects by method path, made once: the interceptor runs on every call.
  const labelsByPath = new Map<string, MethodLabels>();
  const labelsOf = (path: string, requestStream: boolean, responseStream: boolean): MethodLabels => {
    let labels = labelsByPath.get(path);
    if (labels === undefined) {
      labels = methodLabels(path, requestStream, responseStream);
      labelsByPath.set(path, labels);
    }
    return labels;
  };

  const interceptor: ServerInterceptor = (method, call) => {
    const labels = labelsOf(method.path, method.requestStream, method.responseStream);
    const startedAt = performance.now();
    let done = false;
    const finish = (code: number): void => {
      if (done) return;
      done = true;
      handled.inc({ ...labels, grpc_code: goCodeNames[code] ?? "Unknown" });
      handling.observe(labels, (performance.now() - startedAt) / 1000);
    };
    started.inc(labels);
    return new ServerInterceptingCall(call, {
      start(next) {
        next({
          onReceiveMessage(message, nextMessage) {
            received.inc(labels);
            nextMessage(message);
          },
          // grpc-js ends a cancelled or timed-out call itself, without a status through here.
          onCancel() {
            finish(deadlinePassed(call.getDeadline()) ? Status.DEADLINE_EXCEEDED : Status.CANCELLED);
          },
        });
      },
      sendMessage(message, next) {
        sent.inc(labels);
        next(message);
      },
      sendStatus(status, next) {
        finish(status.code);
        next(status);
      },
    });
  };

  return {
    interceptor,
    preRegister(services) {
      for (const service of services) {
        for (const method of Object.values(service)) {
          const labels = labelsOf(method.path, method.requestStream, method.responseStream);
          started.inc(labels, 0);
          received.inc(labels, 0);
          sent.inc(labels, 0);
          for (const code of goCodeNames) handled.inc({ ...labels, grpc_code: code }, 0);
        }
      }
    },
  };
}

function methodLabels(path: string, requestStream: boolean, responseStream: boolean): MethodLabels {
  // A path is "/package.Service/Method".
  const slash = path.lastIndexOf("/");
  return {
    grpc_type: requestStream
      ? responseStream
        ? "bidi_stream"
        : "client_stream"
      : responseStream
        ? "server_stream"
        : "unary",
    grpc_service: path.slice(1, slash),
    grpc_method: path.slice(slash + 1),
  };
}
