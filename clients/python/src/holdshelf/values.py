"""The values the Client takes and returns: plain dataclasses, not protobufs.

Durations are float seconds, times are aware datetimes in UTC. In a
QueueConfig given to create_queue or update_queue, None means "unset: the
broker's default"; the configs the broker returns have every default filled
in (redrive_policy and retry_policy are None when the queue has none).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from holdshelf.durations import Seconds


@dataclass(frozen=True)
class RedrivePolicy:
    """Moves a message to dead_letter_queue once it was received max_receive_count times."""

    dead_letter_queue: str
    max_receive_count: int


@dataclass(frozen=True)
class RetryPolicy:
    """A failed message waits min(max_backoff, min_backoff * 2^(receive_count - 1)) before its retry."""

    min_backoff: float = 0.0
    max_backoff: float = 0.0


@dataclass(frozen=True)
class QueueConfig:
    """A queue's configuration; see proto/holdshelf/v1/queue.proto for bounds and defaults."""

    visibility_timeout: Seconds | None = None
    delay: Seconds | None = None
    retention: Seconds | None = None
    max_message_bytes: int | None = None
    receive_wait_time: Seconds | None = None
    max_in_flight: int | None = None
    max_lease_duration: Seconds | None = None
    redrive_policy: RedrivePolicy | None = None
    retry_policy: RetryPolicy | None = None


@dataclass(frozen=True)
class QueueStats:
    """Message counts, exact at the time of the call."""

    visible: int
    in_flight: int
    delayed: int
    oldest_message_age: float | None


@dataclass(frozen=True)
class Queue:
    """A queue with its configuration (defaults filled in) and counts."""

    name: str
    config: QueueConfig
    stats: QueueStats
    create_time: datetime
    dead_letter_source_queues: tuple[str, ...]


@dataclass(frozen=True)
class QueuePage:
    """One page of list_queues; pass next_page_token back for the next ("" on the last)."""

    queues: tuple[Queue, ...]
    next_page_token: str


@dataclass(frozen=True)
class ReceivedMessage:
    """One delivery of a message; its receipt_handle names this delivery's lease."""

    message_id: str
    receipt_handle: str
    body: bytes
    attributes: dict[str, str]
    receive_count: int
    send_time: datetime
    first_receive_time: datetime
    lease_deadline: datetime
    checkpoint: bytes | None
    dead_letter_source_queue: str
    dead_letter_reason: str


@dataclass(frozen=True)
class SendBatchEntry:
    """One message of send_batch; delay None means the queue's."""

    body: bytes | str
    attributes: dict[str, str] = field(default_factory=dict)
    delay: Seconds | None = None


@dataclass(frozen=True)
class EntryResult:
    """The outcome of one receipt handle of a batch; error is None on success."""

    receipt_handle: str
    error: EntryError | None
    lease_deadline: datetime | None = None


@dataclass(frozen=True)
class EntryError:
    """Why one entry of a batch failed: its numeric gRPC code, stable reason and message."""

    code: int
    reason: str
    message: str


@dataclass(frozen=True)
class LeaseRenewal:
    """One renewal on a Heartbeat stream: visibility_timeout None means the queue's, 0 releases.

    With failed=True it ends the lease as a failed delivery instead: the
    message comes back after visibility_timeout if set, else after the
    queue's retry backoff (the dead-letter queue once its receives are spent).
    """

    receipt_handle: str
    visibility_timeout: Seconds | None = None
    checkpoint: bytes | None = None
    failed: bool = False


@dataclass(frozen=True)
class LeaseState:
    """Whether a lease is held, as a Heartbeat answer or expiry notice says; reason is "" when held."""

    receipt_handle: str
    held: bool
    lease_deadline: datetime | None
    reason: str
