"""One Heartbeat call as a pair of ends: send() requests, iterate the responses."""

from __future__ import annotations

import queue
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import grpc

from holdshelf._wire import service_pb2
from holdshelf.convert import lease_state_from_wire, renewal_to_wire
from holdshelf.errors import HoldshelfError
from holdshelf.values import LeaseRenewal, LeaseState


class HeartbeatStream:
    """A raw Heartbeat stream, for users who manage leases themselves.

    Each request is answered by one response, in request order; the server
    may also push unsolicited notices whose states all say held=False,
    reason "LEASE_EXPIRED" (see the RPC's documentation in
    proto/holdshelf/v1/queue_service.proto). Iterating yields each
    response's states; it ends when the server ends the stream with OK and
    raises HoldshelfError when it ends with an error.
    """

    def __init__(self, call_heartbeat: Callable[..., Any], metadata: Sequence[tuple[str, str]]) -> None:
        # grpcio reads requests from an iterator on its own thread: this
        # queue feeds it, and None ends it, which half-closes the stream.
        self._requests: queue.SimpleQueue[service_pb2.HeartbeatRequest | None] = queue.SimpleQueue()
        self._call = call_heartbeat(self._drain(), metadata=metadata)

    def _drain(self) -> Iterator[service_pb2.HeartbeatRequest]:
        while (request := self._requests.get()) is not None:
            yield request

    def send(self, queue_name: str, renewals: Sequence[LeaseRenewal] = (), *, release_on_disconnect: bool = False) -> None:
        """Sends one request (release_on_disconnect counts on the first request only)."""
        self._requests.put(service_pb2.HeartbeatRequest(
            queue=queue_name,
            leases=[renewal_to_wire(renewal) for renewal in renewals],
            release_on_disconnect=release_on_disconnect,
        ))

    def half_close(self) -> None:
        """Sends nothing more: the server answers what was sent, then ends the stream, leases left as they are."""
        self._requests.put(None)

    def cancel(self) -> None:
        """Breaks the stream: with release_on_disconnect the server releases every lease it tracks."""
        self._call.cancel()
        self._requests.put(None)  # lets grpcio's request thread finish

    def __iter__(self) -> Iterator[list[LeaseState]]:
        try:
            for response in self._call:
                yield [lease_state_from_wire(state) for state in response.leases]
        except grpc.RpcError as error:
            raise HoldshelfError.from_rpc_error(error) from None
        finally:
            # The stream is over: grpcio's request thread, still waiting on the
            # queue when the server ended it, may finish too.
            self._requests.put(None)
