"""The values the Client takes and returns: plain dataclasses, not protobufs.

Durations are float seconds, times are aware datetimes in UTC. In a
QueueConfig given to create_queue or update_queue, None means "unset: the
broker's default"; the configs the broker returns have every default filled
in (redrive_policy, retry_policy, access_policy and sqs_encryption are None
and tags empty when the queue has none).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Literal

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
class SqsEncryption:
    """Amazon SQS's server-side encryption settings of a queue, kept and shown; the broker encrypts nothing with them.

    kms_master_key_id is SQS's KmsMasterKeyId ("" for none);
    kms_data_key_reuse_period its KmsDataKeyReusePeriodSeconds (60 to 86400
    whole seconds; None means 300, which a queue read back shows);
    sqs_managed_sse_enabled its SqsManagedSseEnabled, refused beside a KMS
    key (INVALID_ARGUMENT on config.sqs_encryption).
    """

    kms_master_key_id: str = ""
    kms_data_key_reuse_period: Seconds | None = None
    sqs_managed_sse_enabled: bool = False


DeduplicationScope = Literal["queue", "message_group"]
"""Where a FIFO queue compares deduplication ids: the whole queue, or each message group."""

DeleteOutcome = Literal["DELETED", "ALREADY_DELETED", "DEAD_LETTERED", "RECEIVED_AGAIN", "NO_LONGER_HELD",
                        "UNSPECIFIED"]
"""What a delete did, as the proto's DeleteOutcome names it.

