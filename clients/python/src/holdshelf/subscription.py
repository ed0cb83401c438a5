"""Consumes a queue on ONE Subscribe stream: deliveries, acks, renewals, checkpoints, releases, reconnects."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from dataclasses import dataclass, field

import grpc

from holdshelf.backoff import backoff_seconds
from holdshelf.convert import renewal_to_wire
from holdshelf.durations import seconds_of
from holdshelf.errors import HoldshelfError, LeaseLostError
from holdshelf.lease_keeper import (
    MAX_RENEWALS, MIN_STALL_SECONDS, REFUSAL_REASONS, RENEW_JITTER, _PendingCheckpoint, _PendingRelease, _settle,
)
from holdshelf.subscribe_stream import SubscribeStream
from holdshelf.values import FlowControl, LeaseRenewal, LeaseState, ReceivedMessage, SubscribeResponse

# The protocol's limit of acks per request; the rest wait for the next.
MAX_ACKS = 1000
# The gRPC codes an AckResult's reasons come with as unary Delete errors, so a
# refused ack reads as a refused delete did (queue_service.proto, Errors).
_ACK_REASON_CODES = {
    "LEASE_SUPERSEDED": grpc.StatusCode.FAILED_PRECONDITION,
    "RECEIPT_HANDLE_INVALID": grpc.StatusCode.INVALID_ARGUMENT,
}

Deliveries = Callable[[list[tuple[ReceivedMessage, "SubscribedLease"]]], None]


@dataclass(eq=False)
class _Lease:
    handle: str
    # Set by SubscribedLease.watch; a loss before that is kept in `lost` and told at watch.
    on_lost: Callable[[LeaseLostError], None] | None = None
    lost: LeaseLostError | None = None
    # held: renewed on schedule; refused: a renewal was refused, so it is no
    # longer renewed, but its handle works until its deadline; ending: an ack,
    # release or failure is queued or in flight; gone: never named again.
    state: str = "held"
    end_error: Exception | None = None
    due: bool = False  # a renewal belongs in the next request
    in_flight: bool = False  # named by the request in flight, whose answer decides its fate
    renew_at: float = 0.0
    expires_at: float = 0.0
    checkpoint: _PendingCheckpoint | None = None
    release: _PendingRelease | None = None


@dataclass(frozen=True)
class _Entry:
    lease: _Lease
    checkpoint: _PendingCheckpoint | None
    release: _PendingRelease | None


@dataclass
class _InFlight:
    # Matched to the answer by receipt handle: a lease is named once per request, an ack once.
    entries: dict[str, _Entry]
    acks: dict[str, list[Future]]
    sent_at: float = field(default_factory=time.monotonic)


class SubscribedLease:
    """One delivery of a Subscription as its handler's Consumer settles it."""

    def __init__(self, subscription: Subscription, lease: _Lease) -> None:
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

    def checkpoint(self, data: bytes) -> Future:
        """Saves progress in a renewal sent at once; the Future resolves once stored, or fails with LeaseLostError."""
        return self._subscription._save_checkpoint(self._lease, data)

    def release(self, delay: float) -> Future:
        """Stops renewing and makes the message visible after delay seconds; settled as HeldLease.release is."""
        return self._subscription._release(self._lease, delay, failed=False)

    def fail(self, retry_delay: float | None) -> Future:
        """Ends the lease as a failed delivery (back after retry_delay, or the queue's backoff when None)."""
        return self._subscription._release(self._lease, retry_delay, failed=True)

    def ack(self) -> Future:
        """Deletes the message on the stream; resolves once durable, fails with HoldshelfError if refused
        (LEASE_SUPERSEDED, RECEIPT_HANDLE_INVALID) and with RuntimeError if close() came first."""
        return self._subscription._ack(self._lease)


