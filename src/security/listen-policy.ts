import { isLoopbackAddress } from "../net/loopback-address.js";

/** The flag an operator passes to let a listener without authentication take connections from the network. */
export const allowOpenFlag = "--allow-unauthenticated-network";

/** What decides whether `holdshelf serve` may listen beyond loopback. */
export interface ListenPolicyInput {
  /** The gRPC address (--listen). */
  readonly listen: string;
  /** The metrics address (--metrics-listen), if that listener is on. */
  readonly metricsListen?: string | undefined;
  /** Whether gRPC callers must present a bearer token (--auth-file). */
  readonly authenticated: boolean;
  /** The SQS endpoint's address (--sqs-listen), if that listener is on. */
  readonly sqsListen?: string | undefined;
  /** Whether SQS requests must be signed with a configured access key (--sqs-credentials). */
  readonly sqsAuthenticated?: boolean | undefined;
  /** The admin console's address (--console-listen), if it is on; it asks for the gRPC bearer tokens (--auth-file). */
  readonly consoleListen?: string | undefined;
  /** Whether gRPC callers must present a certificate from --tls-client-ca. */
  readonly grpcClientCertificates: boolean;
  /** Whether scrapers must present a certificate from --tls-client-ca (--metrics-tls with a client CA). */
  readonly metricsClientCertificates: boolean;
  /** The operator said the listeners are meant to be open (--allow-unauthenticated-network). */
  readonly allowUnauthenticatedNetwork: boolean;
}

/** A listener address the safe-by-default rule refuses; its message names the flag and the ways out. */
export class ListenPolicyError extends Error {
  override readonly name = "ListenPolicyError";
}

/**
 * Refuses, with a ListenPolicyError, a listener that would take unauthenticated
 * connections from beyond this machine unless the operator allowed it explicitly;
 * returns the addresses that are open only because of that permission (to warn of).
 * gRPC counts as authenticated with bearer tokens or client certificates; the
 * metrics listener has no tokens, so only client certificates count there.
 */
export function checkListenPolicy(input: ListenPolicyInput): string[] {
  const open: { address: string; refusal: string }[] = [];
  if (!input.authenticated && !input.grpcClientCertificates && !isLoopbackAddress(input.listen)) {
    open.push({
      address: input.listen,
      refusal:
        `--listen ${input.listen} is not a loopback address and callers are not authenticated: ` +
        `pass --auth-file (bearer tokens) or --tls-client-ca (client certificates), ` +
        `listen on 127.0.0.1, or pass ${allowOpenFlag} if anyone who can reach the port may use every queue`,
    });
  }
  const metrics = input.metricsListen;
  if (metrics !== undefined && !input.metricsClientCertificates && !isLoopbackAddress(metrics)) {
    open.push({
      address: metrics,
      refusal:
        `--metrics-listen ${metrics} is not a loopback address and the metrics listener has no authentication: ` +
        `pass --metrics-tls with --tls-client-ca (scrapers present client certificates), ` +
        `listen on 127.0.0.1, or pass ${allowOpenFlag} if anyone who can reach the port may read the metrics`,
    });
  }
  const sqs = input.sqsListen;
  // The SQS endpoint shares the gRPC listener's TLS, so client certificates protect it as they protect gRPC.
  if (
    sqs !== undefined &&
    input.sqsAuthenticated !== true &&
    !input.grpcClientCertificates &&
    !isLoopbackAddress(sqs)
  ) {
    open.push({
      address: sqs,
      refusal:
        `--sqs-listen ${sqs} is not a loopback address and SQS requests are not authenticated: ` +
        `pass --sqs-credentials (signed requests) or --tls-client-ca (client certificates), ` +
        `listen on 127.0.0.1, or pass ${allowOpenFlag} if anyone who can reach the port may use every queue`,
    });
  }
  const console = input.consoleListen;
  // The console signs users in with the gRPC tokens, and shares the gRPC listener's TLS.
  if (console !== undefined && !input.authenticated && !input.grpcClientCertificates && !isLoopbackAddress(console)) {
    open.push({
      address: console,
      refusal:
        `--console-listen ${console} is not a loopback address and the console has no sign-in: ` +
        `pass --auth-file (users sign in with a bearer token) or --tls-client-ca (client certificates), ` +
        `listen on 127.0.0.1, or pass ${allowOpenFlag} if anyone who can reach the port may manage every queue`,
    });
  }
  if (!input.allowUnauthenticatedNetwork && open.length > 0) throw new ListenPolicyError(open[0]!.refusal);
  return open.map(({ address }) => address);
}
