"""Holds a Consumer's leases on one Heartbeat stream, renewing, checkpointing and releasing them."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future

from holdshelf.errors import LeaseLostError
from holdshelf.heartbeat_stream import HeartbeatStream
from holdshelf.lease_record import LeaseRecord
from holdshelf.lease_stream_keeper import LeaseStreamKeeper, RequestInFlight
from holdshelf.values import LeaseState


class HeldLease:
    """One leased message as its handler's Consumer handles it."""

    def __init__(self, keeper: LeaseKeeper, lease: LeaseRecord) -> None:
        self._keeper = keeper
        self._lease = lease

    def checkpoint(self, data: bytes) -> Future[None]:
        """Saves progress in a renewal sent at once; the Future resolves once stored, or fails with LeaseLostError."""
        return self._keeper._save_checkpoint(self._lease, data)

    def drop(self) -> None:
        """Stops renewing at once: the message is being deleted."""
        with self._keeper._cv:
            self._keeper._forget(self._lease, RuntimeError("the message was settled before this checkpoint was sent"))

    def release(self, delay: float) -> Future[None]:
        """Stops renewing and makes the message visible after delay seconds; resolves once released
        (or once the lease was lost anyway), fails with LeaseLostError if the broker refused it (the lease
        then stays valid until its deadline) and with RuntimeError if close() came before it was answered
        (ValueError at once for a bad delay)."""
        return self._keeper._release(self._lease, delay, failed=False)

    def fail(self, retry_delay: float | None) -> Future[None]:
        """Stops renewing and ends the lease as a failed delivery: the message comes back after
        retry_delay seconds, or the queue's retry backoff when None; settled as release() is."""
        return self._keeper._release(self._lease, retry_delay, failed=True)


class LeaseKeeper(LeaseStreamKeeper[HeartbeatStream]):
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

    _RPC = "Heartbeat"

    def __init__(self, queue: str, open_stream: Callable[[], HeartbeatStream], *,
                 visibility_timeout: float | None, lease_seconds: float, renew_fraction: float,
                 on_error: Callable[[Exception], object]) -> None:
        super().__init__(queue, open_stream, visibility_timeout=visibility_timeout, lease_seconds=lease_seconds,
                         renew_fraction=renew_fraction, on_error=on_error, thread_name="holdshelf-lease-keeper")
        self._thread.start()

    def hold(self, receipt_handle: str, since: float, on_lost: Callable[[LeaseLostError], None]) -> HeldLease:
        """Starts renewing a lease received at `since` (time.monotonic()); on_lost fires if it is lost."""
        lease = LeaseRecord(receipt_handle, on_lost)
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

    def _start(self, stream: HeartbeatStream) -> None:
        self._stream = stream
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
        """Sends one request with every renewal, checkpoint and release due, unless one is in flight."""
        stream = self._stream
        if stream is None or self._in_flight is not None:
            return
        entries = self._take_entries()
        if not entries and not even_if_empty:
            return
        try:
            stream.send(self._queue, [self._renewal(e) for e in entries.values()], release_on_disconnect=True)
        except Exception as error:  # nothing went out: the stream is reopened with backoff, the entries queued again
            self._requeue(entries.values())
            self._break_stream(error)
            return
        # The reader cannot see the answer before it is in flight: it waits for the lock held here.
        self._mark_sent(RequestInFlight(entries))

    def _on_response(self, states: list[LeaseState]) -> None:
        request = self._in_flight
        if request is not None and [s.receipt_handle for s in states] == list(request.entries):
            self._in_flight = None
            self._attempt = 0
            for entry, state in zip(request.entries.values(), states):
                self._apply_state(entry, state, request.sent_at)
        else:
            for state in states:
                lease = self._leases.get(state.receipt_handle)
                # A lease in flight is decided by its answer: the renewal may
                # have taken it back after the notice was sent.
                if not state.held and lease is not None and not lease.in_flight:
                    self._lose(lease, state.reason)
        self._pump()
