"""Translations between the generated protobufs and holdshelf.values."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence

from holdshelf._wire import message_pb2, queue_pb2, service_pb2
from holdshelf.durations import Seconds, from_duration, from_timestamp, to_duration
from holdshelf.values import (
    AckResult, DeduplicationScope, DeleteOutcome, EntryError, EntryResult, FlowControl, LeaseRenewal, LeaseState, Queue, QueueConfig,
    QueueStats, ReceivedMessage, RedrivePolicy, RetryPolicy, SendBatchEntry, SendResult, SqsEncryption,
    SubscribeResponse, TypedAttribute,
)

_CONFIG_DURATIONS = ("visibility_timeout", "delay", "retention", "receive_wait_time", "max_lease_duration")
# Amazon SQS's reuse period, which a queue read back without one shows.
_DEFAULT_KMS_DATA_KEY_REUSE_PERIOD = 300.0
# A tag key written bare in an update_mask path; any other goes in backticks.
_BARE_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SCOPES: dict[str, queue_pb2.DeduplicationScope] = {
    "queue": queue_pb2.DEDUPLICATION_SCOPE_QUEUE,
    "message_group": queue_pb2.DEDUPLICATION_SCOPE_MESSAGE_GROUP,
}


def body_bytes(body: bytes | str) -> bytes:
    """A body as bytes; text is sent as UTF-8."""
    return body.encode() if isinstance(body, str) else bytes(body)


def config_to_wire(config: QueueConfig | None) -> queue_pb2.QueueConfig | None:
    """A QueueConfig as CreateQueue and UpdateQueue take it: None fields left unset, for the defaults."""
    if config is None:
        return None
    wire = queue_pb2.QueueConfig(
        max_message_bytes=config.max_message_bytes or 0,
        max_in_flight=config.max_in_flight or 0,
        fifo=config.fifo,
        content_based_deduplication=config.content_based_deduplication,
        deduplication_scope=scope_to_wire(config.deduplication_scope),
        tags=config.tags,
        access_policy=config.access_policy or "",
    )
    for name in _CONFIG_DURATIONS:
        value: Seconds | None = getattr(config, name)
        if value is not None:
            getattr(wire, name).CopyFrom(to_duration(value))
    if config.redrive_policy is not None:
        wire.redrive_policy.dead_letter_queue = config.redrive_policy.dead_letter_queue
        wire.redrive_policy.max_receive_count = config.redrive_policy.max_receive_count
    if config.retry_policy is not None:
        wire.retry_policy.min_backoff.CopyFrom(to_duration(config.retry_policy.min_backoff))
        wire.retry_policy.max_backoff.CopyFrom(to_duration(config.retry_policy.max_backoff))
    if config.sqs_encryption is not None:
        encryption = config.sqs_encryption
        # Set even when every field is its default: unset, sqs_encryption means SQS-managed encryption.
        wire.sqs_encryption.SetInParent()
        wire.sqs_encryption.kms_master_key_id = encryption.kms_master_key_id
        wire.sqs_encryption.sqs_managed_sse_enabled = encryption.sqs_managed_sse_enabled
        if encryption.kms_data_key_reuse_period is not None:
            wire.sqs_encryption.kms_data_key_reuse_period.CopyFrom(to_duration(encryption.kms_data_key_reuse_period))
    return wire


def update_mask_paths(fields: Sequence[str] | None, tag_keys: Sequence[str] | None = None) -> list[str]:
    """update_queue's fields then tag_keys as update_mask paths: QueueConfig's field names are the proto's,
    a tag key is tags.<key> (AIP-161). "tags" beside tag_keys is refused, as the broker refuses the overlap."""
    paths: list[str] = []
    if fields is not None:
        if isinstance(fields, str):
            raise ValueError("fields must be a list of QueueConfig field names, not one string")
        names = [field.name for field in dataclasses.fields(QueueConfig)]
        if not fields:
            raise ValueError(
                "fields must name at least one field: an empty update_mask replaces the whole configuration")
        for field in fields:
            if field not in names:
                raise ValueError(f"{field!r} is not a QueueConfig field; one of {', '.join(names)}")
        paths.extend(fields)
    if tag_keys is not None:
        if isinstance(tag_keys, str):
            raise ValueError("tag_keys must be a list of tag keys, not one string")
        if not tag_keys:
            raise ValueError("tag_keys must name at least one tag")
        if "tags" in paths:
            raise ValueError('fields may not name "tags" beside tag_keys')
        paths.extend(tag_key_path(key) for key in tag_keys)
    return paths


def tag_key_path(key: str) -> str:
    """The update_mask path of one tag: bare when it can be, else in backticks with each backtick doubled
    (AIP-161 fixes no escape; doubling is the rule of SQL's quoted names)."""
    if _BARE_KEY.fullmatch(key):
        return f"tags.{key}"
    escaped = key.replace("`", "``")
    return f"tags.`{escaped}`"


def config_from_wire(wire: queue_pb2.QueueConfig) -> QueueConfig:
    """A queue's configuration as the broker returned it, defaults filled in."""
    redrive = wire.redrive_policy if wire.HasField("redrive_policy") else None
    retry = wire.retry_policy if wire.HasField("retry_policy") else None
    return QueueConfig(
        **{name: from_duration(getattr(wire, name)) for name in _CONFIG_DURATIONS},
        max_message_bytes=wire.max_message_bytes,
        max_in_flight=wire.max_in_flight,
        redrive_policy=None if redrive is None else RedrivePolicy(redrive.dead_letter_queue, redrive.max_receive_count),
        retry_policy=None if retry is None else RetryPolicy(from_duration(retry.min_backoff), from_duration(retry.max_backoff)),
        fifo=wire.fifo,
        content_based_deduplication=wire.content_based_deduplication,
        deduplication_scope=scope_from_wire(wire.deduplication_scope) if wire.fifo else None,
        tags=dict(wire.tags),
        access_policy=wire.access_policy or None,
        sqs_encryption=sqs_encryption_from_wire(wire.sqs_encryption) if wire.HasField("sqs_encryption") else None,
    )


def sqs_encryption_from_wire(wire: queue_pb2.SqsEncryption) -> SqsEncryption:
    """A queue's encryption settings as the broker returned them; an unset reuse period reads as its default."""
    period = (from_duration(wire.kms_data_key_reuse_period) if wire.HasField("kms_data_key_reuse_period")
              else _DEFAULT_KMS_DATA_KEY_REUSE_PERIOD)
    return SqsEncryption(wire.kms_master_key_id, period, wire.sqs_managed_sse_enabled)


def scope_to_wire(scope: DeduplicationScope | None) -> queue_pb2.DeduplicationScope:
    """A deduplication scope as its proto number; None leaves it unset (the queue)."""
    if scope is None:
        return queue_pb2.DEDUPLICATION_SCOPE_UNSPECIFIED
    if scope not in _SCOPES:
        # Sent unset, a typo would quietly mean "queue".
        raise ValueError(f'deduplication_scope must be "queue" or "message_group", not {scope!r}')
    return _SCOPES[scope]


def scope_from_wire(number: int) -> DeduplicationScope:
    """A FIFO queue's scope as the broker returned it; unset means the queue."""
    return "message_group" if number == queue_pb2.DEDUPLICATION_SCOPE_MESSAGE_GROUP else "queue"


def queue_from_wire(wire: queue_pb2.Queue) -> Queue:
    """A Queue with its configuration and counts."""
    stats = wire.stats
    return Queue(
        name=wire.name,
        config=config_from_wire(wire.config),
        stats=QueueStats(
            visible=stats.visible,
            in_flight=stats.in_flight,
            delayed=stats.delayed,
            oldest_message_age=from_duration(stats.oldest_message_age) if stats.HasField("oldest_message_age") else None,
        ),
        create_time=from_timestamp(wire.create_time),
        dead_letter_source_queues=tuple(wire.dead_letter_source_queues),
    )


def message_from_wire(wire: message_pb2.ReceivedMessage) -> ReceivedMessage:
    """One delivery; checkpoint None when the message has none."""
    return ReceivedMessage(
        message_id=wire.message_id,
        receipt_handle=wire.receipt_handle,
        body=wire.body,
        attributes=dict(wire.attributes),
        receive_count=wire.receive_count,
        send_time=from_timestamp(wire.send_time),
        first_receive_time=from_timestamp(wire.first_receive_time),
        lease_deadline=from_timestamp(wire.lease_deadline),
        checkpoint=wire.checkpoint if wire.HasField("checkpoint") else None,
        dead_letter_source_queue=wire.dead_letter_source_queue,
        dead_letter_reason=wire.dead_letter_reason,
        message_group_id=wire.message_group_id,
        sequence_number=wire.sequence_number,
        deduplication_id=wire.deduplication_id,
        typed_attributes={name: typed_attribute_from_wire(value) for name, value in wire.typed_attributes.items()},
        trace_header=wire.trace_header,
    )


def typed_attributes_to_wire(
        attributes: Mapping[str, TypedAttribute] | None) -> dict[str, message_pb2.TypedAttributeValue]:
    """Typed attributes as SendRequest and SendBatchEntry carry them: text as string_value, bytes as binary_value."""
    wire = {}
    for name, attribute in (attributes or {}).items():
        value = attribute.value
        if isinstance(value, str):
            wire[name] = message_pb2.TypedAttributeValue(data_type=attribute.data_type, string_value=value)
        else:
            wire[name] = message_pb2.TypedAttributeValue(data_type=attribute.data_type, binary_value=bytes(value))
    return wire


def typed_attribute_from_wire(wire: message_pb2.TypedAttributeValue) -> TypedAttribute:
    """One typed attribute as sent: binary_value as bytes, string_value (or neither) as text."""
    if wire.WhichOneof("value") == "binary_value":
        return TypedAttribute(wire.data_type, wire.binary_value)
    return TypedAttribute(wire.data_type, wire.string_value)


def batch_entry_to_wire(entry: SendBatchEntry) -> message_pb2.SendBatchEntry:
    """One SendBatch entry; delay None leaves it unset (the queue's), as do None FIFO ids."""
    wire = message_pb2.SendBatchEntry(
        body=body_bytes(entry.body), attributes=entry.attributes,
        typed_attributes=typed_attributes_to_wire(entry.typed_attributes),
        message_group_id=entry.message_group_id or "", deduplication_id=entry.deduplication_id or "",
        trace_header=entry.trace_header or "")
    if entry.delay is not None:
        wire.delay.CopyFrom(to_duration(entry.delay))
    return wire


def send_results(message_ids: Sequence[str], sequence_numbers: Sequence[str]) -> list[SendResult]:
    """A send's ids paired with their sequence numbers, which only a FIFO queue's answer carries."""
    return [SendResult(message_id, sequence_numbers[i] if i < len(sequence_numbers) else "")
            for i, message_id in enumerate(message_ids)]


def entry_result_from_wire(wire: message_pb2.EntryResult) -> EntryResult:
    """One batch entry's outcome; error None on success."""
    error = None if wire.code == 0 else EntryError(wire.code, wire.reason, wire.message)
    deadline = from_timestamp(wire.lease_deadline) if wire.HasField("lease_deadline") else None
    outcome = delete_outcome_from_wire(wire.delete_outcome) if wire.code == 0 and wire.delete_outcome else None
    return EntryResult(wire.receipt_handle, error, deadline, outcome)


_DELETE_OUTCOMES: dict[int, DeleteOutcome] = {
    message_pb2.DELETE_OUTCOME_UNSPECIFIED: "UNSPECIFIED",
    message_pb2.DELETE_OUTCOME_DELETED: "DELETED",
    message_pb2.DELETE_OUTCOME_ALREADY_DELETED: "ALREADY_DELETED",
    message_pb2.DELETE_OUTCOME_DEAD_LETTERED: "DEAD_LETTERED",
    message_pb2.DELETE_OUTCOME_RECEIVED_AGAIN: "RECEIVED_AGAIN",
    message_pb2.DELETE_OUTCOME_NO_LONGER_HELD: "NO_LONGER_HELD",
}


def delete_outcome_from_wire(value: int) -> DeleteOutcome:
    """A delete's outcome; one newer than this client reads as NO_LONGER_HELD, the cautious guess."""
    return _DELETE_OUTCOMES.get(value, "NO_LONGER_HELD")


def lease_lost_before_delete(outcome: DeleteOutcome | None) -> str | None:
    """The LeaseLostError reason a delete's outcome stands for (DEAD_LETTERED, RECEIVED_AGAIN), else None."""
    return outcome if outcome in ("DEAD_LETTERED", "RECEIVED_AGAIN") else None


def renewal_to_wire(renewal: LeaseRenewal) -> service_pb2.LeaseRenewal:
    """One Heartbeat or Subscribe renewal; visibility_timeout and checkpoint None leave them unset."""
    wire = service_pb2.LeaseRenewal(receipt_handle=renewal.receipt_handle, failed=renewal.failed)
    if renewal.visibility_timeout is not None:
        wire.visibility_timeout.CopyFrom(to_duration(renewal.visibility_timeout))
    if renewal.checkpoint is not None:
        wire.checkpoint = renewal.checkpoint
    return wire


def lease_state_from_wire(wire: service_pb2.LeaseState) -> LeaseState:
    """One Heartbeat or Subscribe LeaseState."""
    deadline = from_timestamp(wire.lease_deadline) if wire.HasField("lease_deadline") else None
    return LeaseState(wire.receipt_handle, wire.held, deadline, wire.reason)


def flow_control_to_wire(flow: FlowControl) -> service_pb2.FlowControl:
    """A Subscribe stream's credit."""
    return service_pb2.FlowControl(max_outstanding_messages=flow.max_outstanding_messages,
                                   max_outstanding_bytes=flow.max_outstanding_bytes)


def subscribe_response_from_wire(wire: service_pb2.SubscribeResponse) -> SubscribeResponse:
    """One Subscribe response: its deliveries, ack results and lease states, in order."""
    return SubscribeResponse(
        messages=tuple(message_from_wire(m) for m in wire.messages),
        acks=tuple(AckResult(a.receipt_handle, a.reason, delete_outcome_from_wire(a.delete_outcome) if a.reason == ""
                             else None) for a in wire.acks),
        leases=tuple(lease_state_from_wire(state) for state in wire.leases),
    )
