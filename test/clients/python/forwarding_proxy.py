"""A QueueService in front of a real broker, for the Python client's tests.

It forwards every call as raw bytes, status details included, and records
what went through: the calls per method, the entries of each SendBatch and
each Subscribe request. Without `subscribe` it answers Subscribe with
UNIMPLEMENTED, as a broker from before Subscribe does; with it, cut() ends
every open Subscribe stream with UNAVAILABLE and cancels its call to the
broker, as a lost connection does. refuse() makes the next calls of a method
fail with a chosen code and reason, as a cluster's broker answers while a
queue moves (UNAVAILABLE, QUEUE_MOVING).
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from concurrent import futures

import grpc
from google.protobuf import any_pb2

from holdshelf._wire import error_details_pb2, service_pb2, status_pb2

SERVICE = "/holdshelf.v1.QueueService/"
STREAMS = {"Heartbeat", "Subscribe"}


class _Stream:
    def __init__(self) -> None:
        self.upstream: grpc.Call | None = None
        self.cut = False


class ForwardingProxy:
    """A grpcio server on a free port that passes each call to `upstream`."""

    def __init__(self, upstream: str, *, subscribe: bool) -> None:
        self.calls: Counter[str] = Counter()
        self.send_batches: list[int] = []  # entries per SendBatch, in call order
        self.subscribe_requests: list[service_pb2.SubscribeRequest] = []
        self._subscribe = subscribe
        self._lock = threading.Lock()
        self._streams: set[_Stream] = set()
        self._refusals: dict[str, list[tuple[grpc.StatusCode, str]]] = {}
        self._channel = grpc.insecure_channel(upstream)
        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=64))
        self._server.add_generic_rpc_handlers([_Handler(self)])
        self.address = f"127.0.0.1:{self._server.add_insecure_port('127.0.0.1:0')}"
        self._server.start()

    def cut(self) -> int:
        """Breaks every open Subscribe stream (UNAVAILABLE to the client, a cancel to the broker); how many."""
        with self._lock:
            streams = list(self._streams)
        for stream in streams:
            stream.cut = True
            if stream.upstream is not None:
                stream.upstream.cancel()
        return len(streams)

    def refuse(self, method: str, count: int, code: grpc.StatusCode, reason: str) -> None:
        """Ends the next `count` calls of `method` with code and reason (an ErrorInfo detail), unforwarded."""
        with self._lock:
            self._refusals.setdefault(method, []).extend([(code, reason)] * count)

    def _refusal(self, method: str, context: grpc.ServicerContext) -> None:
        with self._lock:
            pending = self._refusals.get(method)
            refusal = pending.pop(0) if pending else None
        if refusal is None:
            return
        code, reason = refusal
        detail = any_pb2.Any()
        detail.Pack(error_details_pb2.ErrorInfo(reason=reason, domain="holdshelf"))
        status = status_pb2.Status(code=code.value[0], message=f"refused by the proxy: {reason}", details=[detail])
        context.set_trailing_metadata([("grpc-status-details-bin", status.SerializeToString())])
        context.abort(code, status.message)

    def stop(self) -> None:
        """Ends the server and its channel."""
        self._server.stop(0).wait()
        self._channel.close()

    def _record(self, method: str, request: bytes) -> None:
        with self._lock:
            self.calls[method] += 1
            if method == "SendBatch":
                self.send_batches.append(len(service_pb2.SendBatchRequest.FromString(request).entries))

    def unary(self, method: str, request: bytes, context: grpc.ServicerContext) -> bytes:
        self._record(method, request)
        self._refusal(method, context)
        call = self._channel.unary_unary(SERVICE + method)
        try:
            return call(request)
        except grpc.RpcError as error:
            _abort_like(context, error)
            raise  # not reached: abort raises

    def stream(self, method: str, requests: Iterator[bytes], context: grpc.ServicerContext) -> Iterator[bytes]:
        with self._lock:
            self.calls[method] += 1
        if method == "Subscribe" and not self._subscribe:
            context.abort(grpc.StatusCode.UNIMPLEMENTED, "Subscribe is not implemented by this broker")
        self._refusal(method, context)

        def forward() -> Iterator[bytes]:
            for request in requests:
                if method == "Subscribe":
                    self._record_subscribe(request)
                yield request

        stream = _Stream()
        stream.upstream = self._channel.stream_stream(SERVICE + method)(forward())
        with self._lock:
            self._streams.add(stream)
        try:
            yield from stream.upstream
        except grpc.RpcError as error:
            if stream.cut:
                context.abort(grpc.StatusCode.UNAVAILABLE, "the proxy cut the stream")
            _abort_like(context, error)
        finally:
            with self._lock:
                self._streams.discard(stream)

    def _record_subscribe(self, request: bytes) -> None:
        with self._lock:
            self.subscribe_requests.append(service_pb2.SubscribeRequest.FromString(request))


def _abort_like(context: grpc.ServicerContext, error: grpc.RpcError) -> None:
    """Ends the call as the broker ended it: code, message and the status details trailer."""
    details = [(key, value) for key, value in (error.trailing_metadata() or ()) if key == "grpc-status-details-bin"]
    context.set_trailing_metadata(details)
    context.abort(error.code(), error.details() or "")


class _Handler(grpc.GenericRpcHandler):
    def __init__(self, proxy: ForwardingProxy) -> None:
        self._proxy = proxy

    def service(self, details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler | None:
        if not details.method.startswith(SERVICE):
            return None
        method = details.method[len(SERVICE):]
        if method in STREAMS:
            return grpc.stream_stream_rpc_method_handler(
                lambda requests, context: self._proxy.stream(method, requests, context))
        return grpc.unary_unary_rpc_method_handler(lambda request, context: self._proxy.unary(method, request, context))
