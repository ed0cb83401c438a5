from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf import field_mask_pb2 as _field_mask_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from holdshelf._gen.holdshelf.v1 import message_pb2 as _message_pb2
from holdshelf._gen.holdshelf.v1 import queue_pb2 as _queue_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor
MESSAGE_MOVE_TASK_STATUS_CANCELLED: MessageMoveTaskStatus
MESSAGE_MOVE_TASK_STATUS_CANCELLING: MessageMoveTaskStatus
MESSAGE_MOVE_TASK_STATUS_COMPLETED: MessageMoveTaskStatus
MESSAGE_MOVE_TASK_STATUS_FAILED: MessageMoveTaskStatus
MESSAGE_MOVE_TASK_STATUS_RUNNING: MessageMoveTaskStatus
MESSAGE_MOVE_TASK_STATUS_UNSPECIFIED: MessageMoveTaskStatus

class AckResult(_message.Message):
    __slots__ = ["reason", "receipt_handle"]
    REASON_FIELD_NUMBER: _ClassVar[int]
    RECEIPT_HANDLE_FIELD_NUMBER: _ClassVar[int]
    reason: str
    receipt_handle: str
    def __init__(self, receipt_handle: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class CancelMessageMoveTaskRequest(_message.Message):
    __slots__ = ["task_handle"]
    TASK_HANDLE_FIELD_NUMBER: _ClassVar[int]
    task_handle: str
    def __init__(self, task_handle: _Optional[str] = ...) -> None: ...

class CancelMessageMoveTaskResponse(_message.Message):
    __slots__ = ["moved_count"]
    MOVED_COUNT_FIELD_NUMBER: _ClassVar[int]
    moved_count: int
    def __init__(self, moved_count: _Optional[int] = ...) -> None: ...

class ChangeVisibilityBatchRequest(_message.Message):
    __slots__ = ["queue", "receipt_handles", "visibility_timeout"]
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    RECEIPT_HANDLES_FIELD_NUMBER: _ClassVar[int]
    VISIBILITY_TIMEOUT_FIELD_NUMBER: _ClassVar[int]
    queue: str
    receipt_handles: _containers.RepeatedScalarFieldContainer[str]
    visibility_timeout: _duration_pb2.Duration
    def __init__(self, queue: _Optional[str] = ..., receipt_handles: _Optional[_Iterable[str]] = ..., visibility_timeout: _Optional[_Union[_duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class ChangeVisibilityBatchResponse(_message.Message):
    __slots__ = ["results"]
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[_message_pb2.EntryResult]
    def __init__(self, results: _Optional[_Iterable[_Union[_message_pb2.EntryResult, _Mapping]]] = ...) -> None: ...

class ChangeVisibilityRequest(_message.Message):
    __slots__ = ["queue", "receipt_handle", "visibility_timeout"]
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    RECEIPT_HANDLE_FIELD_NUMBER: _ClassVar[int]
    VISIBILITY_TIMEOUT_FIELD_NUMBER: _ClassVar[int]
    queue: str
    receipt_handle: str
    visibility_timeout: _duration_pb2.Duration
    def __init__(self, queue: _Optional[str] = ..., receipt_handle: _Optional[str] = ..., visibility_timeout: _Optional[_Union[_duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class ChangeVisibilityResponse(_message.Message):
    __slots__ = ["lease_deadline"]
    LEASE_DEADLINE_FIELD_NUMBER: _ClassVar[int]
    lease_deadline: _timestamp_pb2.Timestamp
    def __init__(self, lease_deadline: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class CreateQueueRequest(_message.Message):
    __slots__ = ["config", "name"]
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    config: _queue_pb2.QueueConfig
    name: str
    def __init__(self, name: _Optional[str] = ..., config: _Optional[_Union[_queue_pb2.QueueConfig, _Mapping]] = ...) -> None: ...

class CreateQueueResponse(_message.Message):
    __slots__ = ["queue"]
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    queue: _queue_pb2.Queue
    def __init__(self, queue: _Optional[_Union[_queue_pb2.Queue, _Mapping]] = ...) -> None: ...

class DeleteBatchRequest(_message.Message):
    __slots__ = ["queue", "receipt_handles"]
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    RECEIPT_HANDLES_FIELD_NUMBER: _ClassVar[int]
    queue: str
    receipt_handles: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, queue: _Optional[str] = ..., receipt_handles: _Optional[_Iterable[str]] = ...) -> None: ...

class DeleteBatchResponse(_message.Message):
    __slots__ = ["results"]
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[_message_pb2.EntryResult]
    def __init__(self, results: _Optional[_Iterable[_Union[_message_pb2.EntryResult, _Mapping]]] = ...) -> None: ...

class DeleteQueueRequest(_message.Message):
    __slots__ = ["name"]
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class DeleteQueueResponse(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class DeleteRequest(_message.Message):
    __slots__ = ["queue", "receipt_handle"]
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    RECEIPT_HANDLE_FIELD_NUMBER: _ClassVar[int]
    queue: str
    receipt_handle: str
    def __init__(self, queue: _Optional[str] = ..., receipt_handle: _Optional[str] = ...) -> None: ...

class DeleteResponse(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class DiscardMessageRequest(_message.Message):
    __slots__ = ["message_id", "queue"]
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    message_id: str
    queue: str
    def __init__(self, queue: _Optional[str] = ..., message_id: _Optional[str] = ...) -> None: ...

class DiscardMessageResponse(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class FlowControl(_message.Message):
    __slots__ = ["max_outstanding_bytes", "max_outstanding_messages"]
    MAX_OUTSTANDING_BYTES_FIELD_NUMBER: _ClassVar[int]
    MAX_OUTSTANDING_MESSAGES_FIELD_NUMBER: _ClassVar[int]
    max_outstanding_bytes: int
    max_outstanding_messages: int
    def __init__(self, max_outstanding_messages: _Optional[int] = ..., max_outstanding_bytes: _Optional[int] = ...) -> None: ...

class GetQueueRequest(_message.Message):
    __slots__ = ["name"]
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class GetQueueResponse(_message.Message):
    __slots__ = ["queue"]
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    queue: _queue_pb2.Queue
    def __init__(self, queue: _Optional[_Union[_queue_pb2.Queue, _Mapping]] = ...) -> None: ...

class HeartbeatRequest(_message.Message):
    __slots__ = ["leases", "queue", "release_on_disconnect"]
    LEASES_FIELD_NUMBER: _ClassVar[int]
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    RELEASE_ON_DISCONNECT_FIELD_NUMBER: _ClassVar[int]
    leases: _containers.RepeatedCompositeFieldContainer[LeaseRenewal]
    queue: str
    release_on_disconnect: bool
    def __init__(self, queue: _Optional[str] = ..., leases: _Optional[_Iterable[_Union[LeaseRenewal, _Mapping]]] = ..., release_on_disconnect: bool = ...) -> None: ...

class HeartbeatResponse(_message.Message):
    __slots__ = ["leases"]
    LEASES_FIELD_NUMBER: _ClassVar[int]
    leases: _containers.RepeatedCompositeFieldContainer[LeaseState]
    def __init__(self, leases: _Optional[_Iterable[_Union[LeaseState, _Mapping]]] = ...) -> None: ...

class LeaseRenewal(_message.Message):
    __slots__ = ["checkpoint", "failed", "receipt_handle", "visibility_timeout"]
    CHECKPOINT_FIELD_NUMBER: _ClassVar[int]
    FAILED_FIELD_NUMBER: _ClassVar[int]
    RECEIPT_HANDLE_FIELD_NUMBER: _ClassVar[int]
    VISIBILITY_TIMEOUT_FIELD_NUMBER: _ClassVar[int]
    checkpoint: bytes
    failed: bool
    receipt_handle: str
    visibility_timeout: _duration_pb2.Duration
    def __init__(self, receipt_handle: _Optional[str] = ..., visibility_timeout: _Optional[_Union[_duration_pb2.Duration, _Mapping]] = ..., checkpoint: _Optional[bytes] = ..., failed: bool = ...) -> None: ...

class LeaseState(_message.Message):
    __slots__ = ["held", "lease_deadline", "reason", "receipt_handle"]
    HELD_FIELD_NUMBER: _ClassVar[int]
    LEASE_DEADLINE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    RECEIPT_HANDLE_FIELD_NUMBER: _ClassVar[int]
    held: bool
    lease_deadline: _timestamp_pb2.Timestamp
    reason: str
    receipt_handle: str
    def __init__(self, receipt_handle: _Optional[str] = ..., held: bool = ..., lease_deadline: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., reason: _Optional[str] = ...) -> None: ...

class ListMessageMoveTasksRequest(_message.Message):
    __slots__ = ["max_results", "source_queue"]
    MAX_RESULTS_FIELD_NUMBER: _ClassVar[int]
    SOURCE_QUEUE_FIELD_NUMBER: _ClassVar[int]
    max_results: int
    source_queue: str
    def __init__(self, source_queue: _Optional[str] = ..., max_results: _Optional[int] = ...) -> None: ...

class ListMessageMoveTasksResponse(_message.Message):
    __slots__ = ["tasks"]
    TASKS_FIELD_NUMBER: _ClassVar[int]
    tasks: _containers.RepeatedCompositeFieldContainer[MessageMoveTask]
    def __init__(self, tasks: _Optional[_Iterable[_Union[MessageMoveTask, _Mapping]]] = ...) -> None: ...

class ListQueuesRequest(_message.Message):
    __slots__ = ["page_size", "page_token", "prefix"]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    PREFIX_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    prefix: str
    def __init__(self, prefix: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListQueuesResponse(_message.Message):
    __slots__ = ["next_page_token", "queues"]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    QUEUES_FIELD_NUMBER: _ClassVar[int]
    next_page_token: str
    queues: _containers.RepeatedCompositeFieldContainer[_queue_pb2.Queue]
    def __init__(self, queues: _Optional[_Iterable[_Union[_queue_pb2.Queue, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class MessageMoveTask(_message.Message):
    __slots__ = ["destination_queue", "failure_reason", "max_per_second", "moved_count", "source_queue", "start_time", "status", "task_handle", "to_move_count"]
    DESTINATION_QUEUE_FIELD_NUMBER: _ClassVar[int]
    FAILURE_REASON_FIELD_NUMBER: _ClassVar[int]
    MAX_PER_SECOND_FIELD_NUMBER: _ClassVar[int]
    MOVED_COUNT_FIELD_NUMBER: _ClassVar[int]
    SOURCE_QUEUE_FIELD_NUMBER: _ClassVar[int]
    START_TIME_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    TASK_HANDLE_FIELD_NUMBER: _ClassVar[int]
    TO_MOVE_COUNT_FIELD_NUMBER: _ClassVar[int]
    destination_queue: str
    failure_reason: str
    max_per_second: int
    moved_count: int
    source_queue: str
    start_time: _timestamp_pb2.Timestamp
    status: MessageMoveTaskStatus
    task_handle: str
    to_move_count: int
    def __init__(self, task_handle: _Optional[str] = ..., status: _Optional[_Union[MessageMoveTaskStatus, str]] = ..., source_queue: _Optional[str] = ..., destination_queue: _Optional[str] = ..., max_per_second: _Optional[int] = ..., moved_count: _Optional[int] = ..., to_move_count: _Optional[int] = ..., failure_reason: _Optional[str] = ..., start_time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class MoveMessageRequest(_message.Message):
    __slots__ = ["destination_queue", "message_id", "queue"]
    DESTINATION_QUEUE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    destination_queue: str
    message_id: str
    queue: str
    def __init__(self, queue: _Optional[str] = ..., message_id: _Optional[str] = ..., destination_queue: _Optional[str] = ...) -> None: ...

class MoveMessageResponse(_message.Message):
    __slots__ = ["destination_queue"]
    DESTINATION_QUEUE_FIELD_NUMBER: _ClassVar[int]
    destination_queue: str
    def __init__(self, destination_queue: _Optional[str] = ...) -> None: ...

class PeekMessagesRequest(_message.Message):
    __slots__ = ["page_size", "page_token", "queue"]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    queue: str
    def __init__(self, queue: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class PeekMessagesResponse(_message.Message):
    __slots__ = ["messages", "next_page_token"]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    messages: _containers.RepeatedCompositeFieldContainer[_message_pb2.PeekedMessage]
    next_page_token: str
    def __init__(self, messages: _Optional[_Iterable[_Union[_message_pb2.PeekedMessage, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class PurgeQueueRequest(_message.Message):
    __slots__ = ["name"]
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class PurgeQueueResponse(_message.Message):
    __slots__ = ["purged_count"]
    PURGED_COUNT_FIELD_NUMBER: _ClassVar[int]
    purged_count: int
    def __init__(self, purged_count: _Optional[int] = ...) -> None: ...

class ReceiveRequest(_message.Message):
    __slots__ = ["max_messages", "queue", "visibility_timeout", "wait_time"]
    MAX_MESSAGES_FIELD_NUMBER: _ClassVar[int]
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    VISIBILITY_TIMEOUT_FIELD_NUMBER: _ClassVar[int]
    WAIT_TIME_FIELD_NUMBER: _ClassVar[int]
    max_messages: int
    queue: str
    visibility_timeout: _duration_pb2.Duration
    wait_time: _duration_pb2.Duration
    def __init__(self, queue: _Optional[str] = ..., max_messages: _Optional[int] = ..., visibility_timeout: _Optional[_Union[_duration_pb2.Duration, _Mapping]] = ..., wait_time: _Optional[_Union[_duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class ReceiveResponse(_message.Message):
    __slots__ = ["messages"]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    messages: _containers.RepeatedCompositeFieldContainer[_message_pb2.ReceivedMessage]
    def __init__(self, messages: _Optional[_Iterable[_Union[_message_pb2.ReceivedMessage, _Mapping]]] = ...) -> None: ...

class RedriveMessagesRequest(_message.Message):
    __slots__ = ["dead_letter_queue", "destination_queue", "max_messages", "max_per_second"]
    DEAD_LETTER_QUEUE_FIELD_NUMBER: _ClassVar[int]
    DESTINATION_QUEUE_FIELD_NUMBER: _ClassVar[int]
    MAX_MESSAGES_FIELD_NUMBER: _ClassVar[int]
    MAX_PER_SECOND_FIELD_NUMBER: _ClassVar[int]
    dead_letter_queue: str
    destination_queue: str
    max_messages: int
    max_per_second: int
    def __init__(self, dead_letter_queue: _Optional[str] = ..., destination_queue: _Optional[str] = ..., max_messages: _Optional[int] = ..., max_per_second: _Optional[int] = ...) -> None: ...

class RedriveMessagesResponse(_message.Message):
    __slots__ = ["moved_count"]
    MOVED_COUNT_FIELD_NUMBER: _ClassVar[int]
    moved_count: int
    def __init__(self, moved_count: _Optional[int] = ...) -> None: ...

class SendBatchRequest(_message.Message):
    __slots__ = ["entries", "queue"]
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[_message_pb2.SendBatchEntry]
    queue: str
    def __init__(self, queue: _Optional[str] = ..., entries: _Optional[_Iterable[_Union[_message_pb2.SendBatchEntry, _Mapping]]] = ...) -> None: ...

class SendBatchResponse(_message.Message):
    __slots__ = ["message_ids", "sequence_numbers"]
    MESSAGE_IDS_FIELD_NUMBER: _ClassVar[int]
    SEQUENCE_NUMBERS_FIELD_NUMBER: _ClassVar[int]
    message_ids: _containers.RepeatedScalarFieldContainer[str]
    sequence_numbers: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, message_ids: _Optional[_Iterable[str]] = ..., sequence_numbers: _Optional[_Iterable[str]] = ...) -> None: ...

class SendRequest(_message.Message):
    __slots__ = ["attributes", "body", "deduplication_id", "delay", "message_group_id", "queue", "trace_header", "typed_attributes"]
    class AttributesEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    class TypedAttributesEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: _message_pb2.TypedAttributeValue
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[_message_pb2.TypedAttributeValue, _Mapping]] = ...) -> None: ...
    ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    DEDUPLICATION_ID_FIELD_NUMBER: _ClassVar[int]
    DELAY_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_GROUP_ID_FIELD_NUMBER: _ClassVar[int]
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    TRACE_HEADER_FIELD_NUMBER: _ClassVar[int]
    TYPED_ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    attributes: _containers.ScalarMap[str, str]
    body: bytes
    deduplication_id: str
    delay: _duration_pb2.Duration
    message_group_id: str
    queue: str
    trace_header: str
    typed_attributes: _containers.MessageMap[str, _message_pb2.TypedAttributeValue]
    def __init__(self, queue: _Optional[str] = ..., body: _Optional[bytes] = ..., attributes: _Optional[_Mapping[str, str]] = ..., delay: _Optional[_Union[_duration_pb2.Duration, _Mapping]] = ..., typed_attributes: _Optional[_Mapping[str, _message_pb2.TypedAttributeValue]] = ..., message_group_id: _Optional[str] = ..., deduplication_id: _Optional[str] = ..., trace_header: _Optional[str] = ...) -> None: ...

class SendResponse(_message.Message):
    __slots__ = ["message_id", "sequence_number"]
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    SEQUENCE_NUMBER_FIELD_NUMBER: _ClassVar[int]
    message_id: str
    sequence_number: str
    def __init__(self, message_id: _Optional[str] = ..., sequence_number: _Optional[str] = ...) -> None: ...

class StartMessageMoveTaskRequest(_message.Message):
    __slots__ = ["destination_queue", "max_per_second", "source_queue"]
    DESTINATION_QUEUE_FIELD_NUMBER: _ClassVar[int]
    MAX_PER_SECOND_FIELD_NUMBER: _ClassVar[int]
    SOURCE_QUEUE_FIELD_NUMBER: _ClassVar[int]
    destination_queue: str
    max_per_second: int
    source_queue: str
    def __init__(self, source_queue: _Optional[str] = ..., destination_queue: _Optional[str] = ..., max_per_second: _Optional[int] = ...) -> None: ...

class StartMessageMoveTaskResponse(_message.Message):
    __slots__ = ["task_handle"]
    TASK_HANDLE_FIELD_NUMBER: _ClassVar[int]
    task_handle: str
    def __init__(self, task_handle: _Optional[str] = ...) -> None: ...

class SubscribeRequest(_message.Message):
    __slots__ = ["ack_receipt_handles", "flow_control", "leases", "queue", "release_on_disconnect", "visibility_timeout"]
    ACK_RECEIPT_HANDLES_FIELD_NUMBER: _ClassVar[int]
    FLOW_CONTROL_FIELD_NUMBER: _ClassVar[int]
    LEASES_FIELD_NUMBER: _ClassVar[int]
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    RELEASE_ON_DISCONNECT_FIELD_NUMBER: _ClassVar[int]
    VISIBILITY_TIMEOUT_FIELD_NUMBER: _ClassVar[int]
    ack_receipt_handles: _containers.RepeatedScalarFieldContainer[str]
    flow_control: FlowControl
    leases: _containers.RepeatedCompositeFieldContainer[LeaseRenewal]
    queue: str
    release_on_disconnect: bool
    visibility_timeout: _duration_pb2.Duration
    def __init__(self, queue: _Optional[str] = ..., visibility_timeout: _Optional[_Union[_duration_pb2.Duration, _Mapping]] = ..., release_on_disconnect: bool = ..., flow_control: _Optional[_Union[FlowControl, _Mapping]] = ..., ack_receipt_handles: _Optional[_Iterable[str]] = ..., leases: _Optional[_Iterable[_Union[LeaseRenewal, _Mapping]]] = ...) -> None: ...

class SubscribeResponse(_message.Message):
    __slots__ = ["acks", "leases", "messages"]
    ACKS_FIELD_NUMBER: _ClassVar[int]
    LEASES_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    acks: _containers.RepeatedCompositeFieldContainer[AckResult]
    leases: _containers.RepeatedCompositeFieldContainer[LeaseState]
    messages: _containers.RepeatedCompositeFieldContainer[_message_pb2.ReceivedMessage]
    def __init__(self, messages: _Optional[_Iterable[_Union[_message_pb2.ReceivedMessage, _Mapping]]] = ..., acks: _Optional[_Iterable[_Union[AckResult, _Mapping]]] = ..., leases: _Optional[_Iterable[_Union[LeaseState, _Mapping]]] = ...) -> None: ...

class UpdateQueueRequest(_message.Message):
    __slots__ = ["config", "name", "update_mask"]
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    UPDATE_MASK_FIELD_NUMBER: _ClassVar[int]
    config: _queue_pb2.QueueConfig
    name: str
    update_mask: _field_mask_pb2.FieldMask
    def __init__(self, name: _Optional[str] = ..., config: _Optional[_Union[_queue_pb2.QueueConfig, _Mapping]] = ..., update_mask: _Optional[_Union[_field_mask_pb2.FieldMask, _Mapping]] = ...) -> None: ...

class UpdateQueueResponse(_message.Message):
    __slots__ = ["queue"]
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    queue: _queue_pb2.Queue
    def __init__(self, queue: _Optional[_Union[_queue_pb2.Queue, _Mapping]] = ...) -> None: ...

class MessageMoveTaskStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
