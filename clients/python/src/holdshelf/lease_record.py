"""The bookkeeping of one held lease: its state, what it has to send, and who waits for the answers."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field

from holdshelf.errors import LeaseLostError


@dataclass
class PendingCheckpoint:
    """A checkpoint not answered yet, and the callers waiting for it to be stored."""

    data: bytes
    waiters: list[Future[None]] = field(default_factory=list)


@dataclass
class PendingRelease:
    """An ending not answered yet: a plain release after delay seconds, or (failed) a failed
    delivery, back after delay, or after the queue's retry backoff when delay is None."""

    delay: float | None
    failed: bool
    waiters: list[Future[None]] = field(default_factory=list)


@dataclass(eq=False)
class LeaseRecord:
    """One lease a keeper holds on its stream."""

    handle: str
    # Told when the lease is lost; a loss before it is set is kept in `lost`, for a late watcher.
    on_lost: Callable[[LeaseLostError], None] | None = None
    lost: LeaseLostError | None = None
    # held: renewed on schedule; refused: a renewal or an ending was refused, so it is no
    # longer renewed, but its handle works until its deadline (for a release
    # or a delete); ending: an ending (a release, a failure, an ack) is queued
    # or waits for its answer; gone: never named again.
    state: str = "held"
    end_error: Exception | None = None
    due: bool = False  # a renewal belongs in the next request
    in_flight: bool = False  # named by the request in flight, whose answer decides its fate
    renew_at: float = 0.0
    expires_at: float = 0.0
    checkpoint: PendingCheckpoint | None = None
    release: PendingRelease | None = None


@dataclass(frozen=True)
class LeaseEntry:
    """What one request carries for a lease: a renewal, with its checkpoint or ending if any."""

    lease: LeaseRecord
    checkpoint: PendingCheckpoint | None
    release: PendingRelease | None


def settle(waiters: list[Future[None]], error: Exception | None = None) -> None:
    """Resolves each waiter not done yet: with None, or failed with error."""
    for waiter in waiters:
        if waiter.done():
            continue
        if error is None:
            waiter.set_result(None)
        else:
            waiter.set_exception(error)
