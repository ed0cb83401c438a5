"""Consumes a queue on ONE Subscribe stream: deliveries, acks, renewals, checkpoints, releases, reconnects."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field

import grpc

from holdshelf.convert import lease_lost_before_delete
from holdshelf.errors import HoldshelfError, LeaseLostError
from holdshelf.lease_record import LeaseRecord, PendingRelease, settle
from holdshelf.lease_stream_keeper import LeaseStreamKeeper, RequestInFlight
from holdshelf.subscribe_stream import SubscribeStream
from holdshelf.values import FlowControl, LeaseState, ReceivedMessage, SubscribeResponse

# The protocol's limit of acks per request; the rest wait for the next.
MAX_ACKS = 1000
# The gRPC codes an AckResult's reasons come with as unary Delete errors, so a
# refused ack reads as a refused delete did (queue_service.proto, Errors).
_ACK_REASON_CODES = {
    "LEASE_SUPERSEDED": grpc.StatusCode.FAILED_PRECONDITION,
    "RECEIPT_HANDLE_INVALID": grpc.StatusCode.INVALID_ARGUMENT,
}

Deliveries = Callable[[list[tuple[ReceivedMessage, "SubscribedLease"]]], None]


@dataclass
class _AckingRequest(RequestInFlight):
    """A Subscribe request in flight: its lease entries and its acks, matched to the answer by receipt handle."""

    acks: dict[str, list[Future[None]]] = field(default_factory=dict)


class SubscribedLease:
    """One delivery of a Subscription as its handler's Consumer settles it."""

    def __init__(self, subscription: Subscription, lease: LeaseRecord) -> None:
        self._subscription = subscription
        self._lease = lease

    def watch(self, on_lost: Callable[[LeaseLostError], None]) -> SubscribedLease:
        """Makes on_lost fire if the lease is lost (at once if it was lost already); returns self."""
        with self._subscription._cv:
            self._lease.on_lost = on_lost
            lost = self._lease.lost
        if lost is not None:
            on_lost(lost)
        return self

    def checkpoint(self, data: bytes) -> Future[None]:
        """Saves progress in a renewal sent at once; the Future resolves once stored, or fails with LeaseLostError."""
        return self._subscription._save_checkpoint(self._lease, data)

    def release(self, delay: float) -> Future[None]:
        """Stops renewing and makes the message visible after delay seconds; settled as HeldLease.release is."""
        return self._subscription._release(self._lease, delay, failed=False)

    def fail(self, retry_delay: float | None) -> Future[None]:
        """Ends the lease as a failed delivery (back after retry_delay, or the queue's backoff when None)."""
        return self._subscription._release(self._lease, retry_delay, failed=True)

    def ack(self) -> Future[None]:
        """Deletes the message on the stream; resolves once durable, fails with HoldshelfError if refused
        (LEASE_SUPERSEDED, RECEIPT_HANDLE_INVALID) and with RuntimeError if close() came first."""
        return self._subscription._ack(self._lease)


