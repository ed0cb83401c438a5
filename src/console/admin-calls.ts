import { create } from "@bufbuild/protobuf";
import { Metadata } from "@grpc/grpc-js";
import {
  GetBrokerStatusRequestSchema,
  GetClusterStatusRequestSchema,
  type GetBrokerStatusResponse,
  type GetClusterStatusResponse,
} from "../../gen/holdshelf/v1/admin_service_pb.js";
import type { AdminServiceHandlers } from "../service/admin-service-handlers.js";
import { AnswerTrailer, type CallContext } from "../service/call-context.js";

/**
 * One console request's calls of AdminService's status RPCs, made in-process
 * as the session's token: the same handlers and checks as over gRPC (admin
 * on every queue), and in cluster mode the same gathering from the members.
 */
export class AdminCalls {
  constructor(
    private readonly handlers: AdminServiceHandlers,
    private readonly signal: AbortSignal,
    private readonly metadata: Metadata = new Metadata(),
  ) {}

  /** GetBrokerStatus: every live member's status in cluster mode. */
  brokerStatus(): Promise<GetBrokerStatusResponse> {
    return this.handlers.getBrokerStatus(create(GetBrokerStatusRequestSchema), this.signal, this.context());
  }

  /** GetClusterStatus: members, shard owners and every live member's shard events. */
  clusterStatus(): Promise<GetClusterStatusResponse> {
    return this.handlers.getClusterStatus(create(GetClusterStatusRequestSchema), this.signal, this.context());
  }

  private context(): CallContext {
    return { metadata: this.metadata, deadline: Infinity, trailer: new AnswerTrailer() };
  }
}
