"""What every keeper of leases on one stream shares: timing, endings, losses and reconnects."""

from __future__ import annotations

import random
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

from holdshelf.backoff import backoff_seconds
from holdshelf.convert import renewal_to_wire
from holdshelf.durations import seconds_of
from holdshelf.errors import HoldshelfError, LeaseLostError
from holdshelf.lease_record import LeaseEntry, LeaseRecord, PendingCheckpoint, PendingRelease, settle
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

Stream = TypeVar("Stream", bound="CancellableStream")


class CancellableStream(Protocol):
    """The part of a bidirectional stream the shared keeping uses."""

    def half_close(self) -> None:
        """Sends no more requests."""

    def cancel(self) -> None:
        """Ends the call at once."""


@dataclass
class RequestInFlight:
    """The one request sent and not answered yet."""

    # By receipt handle, in the order sent: a lease is named at most once per request.
    entries: dict[str, LeaseEntry]
    sent_at: float = field(default_factory=time.monotonic)


class LeaseStreamKeeper(ABC, Generic[Stream]):
    """Holds many leases on ONE stream (release_on_disconnect), which a subclass opens and speaks.

    It renews each lease before it runs out, carries checkpoints and
    endings, tells a lease's holder when it is lost, and reopens a broken
    stream with backoff, renewing there every lease still held. At most one
    request is in flight; what comes meanwhile goes in the next.

    One thread owns the timing (renewals, expiries, the stall timeout,
    reopening) and one reader thread per stream, which the subclass starts,
    applies the responses; both work under one condition variable.
    Subclasses provide _start (send the first request on a new stream and
    start its reader) and _pump (send what is pending), and start
    self._thread once they are set up.
    """

    # The RPC's name, for errors; set by each subclass.
    _RPC: str

    def __init__(self, queue: str, open_stream: Callable[[], Stream], *, visibility_timeout: float | None,
                 lease_seconds: float, renew_fraction: float, on_error: Callable[[Exception], object],
                 thread_name: str) -> None:
        self._queue = queue
        self._open_stream = open_stream
        self._visibility_timeout = visibility_timeout  # None: the queue's, applied by the server
        self._lease_seconds = lease_seconds
        self._renew_fraction = renew_fraction
        self._on_error = on_error
        self._stall_seconds = max(MIN_STALL_SECONDS, lease_seconds)
        self._cv = threading.Condition()
        self._leases: dict[str, LeaseRecord] = {}
        self._stream: Stream | None = None
        self._in_flight: RequestInFlight | None = None
        self._reopen_at: float | None = 0.0  # open at once
        self._attempt = 0
        self._closing = False
        self._closed = False
        self._errors: list[Exception] = []  # reported outside the lock, so on_error may call anything
        self._thread = threading.Thread(target=self._run, name=thread_name, daemon=True)

    def close(self, timeout: float) -> None:
        """Sends what is pending and waits for the answers, then half-closes the stream
        and waits for the server to end it, all within timeout; then forgets every
        lease. Leases still held are left to run out; endings not answered by then fail."""
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
            self._drop_unsent()
            self._cv.notify_all()
        self._thread.join()
        self._flush_errors()

    @abstractmethod
    def _start(self, stream: Stream) -> None:
        """Sends the first request on a new stream (every lease still held is due) and starts its reader."""

    @abstractmethod
    def _pump(self) -> None:
        """Sends one request with what is pending, unless one is in flight."""

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
            self._break_stream(TimeoutError(f"no {self._RPC} answer within {self._stall_seconds:g} s"))
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
        # A broken stream made the server release every lease it tracked (or,
        # after a broker restart, left them): a renewal on the new stream takes
        # each back, unless someone received the message meanwhile
        # (then its answer says LEASE_SUPERSEDED).
        for lease in self._leases.values():
            if lease.state == "held":
                lease.due = True
        self._start(stream)

    def _take_entries(self) -> dict[str, LeaseEntry]:
        """Takes what each lease has to send (at most MAX_RENEWALS), leaving out what cannot be encoded.

        Each entry is encoded before anything is sent or marked in flight. One
        that cannot be encoded is left out and its waiters fail with the error:
        kept queued, it would fail every later request, and raised, it would
        end whichever thread pumped (the timing thread, a stream's reader).
        """
        entries: dict[str, LeaseEntry] = {}
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

    def _mark_sent(self, request: RequestInFlight) -> None:
        """Puts a request that went out in flight; its answer decides the fate of the leases it names."""
        for entry in request.entries.values():
            entry.lease.in_flight = True
        self._in_flight = request

    def _encodable_entry(self, lease: LeaseRecord) -> LeaseEntry | None:
        """What the lease has to send, without a checkpoint or release that cannot be encoded (their
        waiters fail with the error); None if nothing is left, the lease lost if not even its renewal can be."""
        entry = LeaseEntry(lease, lease.checkpoint, lease.release)
        try:
            renewal_to_wire(self._renewal(entry))
            return entry
        except Exception as error:
            unsendable = error
        waiters = [*(entry.checkpoint.waiters if entry.checkpoint else []),
                   *(entry.release.waiters if entry.release else [])]
        lease.checkpoint = lease.release = None
        settle(waiters, unsendable)
        plain = LeaseEntry(lease, None, None)
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

    def _renewal(self, entry: LeaseEntry) -> LeaseRenewal:
        checkpoint = None if entry.checkpoint is None else entry.checkpoint.data
        if entry.release is None:
            return LeaseRenewal(entry.lease.handle, self._visibility_timeout, checkpoint)
        return LeaseRenewal(entry.lease.handle, entry.release.delay, checkpoint, entry.release.failed)

    def _apply_state(self, entry: LeaseEntry, state: LeaseState, sent_at: float) -> None:
        """Applies the answer to one lease's entry of the request in flight."""
        lease = entry.lease
        lease.in_flight = False
        stored = state.held or (entry.release is not None and state.reason == "RELEASED")
        if entry.checkpoint is not None:
            settle(entry.checkpoint.waiters, None if stored else LeaseLostError(lease.handle, state.reason))
        if entry.release is not None:
            if not state.held and state.reason in REFUSAL_REASONS and lease.state != "gone":
                # Refused (a retry delay over 12 h, say): nothing changed, and the
                # handle works until the lease's deadline, so the lease stays until
                # then, unrenewed. Its caller hears of the refusal, and an ending
                # asked for since (stop's release) goes in the next request.
                error = LeaseLostError(lease.handle, state.reason)
                self._mark_refused(lease, error)
                settle(entry.release.waiters, error)
                return
            # Released, or lost already: either way the message is no longer
            # ours. A loss is not the ending's failure: the holder heard of it.
            self._forget(lease, LeaseLostError(lease.handle, state.reason or "RELEASED"))
            settle(entry.release.waiters)
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

    def _schedule(self, lease: LeaseRecord, since: float) -> None:
        """Times a lease's renewal and expiry from when its receive, delivery or last renewal was sent."""
        interval = self._lease_seconds * self._renew_fraction
        lease.renew_at = since + interval * (1 - RENEW_JITTER * random.random())
        lease.expires_at = since + self._lease_seconds

    def _save_checkpoint(self, lease: LeaseRecord, data: bytes) -> Future[None]:
        answer: Future[None] = Future()
        with self._cv:
            if lease.state != "held":
                answer.set_exception(lease.end_error or LeaseLostError(lease.handle, "RELEASED"))
                return answer
            # The newest checkpoint replaces one not sent yet; its answer settles both.
            waiters = [] if lease.checkpoint is None else lease.checkpoint.waiters
            lease.checkpoint = PendingCheckpoint(bytes(data), [*waiters, answer])
            self._pump()
            self._cv.notify_all()
        return answer

    def _release(self, lease: LeaseRecord, delay: float | None, *, failed: bool) -> Future[None]:
        if delay is not None:
            # Refused before it is queued: a delay no request can carry would
            # otherwise fail every later request of the stream.
            delay = seconds_of(delay)
        answer: Future[None] = Future()
        with self._cv:
            if lease.state == "gone":
                answer.set_result(None)
                return answer
            previous = lease.release
            # The first ending asked for wins: later callers wait for its answer if
            # it has not gone out yet, else are queued, sent only if it is refused.
            if previous is None:
                lease.release = PendingRelease(delay, failed, [answer])
            else:
                previous.waiters.append(answer)
            self._stop_renewing(lease)
            self._pump()
            self._cv.notify_all()
        return answer

    def _stop_renewing(self, lease: LeaseRecord) -> None:
        """An ending is asked for: renewals stop now, but the expiry stays, so that
        an ending the server never hears of still ends when the lease would."""
        if lease.state in ("held", "refused"):
            lease.state = "ending"
            lease.due = False

    def _refuse(self, lease: LeaseRecord, reason: str) -> None:
        """A renewal was refused: the lease cannot be kept, so its holder hears it is lost,
        but it keeps its deadline and its handle still works. It stays until then,
        unrenewed, so that the holder's release or delete still reaches it: a Consumer
        frees its slot only once the message is settled, and never holds more leases
        than it has slots."""
        if lease.state != "held":
            return
        error = LeaseLostError(lease.handle, reason)
        self._mark_refused(lease, error)
        self._tell_lost(lease, error)

    def _mark_refused(self, lease: LeaseRecord, error: LeaseLostError) -> None:
        """Stops renewing a lease whose handle works until its deadline; a checkpoint not sent yet fails."""
        lease.state = "refused"
        lease.end_error = error
        lease.due = False
        if lease.checkpoint is not None:
            settle(lease.checkpoint.waiters, error)
            lease.checkpoint = None

    def _lose(self, lease: LeaseRecord, reason: str) -> None:
        if lease.state == "gone":
            return
        error = LeaseLostError(lease.handle, reason)
        was_held = lease.state == "held"
        self._forget(lease, error)
        if was_held:
            self._tell_lost(lease, error)

    def _tell_lost(self, lease: LeaseRecord, error: LeaseLostError) -> None:
        if lease.lost is None:
            lease.lost = error
        if lease.on_lost is not None:
            lease.on_lost(error)

    def _forget(self, lease: LeaseRecord, error: Exception, unsent_release: Exception | None = None) -> None:
        """Never names the lease again; settles whoever waits on what was not sent: checkpoints
        fail with error, a release succeeds (the message is no longer ours) unless unsent_release says why not."""
        if lease.state == "gone":
            return
        lease.state = "gone"
        lease.end_error = error
        self._leases.pop(lease.handle, None)
        if lease.checkpoint is not None:
            settle(lease.checkpoint.waiters, error)
        if lease.release is not None:
            settle(lease.release.waiters, unsent_release)
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

    def _requeue(self, entries: Iterable[LeaseEntry]) -> None:
        """Puts back what did not go out, or was not answered: it goes again, on this stream or the next."""
        for entry in entries:
            lease = entry.lease
            lease.in_flight = False
            if lease.state == "gone":
                if entry.checkpoint is not None:
                    settle(entry.checkpoint.waiters, lease.end_error or LeaseLostError(lease.handle, "RELEASED"))
                if entry.release is not None:
                    settle(entry.release.waiters)
                continue
            if lease.state == "held" and entry.checkpoint is None and entry.release is None:
                lease.due = True
            if entry.checkpoint is not None:
                # A newer checkpoint queued meanwhile wins; its answer settles the older one's waiters too.
                newer = lease.checkpoint
                data = entry.checkpoint.data if newer is None else newer.data
                lease.checkpoint = PendingCheckpoint(data, [*entry.checkpoint.waiters, *(newer.waiters if newer else [])])
            if entry.release is not None:
                newer_release = lease.release
                waiters = [*entry.release.waiters, *(newer_release.waiters if newer_release else [])]
                lease.release = PendingRelease(entry.release.delay, entry.release.failed, waiters)

    def _requeue_in_flight(self) -> None:
        """Puts back what an unanswered request carried: it goes again on the next stream."""
        request, self._in_flight = self._in_flight, None
        if request is not None:
            self._requeue(request.entries.values())

    def _drop_in_flight(self) -> None:
        """Settles the waiters of the request in flight at close, whose answer will not come."""
        request, self._in_flight = self._in_flight, None
        if request is None:
            return
        for entry in request.entries.values():
            entry.lease.in_flight = False
            if entry.checkpoint is not None:
                # Unanswered at close: the Consumer released every lease it still held.
                settle(entry.checkpoint.waiters, LeaseLostError(entry.lease.handle, "RELEASED"))
            if entry.release is not None:
                settle(entry.release.waiters, RuntimeError("the Consumer stopped before the broker answered this release"))

    def _drop_unsent(self) -> None:
        """Forgets every lease at close, failing what never went out."""
        for lease in list(self._leases.values()):
            # The Consumer released every lease it still held before closing;
            # a release that never went out did not happen, and its caller hears so.
            self._forget(lease, LeaseLostError(lease.handle, "RELEASED"),
                         RuntimeError("the Consumer stopped before this release was sent"))

    def _has_pending(self) -> bool:
        return self._in_flight is not None or any(
            lease.checkpoint is not None or lease.release is not None for lease in self._leases.values())

    def _flush_errors(self) -> None:
        with self._cv:
            errors, self._errors = self._errors, []
        for error in errors:
            self._on_error(error)