class Subscription(LeaseStreamKeeper[SubscribeStream]):
    """Holds a Consumer's deliveries on ONE Subscribe stream (release_on_disconnect).

    It opens the stream with the Consumer's lease and flow control, hands
    each delivery to on_deliveries as it comes, renews each lease before it
    runs out, carries acks, checkpoints, releases and failures, tells a
    lease's holder when it is lost (a LEASE_EXPIRED notice, a renewal
    answered not held, no answer before the deadline), and reopens a broken
    stream with backoff, renewing every lease still held in the new stream's
    first request so that they count against its credit at once. What is
    pending goes in one request; at most one request with acks or renewals
    is in flight, so what comes meanwhile is coalesced into the next, and
    its answer is matched by receipt handle.

    A stream that ends with UNIMPLEMENTED (a broker without Subscribe) is
    not reopened: on_unimplemented is called, for the Consumer to fall back
    to Receive.

    Once paused (the Consumer stops), deliveries that were already on their
    way are released on the stream at once, never handed over; those that
    come after the half-close, when nothing more can be sent, are given to
    give_back (a unary release) once the stream has ended.

    One thread owns the timing (renewals, expiries, the stall timeout,
    reopening) and one reader thread per stream applies the responses; both
    work under one condition variable.
    """

    _RPC = "Subscribe"
    _in_flight: _AckingRequest | None

    def __init__(self, queue: str, open_stream: Callable[[], SubscribeStream], *,
                 visibility_timeout: float | None, lease_seconds: float, renew_fraction: float,
                 flow_control: FlowControl, on_deliveries: Deliveries, on_unimplemented: Callable[[], None],
                 give_back: Callable[[list[str]], None], on_error: Callable[[Exception], object]) -> None:
        super().__init__(queue, open_stream, visibility_timeout=visibility_timeout, lease_seconds=lease_seconds,
                         renew_fraction=renew_fraction, on_error=on_error, thread_name="holdshelf-subscription")
        self._flow = flow_control
        self._on_deliveries = on_deliveries
        self._on_unimplemented = on_unimplemented
        self._give_back = give_back
        self._late: list[str] = []  # receipt handles delivered after the half-close
        self._acks: dict[str, list[Future[None]]] = {}  # unsent acks by receipt handle
        self._paused = False
        self._thread.start()

    def pause(self) -> None:
        """Asks for no more deliveries (max_outstanding_messages 0); acks and renewals go on."""
        with self._cv:
            self._paused = True
            stream = self._stream
            if stream is None:
                return  # the next stream opens paused
            try:
                stream.send(flow_control=self._flow_control())
            except Exception as error:
                self._break_stream(error)
            self._cv.notify_all()

    def close(self, timeout: float) -> None:
        """Sends what is pending and waits for the answers, then half-closes the stream and
        waits for the server to end it, all within timeout; then forgets every lease.
        Leases still held are left to run out; releases and acks not answered by then fail.
        Deliveries that came after the half-close go to give_back."""
        super().close(timeout)
        with self._cv:
            late, self._late = self._late, []
        if late:
            try:
                self._give_back(late)
            except Exception as error:
                self._errors.append(error)
            self._flush_errors()

    def _flow_control(self) -> FlowControl:
        return FlowControl(0, self._flow.max_outstanding_bytes) if self._paused else self._flow

    def _start(self, stream: SubscribeStream) -> None:
        # Every lease still held is renewed in the first request, which takes
        # it back onto this stream's credit at once.
        entries = self._take_entries()
        try:
            stream.open(self._queue, visibility_timeout=self._visibility_timeout, release_on_disconnect=True,
                        flow_control=self._flow_control(), renewals=[self._renewal(e) for e in entries.values()])
        except Exception as error:
            self._requeue(entries.values())
            self._errors.append(error)
            stream.cancel()
            self._schedule_reopen()
            return
        self._stream = stream
        if entries:
            self._mark_sent(_AckingRequest(entries))
        threading.Thread(target=self._read, args=(stream,), name="holdshelf-subscribe-reader", daemon=True).start()

    def _read(self, stream: SubscribeStream) -> None:
        failure: Exception | None = None
        try:
            for response in stream:
                with self._cv:
                    if stream is not self._stream:
                        return
                    delivered = self._on_response(response)
                    self._cv.notify_all()
                self._flush_errors()
                if delivered:
                    # Outside the lock: the Consumer's callback takes its own.
                    self._on_deliveries(delivered)
        except Exception as error:
            failure = error
        unimplemented = isinstance(failure, HoldshelfError) and failure.code == grpc.StatusCode.UNIMPLEMENTED
        with self._cv:
            if stream is not self._stream:
                return
            if unimplemented:
                # Not reopened: the broker has no Subscribe, and the Consumer falls back to Receive.
                self._stream = None
                self._reopen_at = None
                self._requeue_in_flight()
                self._cv.notify_all()
            else:
                if failure is None and not self._closed:
                    failure = ConnectionError("the server ended the Subscribe stream")
                self._on_stream_end(failure)
                self._cv.notify_all()
        self._flush_errors()
        if unimplemented:
            self._on_unimplemented()

    def _on_response(self, response: SubscribeResponse) -> list[tuple[ReceivedMessage, SubscribedLease]]:
        """Applies one response; returns its deliveries, for the Consumer."""
        notices = [s for s in response.leases if s.reason == "LEASE_EXPIRED"]
        answers = [s for s in response.leases if s.reason != "LEASE_EXPIRED"]
        if response.acks or answers:
            self._apply_answer(response, answers)
        for state in notices:
            lease = self._leases.get(state.receipt_handle)
            # A lease in flight is decided by its answer: the renewal may have
            # taken it back after the notice was sent.
            if lease is not None and not lease.in_flight:
                self._lose(lease, state.reason)
        if self._closed:
            # Sent before the server read the half-close: nothing more can go
            # on this stream, so close() releases them with a unary call.
            self._late += [message.receipt_handle for message in response.messages]
            return []
        delivered = []
        now = time.monotonic()
        for message in response.messages:
            lease = LeaseRecord(message.receipt_handle)
            self._leases[lease.handle] = lease
            self._schedule(lease, now)
            if self._paused:
                # Pushed before the server read the pause: released here, under
                # the lock, so that close() waits for the answer.
                lease.state = "ending"
                lease.release = PendingRelease(0.0, False)
            else:
                delivered.append((message, SubscribedLease(self, lease)))
        self._pump()
        return delivered

    def _apply_answer(self, response: SubscribeResponse, answers: list[LeaseState]) -> None:
        request, self._in_flight = self._in_flight, None
        if request is None:
            self._errors.append(RuntimeError("a Subscribe answer came with no request in flight"))
            return
        self._attempt = 0
        for result in response.acks:
            waiters = request.acks.pop(result.receipt_handle, [])
            lost = lease_lost_before_delete(result.delete_outcome)
            error: HoldshelfError | None = None if result.reason == "" else HoldshelfError.of(
                _ACK_REASON_CODES.get(result.reason, grpc.StatusCode.FAILED_PRECONDITION), result.reason,
                f"the ack was refused: {result.reason}")
            # An ack that came after the message was dead-lettered or received again deleted nothing.
            settle(waiters, LeaseLostError(result.receipt_handle, lost) if lost is not None else error)
            lease = self._leases.get(result.receipt_handle)
            if lease is not None and lease.state == "ending" and lease.release is None:
                # Forgotten for the same reason the ack's waiters were told, if the lease was lost before it.
                self._forget(lease, LeaseLostError(lease.handle, lost or result.reason or "RELEASED"))
        for state in answers:
            entry = request.entries.pop(state.receipt_handle, None)
            if entry is not None:
                self._apply_state(entry, state, request.sent_at)
        # Whatever the answer did not name (a broker that broke the protocol) goes again.
        self._requeue(request.entries.values())
        self._requeue_acks(request.acks)

    def _pump(self) -> None:
        """Sends one request with every ack, renewal, checkpoint and release pending, unless one is in flight."""
        stream = self._stream
        if stream is None or self._in_flight is not None:
            return
        entries = self._take_entries()
        acks = dict(list(self._acks.items())[:MAX_ACKS])
        if not entries and not acks:
            return
        try:
            stream.send(acks=list(acks), renewals=[self._renewal(e) for e in entries.values()])
        except Exception as error:  # nothing went out: the stream is reopened with backoff, the entries queued again
            self._requeue(entries.values())
            self._break_stream(error)
            return
        for handle in acks:
            del self._acks[handle]
        self._mark_sent(_AckingRequest(entries, acks=acks))

    def _ack(self, lease: LeaseRecord) -> Future[None]:
        answer: Future[None] = Future()
        with self._cv:
            # Sent even for a lease lost meanwhile: if nobody received the
            # message since, the finished work is not done again.
            self._acks.setdefault(lease.handle, []).append(answer)
            self._stop_renewing(lease)
            self._pump()
            self._cv.notify_all()
        return answer

    def _requeue_in_flight(self) -> None:
        request = self._in_flight
        super()._requeue_in_flight()
        if request is not None:
            # Acks go again on the next stream: deleting twice is harmless.
            self._requeue_acks(request.acks)

    def _requeue_acks(self, acks: dict[str, list[Future[None]]]) -> None:
        for handle, waiters in acks.items():
            self._acks.setdefault(handle, []).extend(waiters)

    def _drop_in_flight(self) -> None:
        request = self._in_flight
        super()._drop_in_flight()
        if request is not None:
            for waiters in request.acks.values():
                settle(waiters, RuntimeError("the Consumer stopped before the broker answered this ack"))

    def _drop_unsent(self) -> None:
        acks, self._acks = self._acks, {}
        for waiters in acks.values():
            settle(waiters, RuntimeError("the Consumer stopped before this ack was sent"))
        super()._drop_unsent()

    def _has_pending(self) -> bool:
        return super()._has_pending() or bool(self._acks)