class Subscription:
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

    def __init__(self, queue: str, open_stream: Callable[[], SubscribeStream], *,
                 visibility_timeout: float | None, lease_seconds: float, renew_fraction: float,
                 flow_control: FlowControl, on_deliveries: Deliveries, on_unimplemented: Callable[[], None],
                 give_back: Callable[[list[str]], None], on_error: Callable[[Exception], None]) -> None:
        self._queue = queue
        self._open_stream = open_stream
        self._visibility_timeout = visibility_timeout  # None: the queue's, applied by the server
        self._lease_seconds = lease_seconds
        self._renew_fraction = renew_fraction
        self._flow = flow_control
        self._on_deliveries = on_deliveries
        self._on_unimplemented = on_unimplemented
        self._give_back = give_back
        self._late: list[str] = []  # receipt handles delivered after the half-close
        self._on_error = on_error
        self._stall_seconds = max(MIN_STALL_SECONDS, lease_seconds)
        self._cv = threading.Condition()
        self._leases: dict[str, _Lease] = {}
        self._acks: dict[str, list[Future]] = {}  # unsent acks by receipt handle
        self._stream: SubscribeStream | None = None
        self._in_flight: _InFlight | None = None
        self._reopen_at: float | None = 0.0  # open at once
        self._attempt = 0
        self._paused = False
        self._closing = False
        self._closed = False
        self._errors: list[Exception] = []  # reported outside the lock, so on_error may call anything
        self._thread = threading.Thread(target=self._run, name="holdshelf-subscription", daemon=True)
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
        Leases still held are left to run out; releases and acks not answered by then fail."""
        deadline = time.monotonic() + timeout
        with self._cv:
            self._closing = True
            self._cv.notify_all()
            self._cv.wait_for(lambda: not self._has_pending(), max(0.0, deadline - time.monotonic()))
            self._closed = True
            self._reopen_at = None
            stream = self._stream
            if stream is not None:
                stream.half_close()
                self._cv.wait_for(lambda: self._stream is not stream, max(0.0, deadline - time.monotonic()))
            stream, self._stream = self._stream, None
            if stream is not None:
                stream.cancel()
            self._drop_in_flight()
            self._fail_unsent_acks(RuntimeError("the Consumer stopped before this ack was sent"))
            for lease in list(self._leases.values()):
                self._forget(lease, LeaseLostError(lease.handle, "RELEASED"),
                             RuntimeError("the Consumer stopped before this release was sent"))
            late, self._late = self._late, []
            self._cv.notify_all()
        self._thread.join()
        if late:
            try:
                self._give_back(late)
            except Exception as error:
                self._errors.append(error)
        self._flush_errors()

    # The timing thread: opens streams, marks renewals due, expires leases, breaks stuck streams.
    def _run(self) -> None:
        while True:
            with self._cv:
                if self._closed:
                    return
                now = time.monotonic()
                if self._stream is None and self._reopen_at is not None and now >= self._reopen_at:
                    self._open()
                self._tick(now)
                self._pump()
                wake = self._next_wake()
                self._cv.wait(None if wake is None else max(0.0, wake - time.monotonic()))
            self._flush_errors()

    def _tick(self, now: float) -> None:
        request = self._in_flight
        if request is not None and now - request.sent_at >= self._stall_seconds:
            self._break_stream(TimeoutError(f"no Subscribe answer within {self._stall_seconds:g} s"))
        for lease in list(self._leases.values()):
            if lease.in_flight:
                continue  # its answer, or the stall timeout, decides
            if lease.expires_at <= now:
                self._lose(lease, "LEASE_EXPIRED")
            elif lease.state == "held" and lease.renew_at <= now:
                lease.due = True

    def _next_wake(self) -> float | None:
        times = [self._reopen_at] if self._stream is None and self._reopen_at is not None else []
        if self._in_flight is not None:
            times.append(self._in_flight.sent_at + self._stall_seconds)
        for lease in self._leases.values():
            if not lease.in_flight:
                times.append(lease.expires_at)
                if lease.state == "held" and not lease.due:
                    times.append(lease.renew_at)
        return min(times, default=None)

    def _flow_control(self) -> FlowControl:
        return FlowControl(0, self._flow.max_outstanding_bytes) if self._paused else self._flow

    def _open(self) -> None:
        self._reopen_at = None
        try:
            stream = self._open_stream()
        except Exception as error:  # a closed channel refuses here
            self._errors.append(error)
            self._schedule_reopen()
            return
        # A broken stream made the server release every lease it held (or, after
        # a broker restart, left them): renewing each in the first request takes
        # it back onto this stream's credit, unless someone received the
        # message meanwhile (then its answer says LEASE_SUPERSEDED).
        for lease in self._leases.values():
            if lease.state == "held":
                lease.due = True
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
            self._mark_sent(entries, {})
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
            lease = _Lease(message.receipt_handle)
            self._leases[lease.handle] = lease
            self._schedule(lease, now)
            if self._paused:
                # Pushed before the server read the pause: released here, under
                # the lock, so that close() waits for the answer.
                lease.state = "ending"
                lease.release = _PendingRelease(0.0, False)
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
            error = None if result.reason == "" else HoldshelfError(
                _ACK_REASON_CODES.get(result.reason, grpc.StatusCode.FAILED_PRECONDITION), result.reason,
                f"the ack was refused: {result.reason}")
            _settle(waiters, error)
            lease = self._leases.get(result.receipt_handle)
            if lease is not None and lease.state == "ending" and lease.release is None:
                self._forget(lease, LeaseLostError(lease.handle, result.reason or "RELEASED"))
        for state in answers:
            entry = request.entries.pop(state.receipt_handle, None)
            if entry is not None:
                self._apply_state(entry, state, request.sent_at)
        # Whatever the answer did not name (a broker that broke the protocol) goes again.
        self._requeue(request.entries.values())
        for handle, waiters in request.acks.items():
            self._acks.setdefault(handle, []).extend(waiters)

    def _apply_state(self, entry: _Entry, state: LeaseState, sent_at: float) -> None:
        lease = entry.lease
        lease.in_flight = False
        stored = state.held or (entry.release is not None and state.reason == "RELEASED")
        if entry.checkpoint is not None:
            _settle(entry.checkpoint.waiters, None if stored else LeaseLostError(lease.handle, state.reason))
        if entry.release is not None:
            if not state.held and state.reason in REFUSAL_REASONS and lease.state != "gone":
                # Refused (a retry delay over 12 h, say): nothing changed, and the
                # handle works until the lease's deadline; an ending asked for
                # since (stop's release) goes in the next request.
                error = LeaseLostError(lease.handle, state.reason)
                self._mark_refused(lease, error)
                _settle(entry.release.waiters, error)
                return
            self._forget(lease, LeaseLostError(lease.handle, state.reason or "RELEASED"))
            _settle(entry.release.waiters)
            return
        if lease.state == "gone":
            return
        if state.held:
            if lease.state == "held":
                self._schedule(lease, sent_at)
        elif state.reason in REFUSAL_REASONS:
            if lease.state == "held":
                error = LeaseLostError(lease.handle, state.reason)
                self._mark_refused(lease, error)
                self._tell_lost(lease, error)
        else:
            self._lose(lease, state.reason)

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
        self._mark_sent(entries, acks)

    def _take_entries(self) -> dict[str, _Entry]:
        """Takes what each lease has to send (at most MAX_RENEWALS), leaving out what cannot be encoded."""
        entries: dict[str, _Entry] = {}
        for lease in list(self._leases.values()):
            if len(entries) == MAX_RENEWALS:
                break
            if lease.in_flight or (not lease.due and lease.checkpoint is None and lease.release is None):
                continue
            entry = self._encodable_entry(lease)
            if entry is not None:
                entries[lease.handle] = entry
                lease.due, lease.checkpoint, lease.release = False, None, None
        return entries

    def _mark_sent(self, entries: dict[str, _Entry], acks: dict[str, list[Future]]) -> None:
        for entry in entries.values():
            entry.lease.in_flight = True
        self._in_flight = _InFlight(entries, acks)

    def _encodable_entry(self, lease: _Lease) -> _Entry | None:
        """What the lease has to send, without a checkpoint or release that cannot be encoded (their
        waiters fail with the error); None if nothing is left, the lease lost if not even its renewal can be."""
        entry = _Entry(lease, lease.checkpoint, lease.release)
        try:
            renewal_to_wire(self._renewal(entry))
            return entry
        except Exception as error:
            unsendable = error
        waiters = [*(entry.checkpoint.waiters if entry.checkpoint else []),
                   *(entry.release.waiters if entry.release else [])]
        lease.checkpoint = lease.release = None
        _settle(waiters, unsendable)
        plain = _Entry(lease, None, None)
        try:
            renewal_to_wire(self._renewal(plain))
        except Exception:
            self._errors.append(unsendable)
            self._lose(lease, "INVALID_ARGUMENT")
            return None
        if not waiters:
            self._errors.append(unsendable)
        return plain if lease.due else None

    def _renewal(self, entry: _Entry) -> LeaseRenewal:
        checkpoint = None if entry.checkpoint is None else entry.checkpoint.data
        if entry.release is None:
            return LeaseRenewal(entry.lease.handle, self._visibility_timeout, checkpoint)
        return LeaseRenewal(entry.lease.handle, entry.release.delay, checkpoint, entry.release.failed)

    def _schedule(self, lease: _Lease, since: float) -> None:
        """Times a lease's renewal and expiry from its delivery or when its last renewal was sent."""
        interval = self._lease_seconds * self._renew_fraction
        lease.renew_at = since + interval * (1 - RENEW_JITTER * random.random())
        lease.expires_at = since + self._lease_seconds

    def _save_checkpoint(self, lease: _Lease, data: bytes) -> Future:
        answer: Future = Future()
        with self._cv:
            if lease.state != "held":
                answer.set_exception(lease.end_error or LeaseLostError(lease.handle, "RELEASED"))
                return answer
            waiters = [] if lease.checkpoint is None else lease.checkpoint.waiters
            lease.checkpoint = _PendingCheckpoint(bytes(data), [*waiters, answer])
            self._pump()
            self._cv.notify_all()
        return answer

    def _release(self, lease: _Lease, delay: float | None, *, failed: bool) -> Future:
        if delay is not None:
            delay = seconds_of(delay)  # refused here: a delay no request can carry would fail every later one
        answer: Future = Future()
        with self._cv:
            if lease.state == "gone":
                answer.set_result(None)
                return answer
            previous = lease.release
            # The first ending asked for wins; later callers wait for its answer.
            if previous is None:
                lease.release = _PendingRelease(delay, failed, [answer])
            else:
                previous.waiters.append(answer)
            if lease.state in ("held", "refused"):
                # Renewals stop now; the expiry stays, so that a release the
                # server never hears of still ends when the lease would.
                lease.state = "ending"
                lease.due = False
            self._pump()
            self._cv.notify_all()
        return answer

    def _ack(self, lease: _Lease) -> Future:
        answer: Future = Future()
        with self._cv:
            # Sent even for a lease lost meanwhile: if nobody received the
            # message since, the finished work is not done again.
            self._acks.setdefault(lease.handle, []).append(answer)
            if lease.state in ("held", "refused"):
                lease.state = "ending"
                lease.due = False
            self._pump()
            self._cv.notify_all()
        return answer

    def _tell_lost(self, lease: _Lease, error: LeaseLostError) -> None:
        if lease.lost is None:
            lease.lost = error
        if lease.on_lost is not None:
            lease.on_lost(error)

    def _mark_refused(self, lease: _Lease, error: LeaseLostError) -> None:
        """Stops renewing a lease whose handle works until its deadline; a checkpoint not sent yet fails."""
        lease.state = "refused"
        lease.end_error = error
        lease.due = False
        if lease.checkpoint is not None:
            _settle(lease.checkpoint.waiters, error)
            lease.checkpoint = None

    def _lose(self, lease: _Lease, reason: str) -> None:
        if lease.state == "gone":
            return
        error = LeaseLostError(lease.handle, reason)
        was_held = lease.state == "held"
        self._forget(lease, error)
        if was_held:
            self._tell_lost(lease, error)

    def _forget(self, lease: _Lease, error: Exception, unsent_release: Exception | None = None) -> None:
        """Never names the lease again; settles whoever waits on what was not sent: checkpoints
        fail with error, a release succeeds (the message is no longer ours) unless unsent_release says why not."""
        if lease.state == "gone":
            return
        lease.state = "gone"
        lease.end_error = error
        self._leases.pop(lease.handle, None)
        if lease.checkpoint is not None:
            _settle(lease.checkpoint.waiters, error)
        if lease.release is not None:
            _settle(lease.release.waiters, unsent_release)
        lease.checkpoint = lease.release = None
        self._cv.notify_all()

    def _on_stream_end(self, failure: Exception | None) -> None:
        self._stream = None
        self._requeue_in_flight()
        if isinstance(failure, HoldshelfError) and failure.reason == "QUEUE_NOT_FOUND":
            for lease in list(self._leases.values()):
                self._lose(lease, "QUEUE_NOT_FOUND")
        now = time.monotonic()
        for lease in list(self._leases.values()):
            if lease.expires_at <= now:
                self._lose(lease, "LEASE_EXPIRED")
        if failure is None:
            return
        self._errors.append(failure)
        if not self._closing or self._has_pending():
            self._schedule_reopen()

    def _schedule_reopen(self) -> None:
        if not self._closed:
            self._reopen_at = time.monotonic() + backoff_seconds(self._attempt)
            self._attempt += 1

    def _break_stream(self, error: Exception) -> None:
        stream = self._stream
        if stream is None:
            return
        self._on_stream_end(error)
        stream.cancel()

    def _requeue(self, entries: Iterable[_Entry]) -> None:
        """Puts back what did not go out, or was not answered: it goes again, on this stream or the next."""
        for entry in entries:
            lease = entry.lease
            lease.in_flight = False
            if lease.state == "gone":
                if entry.checkpoint is not None:
                    _settle(entry.checkpoint.waiters, lease.end_error or LeaseLostError(lease.handle, "RELEASED"))
                if entry.release is not None:
                    _settle(entry.release.waiters)
                continue
            if lease.state == "held" and entry.checkpoint is None and entry.release is None:
                lease.due = True
            if entry.checkpoint is not None:
                # A newer checkpoint queued meanwhile wins; its answer settles the older one's waiters too.
                newer = lease.checkpoint
                data = entry.checkpoint.data if newer is None else newer.data
                lease.checkpoint = _PendingCheckpoint(data, [*entry.checkpoint.waiters, *(newer.waiters if newer else [])])
            if entry.release is not None:
                newer_release = lease.release
                waiters = [*entry.release.waiters, *(newer_release.waiters if newer_release else [])]
                lease.release = _PendingRelease(entry.release.delay, entry.release.failed, waiters)

    def _requeue_in_flight(self) -> None:
        request, self._in_flight = self._in_flight, None
        if request is None:
            return
        self._requeue(request.entries.values())
        # Acks go again on the next stream: deleting twice is harmless.
        for handle, waiters in request.acks.items():
            self._acks.setdefault(handle, []).extend(waiters)

    def _drop_in_flight(self) -> None:
        request, self._in_flight = self._in_flight, None
        if request is None:
            return
        for entry in request.entries.values():
            entry.lease.in_flight = False
            if entry.checkpoint is not None:
                _settle(entry.checkpoint.waiters, LeaseLostError(entry.lease.handle, "RELEASED"))
            if entry.release is not None:
                _settle(entry.release.waiters, RuntimeError("the Consumer stopped before the broker answered this release"))
        for waiters in request.acks.values():
            _settle(waiters, RuntimeError("the Consumer stopped before the broker answered this ack"))

    def _fail_unsent_acks(self, error: Exception) -> None:
        acks, self._acks = self._acks, {}
        for waiters in acks.values():
            _settle(waiters, error)

    def _has_pending(self) -> bool:
        return self._in_flight is not None or bool(self._acks) or any(
            lease.checkpoint is not None or lease.release is not None for lease in self._leases.values())

    def _flush_errors(self) -> None:
        with self._cv:
            errors, self._errors = self._errors, []
        for error in errors:
            self._on_error(error)