DELETED now; ALREADY_DELETED by this same delivery (a repeat); the lease lost
before the delete, the message DEAD_LETTERED or RECEIVED_AGAIN by someone else
(its work may be done again); NO_LONGER_HELD, gone some way the broker no
longer knows (a purge, retention, a discard or move by an operator, a restart
since); UNSPECIFIED from a broker before 0.2.0, whose deletes answered alike
whatever happened.
"""


@dataclass(frozen=True)
class QueueConfig:
    """A queue's configuration; see proto/holdshelf/v1/queue.proto for bounds and defaults.

    fifo makes a FIFO queue (docs/fifo.md): every send names a
    message_group_id, and each group's messages are delivered one lease at a
    time, in send order. It is set at creation only: update_queue without
    fields must repeat it. content_based_deduplication and
    deduplication_scope (None: "queue") are for FIFO queues only; a standard
    queue read back has scope None.

    tags label the queue (Amazon SQS's queue tags): at most 50, keys 1 to
    128 characters, values up to 256; the broker keeps them but never reads
    them. access_policy is Amazon SQS's queue policy, a JSON object of at
    most 8192 bytes kept and shown as given but never enforced; None means
    none. sqs_encryption None means SQS-managed encryption. update_queue
    without fields replaces them with the rest: a config read with get_queue
    and changed with dataclasses.replace keeps them.
    """

    visibility_timeout: Seconds | None = None
    delay: Seconds | None = None
    retention: Seconds | None = None
    max_message_bytes: int | None = None
    receive_wait_time: Seconds | None = None
    max_in_flight: int | None = None
    max_lease_duration: Seconds | None = None
    redrive_policy: RedrivePolicy | None = None
    retry_policy: RetryPolicy | None = None
    fifo: bool = False
    content_based_deduplication: bool = False
    deduplication_scope: DeduplicationScope | None = None
    tags: dict[str, str] = field(default_factory=dict)
    access_policy: str | None = None
    sqs_encryption: SqsEncryption | None = None


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
class TypedAttribute:
    """A typed message attribute, as Amazon SQS types them (the SQS endpoint's MessageAttributes).

    data_type is "String", "Number" or "Binary", optionally followed by "."
    and a custom label ("Number.int", "Binary.gzip"); value is text (str) for
    String and Number types and bytes for Binary ones. The broker checks
    both (INVALID_ARGUMENT on typed_attributes["<name>"]...) and returns
    them exactly as sent; it never parses a Number. The SQS endpoint keeps
    an attribute typed exactly "String" in `attributes`, and the rest here.
    """

    data_type: str
    value: str | bytes

    @classmethod
    def number(cls, value: int | float | Decimal | str, label: str = "") -> TypedAttribute:
        """A Number ("Number.<label>" with a label); its text is str(value)."""
        return cls(_typed("Number", label), str(value))

    @classmethod
    def binary(cls, value: bytes, label: str = "") -> TypedAttribute:
        """A Binary ("Binary.<label>" with a label)."""
        return cls(_typed("Binary", label), bytes(value))

    @classmethod
    def string(cls, value: str, label: str) -> TypedAttribute:
        """A String with a custom label ("String.<label>"); a plain String goes in `attributes`."""
        return cls(_typed("String", label), value)


def _typed(base: str, label: str) -> str:
    return f"{base}.{label}" if label else base


@dataclass(frozen=True)
class ReceivedMessage:
    """One delivery of a message; its receipt_handle names this delivery's lease.

    On a FIFO queue, message_group_id is the group as sent, sequence_number
    the number send returned (a dead-letter move or a redrive gives a new
    one), deduplication_id the id the send was checked against (the body's
    SHA-256 in hex under content-based deduplication, the message id after a
    dead-letter move); all three are "" on a standard queue.
    typed_attributes are the Number, Binary and custom String attributes as
    sent (by send's typed_attributes, or through the SQS endpoint).
    trace_header is the tracing header it was sent with (send's
    trace_header, or SQS's AWSTraceHeader); "" when none.
    """

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
    message_group_id: str = ""
    sequence_number: str = ""
    deduplication_id: str = ""
    typed_attributes: dict[str, TypedAttribute] = field(default_factory=dict)
    trace_header: str = ""


@dataclass(frozen=True)
class SendBatchEntry:
    """One message of send_batch; delay None means the queue's (a FIFO queue refuses one).

    message_group_id and deduplication_id are for FIFO queues, and
    typed_attributes Number, Binary and custom String ones, and
    trace_header the tracing header, as in Client.send.
    """

    body: bytes | str
    attributes: dict[str, str] = field(default_factory=dict)
    delay: Seconds | None = None
    message_group_id: str | None = None
    deduplication_id: str | None = None
    typed_attributes: dict[str, TypedAttribute] = field(default_factory=dict)
    trace_header: str | None = None


@dataclass(frozen=True)
class SendResult:
    """What a send stored or, for a FIFO queue's duplicate, found already stored.

    sequence_number is a FIFO message's number in its queue: 20 decimal
    digits, so that comparing the strings compares the numbers; increasing in
    send order, not consecutive. "" on a standard queue.
    """

    message_id: str
    sequence_number: str = ""


@dataclass(frozen=True)
class EntryResult:
    """The outcome of one receipt handle of a batch; error is None on success."""

    receipt_handle: str
    error: EntryError | None
    lease_deadline: datetime | None = None
    delete_outcome: DeleteOutcome | None = None
    """delete_batch only: what the delete did, on success."""


@dataclass(frozen=True)
class EntryError:
    """Why one entry of a batch failed: its numeric gRPC code, stable reason and message."""

    code: int
    reason: str
    message: str


@dataclass(frozen=True)
class LeaseRenewal:
    """One renewal on a Heartbeat or Subscribe stream: visibility_timeout None means the queue's, 0 releases.

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
    """Whether a lease is held, as a Heartbeat or Subscribe answer or expiry notice says; reason is "" when held."""

    receipt_handle: str
    held: bool
    lease_deadline: datetime | None
    reason: str


@dataclass(frozen=True)
class FlowControl:
    """A Subscribe stream's credit: the most leases it holds at once (0 pauses deliveries)
    and the most bytes of them (0: no byte limit)."""

    max_outstanding_messages: int
    max_outstanding_bytes: int = 0


@dataclass(frozen=True)
class AckResult:
    """The outcome of one ack on a Subscribe stream: reason "" when the message is deleted
    (or was gone already), else RECEIPT_HANDLE_INVALID or LEASE_SUPERSEDED; delete_outcome is
    what the ack's delete did when reason is ""."""

    receipt_handle: str
    reason: str
    delete_outcome: DeleteOutcome | None = None


@dataclass(frozen=True)
class SubscribeResponse:
    """One response of a Subscribe stream: deliveries, ack results and lease states
    (answers to renewals, and LEASE_EXPIRED notices), any of them possibly empty."""

    messages: tuple[ReceivedMessage, ...]
    acks: tuple[AckResult, ...]
    leases: tuple[LeaseState, ...]
