"""Holds a Consumer's leases on one Heartbeat stream, renewing, checkpointing and releasing them."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field

from holdshelf.backoff import backoff_seconds
from holdshelf.convert import renewal_to_wire
from holdshelf.durations import seconds_of
from holdshelf.errors import HoldshelfError, LeaseLostError
from holdshelf.heartbeat_stream import HeartbeatStream
from holdshelf.values import LeaseRenewal, LeaseState

# Renewals come early by up to this fraction of the interval, so that many
# consumers do not beat in step.
RENEW_JITTER = 0.2
# An unanswered request means a stuck connection after this long (or a
# lease's length, if longer): the stream is then broken and reopened.
MIN_STALL_SECONDS = 5.0
# The protocol's limit of renewals per request; the rest wait for the next.
MAX_RENEWALS = 1000
# A renewal refused for these reasons changed nothing: the lease keeps its
# deadline and its handle still works (LeaseState in queue_service.proto).
REFUSAL_REASONS = frozenset({"INVALID_ARGUMENT", "LEASE_LIMIT_EXCEEDED"})


@dataclass
class _PendingCheckpoint:
    data: bytes
    waiters: list[Future] = field(default_factory=list)


@dataclass
class _PendingRelease:
    # A plain release after delay seconds, or (failed) a failed delivery:
    # back after delay, or after the queue's retry backoff when delay is None.
    delay: float | None
    failed: bool
    waiters: list[Future] = field(default_factory=list)


@dataclass(eq=False)
class _Lease:
    handle: str
    on_lost: Callable[[LeaseLostError], None]
    # held: renewed on schedule; refused: a renewal or an ending was refused, so it is no
    # longer renewed, but its handle works until its deadline (for a release
    # or a delete); releasing: a release waits for its answer; gone: never named again.
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


@dataclass(frozen=True)
class _InFlight:
    entries: list[_Entry]
    sent_at: float


class HeldLease:
    """One leased message as its handler's Consumer handles it."""

    def __init__(self, keeper: LeaseKeeper, lease: _Lease) -> None:
        self._keeper = keeper
        self._lease = lease

    def checkpoint(self, data: bytes) -> Future:
        """Saves progress in a renewal sent at once; the Future resolves once stored, or fails with LeaseLostError."""
        return self._keeper._save_checkpoint(self._lease, data)

    def drop(self) -> None:
        """Stops renewing at once: the message is being deleted."""
        with self._keeper._cv:
            self._keeper._forget(self._lease, RuntimeError("the message was settled before this checkpoint was sent"))

    def release(self, delay: float) -> Future:
        """Stops renewing and makes the message visible after delay seconds; resolves once released
        (or once the lease was lost anyway), fails with LeaseLostError if the broker refused it (the lease
        then stays valid until its deadline) and with RuntimeError if close() came before it was answered
        (ValueError at once for a bad delay)."""
        return self._keeper._release(self._lease, delay, failed=False)

    def fail(self, retry_delay: float | None) -> Future:
        """Stops renewing and ends the lease as a failed delivery: the message comes back after
        retry_delay seconds, or the queue's retry backoff when None; settled as release() is."""
        return self._keeper._release(self._lease, retry_delay, failed=True)


