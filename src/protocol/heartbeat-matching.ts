/**
 * Whether a Heartbeat response is the answer to the request in flight
 * (whose renewals named `sentHandles`, in order) rather than an unsolicited
 * notice of expired leases.
 *
 * The scheme: a LeaseKeeper has at most one request in flight and sends the
 * next only once that one is answered. The server answers requests strictly
 * in order, one response each, with one LeaseState per renewal in the
 * request's order; it may also push unsolicited responses, each naming one or
 * more leases with held=false and reason LEASE_EXPIRED. So with nothing in
 * flight every response is unsolicited, and with a request in flight a
 * response is its answer exactly when it names the request's handles in the
 * request's order (an empty request is answered by an empty response, which
 * no notice ever is).
 *
 * One case is ambiguous: every lease of the request expired on the server
 * just before it read the request, and the notice naming exactly those
 * handles arrives first. Taking the notice as the answer is then still right
 * about the leases (all lost), and the true answer that follows matches
 * nothing in flight: lost leases are never renewed again, so the next request
 * names other handles. It is read as unsolicited, where only held=false
 * states act, on leases already forgotten. Should a response ever go
 * unmatched anyway, the keeper's stall timeout reopens the stream.
 *
 * A broker that forwards a stream's renewals to a queue's owner
 * (src/grpc/forwarding/owner-heartbeat-streams.ts) tells answers from
 * notices the same way, against the oldest of its requests in flight.
 */
export function answersRequest(
  sentHandles: readonly string[],
  states: readonly { readonly receiptHandle: string }[],
): boolean {
  return (
    states.length === sentHandles.length && states.every((state, index) => state.receiptHandle === sentHandles[index])
  );
}
