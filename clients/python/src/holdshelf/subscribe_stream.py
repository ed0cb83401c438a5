"""One Subscribe call as a pair of ends: send() requests, iterate the responses."""

from __future__ import annotations

import queue
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import grpc

from holdshelf._wire import service_pb2
from holdshelf.convert import flow_control_to_wire, renewal_to_wire, subscribe_response_from_wire
from holdshelf.durations import Seconds, to_duration
from holdshelf.errors import HoldshelfError
from holdshelf.values import FlowControl, LeaseRenewal, SubscribeResponse


class SubscribeStream:
    """A raw Subscribe stream, for users who settle deliveries themselves (the Consumer manages one for you).

    The first request opens the subscription (queue, lease, release on
    disconnect, flow control); later ones carry acks, renewals and changes
    of flow control. Each request with acks or renewals is answered, once
    durable, by one response holding an AckResult per ack and a LeaseState
    per renewal; deliveries and LEASE_EXPIRED notices come in any response
    (see the RPC's documentation in proto/holdshelf/v1/queue_service.proto).
    Iterating yields each SubscribeResponse; it ends when the server ends the
    stream with OK and raises HoldshelfError when it ends with an error
    (UNIMPLEMENTED from a broker without Subscribe).
    """

    def __init__(self, call_subscribe: Callable[..., Any], metadata: Sequence[tuple[str, str]]) -> None:
        # grpcio reads requests from an iterator on its own thread: this
        # queue feeds it, and None ends it, which half-closes the stream.
        self._requests: queue.SimpleQueue[service_pb2.SubscribeRequest | None] = queue.SimpleQueue()
        self._call = call_subscribe(self._drain(), metadata=metadata)

    def _drain(self) -> Iterator[service_pb2.SubscribeRequest]:
        while (request := self._requests.get()) is not None:
            yield request

    def open(self, queue_name: str, *, visibility_timeout: Seconds | None = None, release_on_disconnect: bool = False,
             flow_control: FlowControl | None = None, acks: Sequence[str] = (),
             renewals: Sequence[LeaseRenewal] = ()) -> None:
        """Sends the first request; visibility_timeout None means the queue's, flow_control None 100 messages."""
        request = service_pb2.SubscribeRequest(
            queue=queue_name, release_on_disconnect=release_on_disconnect, ack_receipt_handles=acks,
            leases=[renewal_to_wire(renewal) for renewal in renewals])
        if visibility_timeout is not None:
            request.visibility_timeout.CopyFrom(to_duration(visibility_timeout))
        if flow_control is not None:
            request.flow_control.CopyFrom(flow_control_to_wire(flow_control))
        self._requests.put(request)

    def send(self, *, acks: Sequence[str] = (), renewals: Sequence[LeaseRenewal] = (),
             flow_control: FlowControl | None = None) -> None:
        """Sends a later request: acks, renewals (releases, failures, checkpoints), a new flow control."""
        request = service_pb2.SubscribeRequest(
            ack_receipt_handles=acks, leases=[renewal_to_wire(renewal) for renewal in renewals])
        if flow_control is not None:
            request.flow_control.CopyFrom(flow_control_to_wire(flow_control))
        self._requests.put(request)

    def half_close(self) -> None:
        """Sends nothing more: no further deliveries; the server answers what was sent, then ends the stream."""
        self._requests.put(None)

    def cancel(self) -> None:
        """Breaks the stream: with release_on_disconnect the server releases every lease it holds."""
        self._call.cancel()
        self._requests.put(None)  # lets grpcio's request thread finish

    def __iter__(self) -> Iterator[SubscribeResponse]:
        try:
            for response in self._call:
                yield subscribe_response_from_wire(response)
        except grpc.RpcError as error:
            raise HoldshelfError.from_rpc_error(error) from None
        finally:
            # The stream is over: grpcio's request thread may finish too.
            self._requests.put(None)