class LeaseKeeper:
    """Holds many leases on ONE Heartbeat stream (release_on_disconnect).

    It renews each lease before it runs out, carries checkpoints and
    releases, tells a lease's holder when it is lost, and reopens a broken
    stream with backoff, renewing there every lease still held. At most one
    request is in flight: the server answers in request order and its
    unsolicited expiry notices are never the exact answer to that request
    (one state per renewal, same handles, same order), which tells them apart.

    One thread owns the timing (renewals, expiries, the stall timeout,
    reopening) and one reader thread per stream applies the responses; both
    work under one condition variable.
    """

    def __init__(self, queue: str, open_stream: Callable[[], HeartbeatStream], *,
                 visibility_timeout: float | None, lease_seconds: float, renew_fraction: float,
                 on_error: Callable[[Exception], None]) -> None:
        self._queue = queue
        self._open_stream = open_stream
        self._visibility_timeout = visibility_timeout  # None: the queue's, applied by the server
        self._lease_seconds = lease_seconds
        self._renew_fraction = renew_fraction
        self._on_error = on_error
        self._stall_seconds = max(MIN_STALL_SECONDS, lease_seconds)
        self._cv = threading.Condition()
        self._leases: dict[str, _Lease] = {}
        self._stream: HeartbeatStream | None = None
        self._in_flight: _InFlight | None = None
        self._reopen_at: float | None = 0.0  # open at once
        self._attempt = 0
        self._closing = False
        self._closed = False
        self._errors: list[Exception] = []  # reported outside the lock, so on_error may call anything
        self._thread = threading.Thread(target=self._run, name="holdshelf-lease-keeper", daemon=True)
        self._thread.start()

    def hold(self, receipt_handle: str, since: float, on_lost: Callable[[LeaseLostError], None]) -> HeldLease:
        """Starts renewing a lease received at `since` (time.monotonic()); on_lost fires if it is lost."""
        lease = _Lease(receipt_handle, on_lost)
        with self._cv:
            self._leases[receipt_handle] = lease
            self._schedule(lease, since)
            # Named on the stream at once, not first at its renewal time:
            # until the server tracks a lease, a crash of this process leaves
            # it hidden until its timeout instead of releasing it at once.
            lease.due = True
            self._pump()
            self._cv.notify_all()
        return HeldLease(self, lease)

    def close(self, timeout: float) -> None:
        """Sends what is pending and waits for the answers, then half-closes the stream
        and waits for the server to end it, all within timeout; then forgets every
        lease. Leases still held are left to run out; releases not answered by then fail."""
        deadline = time.monotonic() + timeout
        with self._cv:
            self._closing = True
            self._cv.notify_all()
            self._cv.wait_for(lambda: not self._has_pending(), max(0.0, deadline - time.monotonic()))
            # Nothing more is sent: a stream that is down stays down.
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
            for lease in list(self._leases.values()):
                # The Consumer released every lease it still held before closing;
                # a release that never went out did not happen, and its caller hears so.
                self._forget(lease, LeaseLostError(lease.handle, "RELEASED"),
                             RuntimeError("the Consumer stopped before this release was sent"))
            self._cv.notify_all()
        self._thread.join()
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
            self._break_stream(TimeoutError(f"no Heartbeat answer within {self._stall_seconds:g} s"))
        for lease in list(self._leases.values()):
            if lease.in_flight:
                continue  # its answer, or the stall timeout, decides
            if lease.expires_at <= now:
                # Without an answer by its deadline (the stream is down, say) a lease is presumed lost.
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

    def _open(self) -> None:
        self._reopen_at = None
        try:
            stream = self._open_stream()
        except Exception as error:  # a closed channel refuses here
            self._errors.append(error)
            self._schedule_reopen()
            return
        self._stream = stream
        # A broken stream made the server release every lease it tracked (or,
        # after a broker restart, left them): a renewal on the new stream takes
        # each back, unless someone received the message meanwhile
        # (then its answer says LEASE_SUPERSEDED).
        for lease in self._leases.values():
            if lease.state == "held":
                lease.due = True
        threading.Thread(target=self._read, args=(stream,), name="holdshelf-heartbeat-reader", daemon=True).start()
        # Sent even when empty: the first request carries release_on_disconnect,
        # and its answer proves the stream works.
        self._pump(even_if_empty=True)

    def _read(self, stream: HeartbeatStream) -> None:
        failure: Exception | None = None
        try:
            for states in stream:
                with self._cv:
                    if stream is not self._stream:
                        return
                    self._on_response(states)
                    self._cv.notify_all()
        except Exception as error:
            failure = error
        with self._cv:
            if failure is None and not self._closing:
                failure = ConnectionError("the server ended the Heartbeat stream")
            if stream is self._stream:
                self._on_stream_end(failure)
            self._cv.notify_all()
        self._flush_errors()

    def _pump(self, even_if_empty: bool = False) -> None:
        """Sends one request with every renewal, checkpoint and release due, unless one is in flight.

        Each entry is encoded before anything is sent or marked in flight. One
        that cannot be encoded is left out and its waiters fail with the error:
        kept queued, it would fail every later request, and raised, it would
        end whichever thread pumped (the timing thread, a stream's reader).
        """
        stream = self._stream
        if stream is None or self._in_flight is not None:
            return
        entries: list[_Entry] = []
        renewals: list[LeaseRenewal] = []
        for lease in list(self._leases.values()):
            if len(entries) == MAX_RENEWALS:
                break
            if not lease.due and lease.checkpoint is None and lease.release is None:
                continue
            entry = self._encodable_entry(lease)
            if entry is not None:
                entries.append(entry)
                renewals.append(self._renewal(entry))
        if not entries and not even_if_empty:
            return
        try:
            stream.send(self._queue, renewals, release_on_disconnect=True)
        except Exception as error:  # nothing went out: the stream is reopened with backoff, the entries still queued
            self._break_stream(error)
            return
        # The reader cannot see the answer before _in_flight is set: it waits for the lock held here.
        for entry in entries:
            lease = entry.lease
            lease.due, lease.checkpoint, lease.release, lease.in_flight = False, None, None, True
        self._in_flight = _InFlight(entries, time.monotonic())

    def _encodable_entry(self, lease: _Lease) -> _Entry | None:
        """What the lease has to send, without a checkpoint or release that cannot be encoded (their
        waiters fail with the error); None if nothing is left, the lease lost if not even its renewal can be."""
        entry = _Entry(lease, lease.checkpoint, lease.release)
        try:
            renewal_to_wire(self._renewal(entry))
            return entry
        except Exception as error:
            unsendable = error
        waiters = [*(entry.checkpoint.waiters if entry.checkpoint else []), *(entry.release.waiters if entry.release else [])]
        lease.checkpoint = lease.release = None
        _settle(waiters, unsendable)
        plain = _Entry(lease, None, None)
        try:
            renewal_to_wire(self._renewal(plain))
        except Exception:
            # Not even a renewal can name it (a handle that is not UTF-8, say): it cannot be kept.
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

    def _on_response(self, states: list[LeaseState]) -> None:
        request = self._in_flight
        if request is not None and [s.receipt_handle for s in states] == [e.lease.handle for e in request.entries]:
            self._in_flight = None
            self._attempt = 0
            for entry, state in zip(request.entries, states):
                self._apply_answer(entry, state, request.sent_at)
        else:
            for state in states:
                lease = self._leases.get(state.receipt_handle)
                # A lease in flight is decided by its answer: the renewal may
                # have taken it back after the notice was sent.
                if not state.held and lease is not None and not lease.in_flight:
                    self._lose(lease, state.reason)
        self._pump()

    def _apply_answer(self, entry: _Entry, state: LeaseState, sent_at: float) -> None:
        lease = entry.lease
        lease.in_flight = False
        stored = state.held or (entry.release is not None and state.reason == "RELEASED")
        if entry.checkpoint is not None:
            _settle(entry.checkpoint.waiters, None if stored else LeaseLostError(lease.handle, state.reason))
        if entry.release is not None:
            if not state.held and state.reason in REFUSAL_REASONS and lease.state != "gone":
                # Refused (a retry delay over 12 h, say): nothing changed, and the
                # handle works until the lease's deadline, so the lease stays until
                # then, unrenewed. Its caller hears of the refusal, and an ending
                # asked for since (stop's release) goes in the next request.
                error = LeaseLostError(lease.handle, state.reason)
                self._mark_refused(lease, error)
                _settle(entry.release.waiters, error)
                return
            # Released, or lost already: either way the message is no longer
            # ours. A loss is not the ending's failure: the holder heard of it.
            self._forget(lease, LeaseLostError(lease.handle, state.reason or "RELEASED"))
            _settle(entry.release.waiters)
            return
        if lease.state == "gone":
            return
        if state.held:
            if lease.state == "held":
                self._schedule(lease, sent_at)
        elif state.reason in REFUSAL_REASONS:
            self._refuse(lease, state.reason)
        else:
            self._lose(lease, state.reason)

    def _schedule(self, lease: _Lease, since: float) -> None:
        """Times a lease's renewal and expiry from when its receive or last renewal was sent."""
        interval = self._lease_seconds * self._renew_fraction
        lease.renew_at = since + interval * (1 - RENEW_JITTER * random.random())
        lease.expires_at = since + self._lease_seconds

    def _save_checkpoint(self, lease: _Lease, data: bytes) -> Future:
        answer: Future = Future()
        with self._cv:
            if lease.state != "held":
                answer.set_exception(lease.end_error or LeaseLostError(lease.handle, "RELEASED"))
                return answer
            # The newest checkpoint replaces one not sent yet; its answer settles both.
            waiters = [] if lease.checkpoint is None else lease.checkpoint.waiters
            lease.checkpoint = _PendingCheckpoint(bytes(data), [*waiters, answer])
            self._pump()
            self._cv.notify_all()
        return answer

    def _release(self, lease: _Lease, delay: float | None, *, failed: bool) -> Future:
        if delay is not None:
            # Refused before it is queued: a delay no request can carry would
            # otherwise fail every later request of the stream.
            delay = seconds_of(delay)
        answer: Future = Future()
        with self._cv:
            if lease.state == "gone":
                answer.set_result(None)
                return answer
            previous = lease.release
            # The first ending asked for wins: later callers wait for its answer if
            # it has not gone out yet, else are queued, sent only if it is refused.
            if previous is None:
                lease.release = _PendingRelease(delay, failed, [answer])
            else:
                previous.waiters.append(answer)
            if lease.state in ("held", "refused"):
                # Renewals stop now; the expiry stays, so that a release the
                # server never hears of still ends when the lease would.
                lease.state = "releasing"
                lease.due = False
            self._pump()
            self._cv.notify_all()
        return answer

    def _refuse(self, lease: _Lease, reason: str) -> None:
        """A renewal was refused: the lease cannot be kept, so its holder hears it is lost,
        but it keeps its deadline and its handle still works. It stays until then,
        unrenewed, so that the holder's release or delete still reaches it: a Consumer
        frees its slot only once the message is settled, and never holds more leases
        than it has slots."""
        if lease.state != "held":
            return
        error = LeaseLostError(lease.handle, reason)
        self._mark_refused(lease, error)
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
            lease.on_lost(error)

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

    def _requeue_in_flight(self) -> None:
        """Puts back what an unanswered request carried: it goes again on the next stream."""
        for entry in self._take_in_flight():
            lease = entry.lease
            if lease.state == "gone":
                if entry.checkpoint is not None:
                    _settle(entry.checkpoint.waiters, lease.end_error or LeaseLostError(lease.handle, "RELEASED"))
                if entry.release is not None:
                    _settle(entry.release.waiters)
                continue
            if entry.checkpoint is not None:
                # A newer checkpoint queued meanwhile wins; its answer settles the older one's waiters too.
                newer = lease.checkpoint
                data = entry.checkpoint.data if newer is None else newer.data
                lease.checkpoint = _PendingCheckpoint(data, [*entry.checkpoint.waiters, *(newer.waiters if newer else [])])
            if entry.release is not None:
                newer_release = lease.release
                waiters = [*entry.release.waiters, *(newer_release.waiters if newer_release else [])]
                lease.release = _PendingRelease(entry.release.delay, entry.release.failed, waiters)

    def _drop_in_flight(self) -> None:
        for entry in self._take_in_flight():
            if entry.checkpoint is not None:
                # Unanswered at close: the Consumer released every lease it still held.
                _settle(entry.checkpoint.waiters, LeaseLostError(entry.lease.handle, "RELEASED"))
            if entry.release is not None:
                _settle(entry.release.waiters, RuntimeError("the Consumer stopped before the broker answered this release"))

    def _take_in_flight(self) -> list[_Entry]:
        """Takes the unanswered request out of flight (its answer will not come) and returns its entries."""
        request, self._in_flight = self._in_flight, None
        if request is None:
            return []
        for entry in request.entries:
            entry.lease.in_flight = False
        return request.entries

    def _has_pending(self) -> bool:
        return self._in_flight is not None or any(
            lease.checkpoint is not None or lease.release is not None for lease in self._leases.values())

    def _flush_errors(self) -> None:
        with self._cv:
            errors, self._errors = self._errors, []
        for error in errors:
            self._on_error(error)


def _settle(waiters: list[Future], error: Exception | None = None) -> None:
    for waiter in waiters:
        if waiter.done():
            continue
        if error is None:
            waiter.set_result(None)
        else:
            waiter.set_exception(error)
