import { create, fromBinary, isMessage, type MessageInitShape, type MessageShape } from "@bufbuild/protobuf";
import { Metadata } from "@grpc/grpc-js";
import { QueueService } from "../../gen/holdshelf/v1/queue_service_pb.js";
import type { Principal } from "../auth/permissions.js";
import { AnswerTrailer, type CallContext } from "./call-context.js";
import { PreEncoded } from "./pre-encoded.js";
import { ReceivedDeliveries } from "./received-deliveries.js";
import type { UnaryHandlers } from "./unary-handlers.js";

/** QueueService's unary handlers: the same ones gRPC calls, routed to each queue's owner in cluster mode. */
export type QueueHandlers = UnaryHandlers<typeof QueueService>;

type Methods = typeof QueueService.method;
type UnaryName = keyof QueueHandlers;
type Input<K extends UnaryName> = MessageInitShape<Methods[K]["input"]>;
type Output<K extends UnaryName> = MessageShape<Methods[K]["output"]>;

/**
 * One HTTP request's calls into the broker, made in-process. The SQS
 * endpoint and the admin console are other wires onto the very handlers
 * gRPC uses, so all follow the same rules, permission checks and cluster
 * routing: they only translate.
 */
export class QueueCalls {
  constructor(
    private readonly handlers: QueueHandlers,
    /** Who signed the request (the SQS endpoint's signature check); undefined when the call carries a token in its metadata, or needs none. */
    private readonly caller: Principal | undefined,
    /** Aborted when the HTTP client goes away: a waiting ReceiveMessage then takes nothing. */
    readonly signal: AbortSignal,
    /** The calls' metadata: the console's carry the session's bearer token, checked by each queue's owner in cluster mode. */
    private readonly metadata: Metadata = new Metadata(),
  ) {}

  /** Calls a QueueService method with a request built from `init`, and returns its answer as a message (a local Receive's built from its deliveries, without a decode). */
  async call<K extends UnaryName>(method: K, init: Input<K>): Promise<Output<K>> {
    const { input, output } = QueueService.method[method];
    const request = create(input as never, init as never);
    const context: CallContext = {
      metadata: this.metadata,
      deadline: Infinity,
      trailer: new AnswerTrailer(),
      ...(this.caller === undefined ? {} : { caller: this.caller }),
    };
    const run = this.handlers[method] as (
      request: unknown,
      signal: AbortSignal,
      context: CallContext,
    ) => Promise<unknown>;
    const answer = await run(request, this.signal, context);
    // This broker's receive keeps its deliveries: built into the message, never encoded.
    if (answer instanceof ReceivedDeliveries) return answer.message() as Output<K>;
    // A call the queue's owner served answers in wire bytes.
    if (answer instanceof PreEncoded) return fromBinary(output, answer.bytes) as Output<K>;
    return (isMessage(answer, output) ? answer : create(output as never, answer as never)) as Output<K>;
  }
}
