from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DEDUPLICATION_SCOPE_MESSAGE_GROUP: DeduplicationScope
DEDUPLICATION_SCOPE_QUEUE: DeduplicationScope
DEDUPLICATION_SCOPE_UNSPECIFIED: DeduplicationScope
DESCRIPTOR: _descriptor.FileDescriptor

class Queue(_message.Message):
    __slots__ = ["config", "create_time", "dead_letter_source_queues", "name", "stats", "update_time"]
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    DEAD_LETTER_SOURCE_QUEUES_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    STATS_FIELD_NUMBER: _ClassVar[int]
    UPDATE_TIME_FIELD_NUMBER: _ClassVar[int]
    config: QueueConfig
    create_time: _timestamp_pb2.Timestamp
    dead_letter_source_queues: _containers.RepeatedScalarFieldContainer[str]
    name: str
    stats: QueueStats
    update_time: _timestamp_pb2.Timestamp
    def __init__(self, name: _Optional[str] = ..., config: _Optional[_Union[QueueConfig, _Mapping]] = ..., stats: _Optional[_Union[QueueStats, _Mapping]] = ..., create_time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., dead_letter_source_queues: _Optional[_Iterable[str]] = ..., update_time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class QueueConfig(_message.Message):
    __slots__ = ["access_policy", "content_based_deduplication", "deduplication_scope", "delay", "fifo", "max_in_flight", "max_lease_duration", "max_message_bytes", "receive_wait_time", "redrive_policy", "retention", "retry_policy", "sqs_encryption", "tags", "visibility_timeout"]
    class TagsEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    ACCESS_POLICY_FIELD_NUMBER: _ClassVar[int]
    CONTENT_BASED_DEDUPLICATION_FIELD_NUMBER: _ClassVar[int]
    DEDUPLICATION_SCOPE_FIELD_NUMBER: _ClassVar[int]
    DELAY_FIELD_NUMBER: _ClassVar[int]
    FIFO_FIELD_NUMBER: _ClassVar[int]
    MAX_IN_FLIGHT_FIELD_NUMBER: _ClassVar[int]
    MAX_LEASE_DURATION_FIELD_NUMBER: _ClassVar[int]
    MAX_MESSAGE_BYTES_FIELD_NUMBER: _ClassVar[int]
    RECEIVE_WAIT_TIME_FIELD_NUMBER: _ClassVar[int]
    REDRIVE_POLICY_FIELD_NUMBER: _ClassVar[int]
    RETENTION_FIELD_NUMBER: _ClassVar[int]
    RETRY_POLICY_FIELD_NUMBER: _ClassVar[int]
    SQS_ENCRYPTION_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    VISIBILITY_TIMEOUT_FIELD_NUMBER: _ClassVar[int]
    access_policy: str
    content_based_deduplication: bool
    deduplication_scope: DeduplicationScope
    delay: _duration_pb2.Duration
    fifo: bool
    max_in_flight: int
    max_lease_duration: _duration_pb2.Duration
    max_message_bytes: int
    receive_wait_time: _duration_pb2.Duration
    redrive_policy: RedrivePolicy
    retention: _duration_pb2.Duration
    retry_policy: RetryPolicy
    sqs_encryption: SqsEncryption
    tags: _containers.ScalarMap[str, str]
    visibility_timeout: _duration_pb2.Duration
    def __init__(self, visibility_timeout: _Optional[_Union[_duration_pb2.Duration, _Mapping]] = ..., delay: _Optional[_Union[_duration_pb2.Duration, _Mapping]] = ..., retention: _Optional[_Union[_duration_pb2.Duration, _Mapping]] = ..., max_message_bytes: _Optional[int] = ..., receive_wait_time: _Optional[_Union[_duration_pb2.Duration, _Mapping]] = ..., max_in_flight: _Optional[int] = ..., max_lease_duration: _Optional[_Union[_duration_pb2.Duration, _Mapping]] = ..., redrive_policy: _Optional[_Union[RedrivePolicy, _Mapping]] = ..., retry_policy: _Optional[_Union[RetryPolicy, _Mapping]] = ..., tags: _Optional[_Mapping[str, str]] = ..., fifo: bool = ..., content_based_deduplication: bool = ..., deduplication_scope: _Optional[_Union[DeduplicationScope, str]] = ..., access_policy: _Optional[str] = ..., sqs_encryption: _Optional[_Union[SqsEncryption, _Mapping]] = ...) -> None: ...

class QueueStats(_message.Message):
    __slots__ = ["delayed", "in_flight", "oldest_message_age", "visible"]
    DELAYED_FIELD_NUMBER: _ClassVar[int]
    IN_FLIGHT_FIELD_NUMBER: _ClassVar[int]
    OLDEST_MESSAGE_AGE_FIELD_NUMBER: _ClassVar[int]
    VISIBLE_FIELD_NUMBER: _ClassVar[int]
    delayed: int
    in_flight: int
    oldest_message_age: _duration_pb2.Duration
    visible: int
    def __init__(self, visible: _Optional[int] = ..., in_flight: _Optional[int] = ..., delayed: _Optional[int] = ..., oldest_message_age: _Optional[_Union[_duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class RedrivePolicy(_message.Message):
    __slots__ = ["dead_letter_queue", "max_receive_count"]
    DEAD_LETTER_QUEUE_FIELD_NUMBER: _ClassVar[int]
    MAX_RECEIVE_COUNT_FIELD_NUMBER: _ClassVar[int]
    dead_letter_queue: str
    max_receive_count: int
    def __init__(self, dead_letter_queue: _Optional[str] = ..., max_receive_count: _Optional[int] = ...) -> None: ...

class RetryPolicy(_message.Message):
    __slots__ = ["max_backoff", "min_backoff"]
    MAX_BACKOFF_FIELD_NUMBER: _ClassVar[int]
    MIN_BACKOFF_FIELD_NUMBER: _ClassVar[int]
    max_backoff: _duration_pb2.Duration
    min_backoff: _duration_pb2.Duration
    def __init__(self, min_backoff: _Optional[_Union[_duration_pb2.Duration, _Mapping]] = ..., max_backoff: _Optional[_Union[_duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class SqsEncryption(_message.Message):
    __slots__ = ["kms_data_key_reuse_period", "kms_master_key_id", "sqs_managed_sse_enabled"]
    KMS_DATA_KEY_REUSE_PERIOD_FIELD_NUMBER: _ClassVar[int]
    KMS_MASTER_KEY_ID_FIELD_NUMBER: _ClassVar[int]
    SQS_MANAGED_SSE_ENABLED_FIELD_NUMBER: _ClassVar[int]
    kms_data_key_reuse_period: _duration_pb2.Duration
    kms_master_key_id: str
    sqs_managed_sse_enabled: bool
    def __init__(self, kms_master_key_id: _Optional[str] = ..., kms_data_key_reuse_period: _Optional[_Union[_duration_pb2.Duration, _Mapping]] = ..., sqs_managed_sse_enabled: bool = ...) -> None: ...

class DeduplicationScope(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
