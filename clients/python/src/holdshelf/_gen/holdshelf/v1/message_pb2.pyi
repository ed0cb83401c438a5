from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor
MESSAGE_STATE_DELAYED: MessageState
MESSAGE_STATE_IN_FLIGHT: MessageState
MESSAGE_STATE_UNSPECIFIED: MessageState
MESSAGE_STATE_VISIBLE: MessageState

class EntryResult(_message.Message):
    __slots__ = ["code", "lease_deadline", "message", "reason", "receipt_handle"]
    CODE_FIELD_NUMBER: _ClassVar[int]
    LEASE_DEADLINE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    RECEIPT_HANDLE_FIELD_NUMBER: _ClassVar[int]
    code: int
    lease_deadline: _timestamp_pb2.Timestamp
    message: str
    reason: str
    receipt_handle: str
    def __init__(self, receipt_handle: _Optional[str] = ..., code: _Optional[int] = ..., reason: _Optional[str] = ..., message: _Optional[str] = ..., lease_deadline: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class PeekedMessage(_message.Message):
    __slots__ = ["attributes", "body", "checkpoint_size", "dead_letter_reason", "dead_letter_source_queue", "dead_lettered_time", "deduplication_id", "first_receive_time", "lease_deadline", "message_group_id", "message_id", "receive_count", "send_time", "sequence_number", "state", "trace_header", "typed_attributes", "visible_time"]
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
        value: TypedAttributeValue
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[TypedAttributeValue, _Mapping]] = ...) -> None: ...
    ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    CHECKPOINT_SIZE_FIELD_NUMBER: _ClassVar[int]
    DEAD_LETTERED_TIME_FIELD_NUMBER: _ClassVar[int]
    DEAD_LETTER_REASON_FIELD_NUMBER: _ClassVar[int]
    DEAD_LETTER_SOURCE_QUEUE_FIELD_NUMBER: _ClassVar[int]
    DEDUPLICATION_ID_FIELD_NUMBER: _ClassVar[int]
    FIRST_RECEIVE_TIME_FIELD_NUMBER: _ClassVar[int]
    LEASE_DEADLINE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_GROUP_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    RECEIVE_COUNT_FIELD_NUMBER: _ClassVar[int]
    SEND_TIME_FIELD_NUMBER: _ClassVar[int]
    SEQUENCE_NUMBER_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    TRACE_HEADER_FIELD_NUMBER: _ClassVar[int]
    TYPED_ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    VISIBLE_TIME_FIELD_NUMBER: _ClassVar[int]
    attributes: _containers.ScalarMap[str, str]
    body: bytes
    checkpoint_size: int
    dead_letter_reason: str
    dead_letter_source_queue: str
    dead_lettered_time: _timestamp_pb2.Timestamp
    deduplication_id: str
    first_receive_time: _timestamp_pb2.Timestamp
    lease_deadline: _timestamp_pb2.Timestamp
    message_group_id: str
    message_id: str
    receive_count: int
    send_time: _timestamp_pb2.Timestamp
    sequence_number: str
    state: MessageState
    trace_header: str
    typed_attributes: _containers.MessageMap[str, TypedAttributeValue]
    visible_time: _timestamp_pb2.Timestamp
    def __init__(self, message_id: _Optional[str] = ..., body: _Optional[bytes] = ..., attributes: _Optional[_Mapping[str, str]] = ..., typed_attributes: _Optional[_Mapping[str, TypedAttributeValue]] = ..., receive_count: _Optional[int] = ..., send_time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., first_receive_time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., state: _Optional[_Union[MessageState, str]] = ..., lease_deadline: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., visible_time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., checkpoint_size: _Optional[int] = ..., dead_letter_source_queue: _Optional[str] = ..., dead_letter_reason: _Optional[str] = ..., message_group_id: _Optional[str] = ..., sequence_number: _Optional[str] = ..., deduplication_id: _Optional[str] = ..., trace_header: _Optional[str] = ..., dead_lettered_time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ReceivedMessage(_message.Message):
    __slots__ = ["attributes", "body", "checkpoint", "dead_letter_reason", "dead_letter_source_queue", "dead_lettered_time", "deduplication_id", "first_receive_time", "lease_deadline", "message_group_id", "message_id", "receipt_handle", "receive_count", "send_time", "sequence_number", "trace_header", "typed_attributes"]
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
        value: TypedAttributeValue
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[TypedAttributeValue, _Mapping]] = ...) -> None: ...
    ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    CHECKPOINT_FIELD_NUMBER: _ClassVar[int]
    DEAD_LETTERED_TIME_FIELD_NUMBER: _ClassVar[int]
    DEAD_LETTER_REASON_FIELD_NUMBER: _ClassVar[int]
    DEAD_LETTER_SOURCE_QUEUE_FIELD_NUMBER: _ClassVar[int]
    DEDUPLICATION_ID_FIELD_NUMBER: _ClassVar[int]
    FIRST_RECEIVE_TIME_FIELD_NUMBER: _ClassVar[int]
    LEASE_DEADLINE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_GROUP_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    RECEIPT_HANDLE_FIELD_NUMBER: _ClassVar[int]
    RECEIVE_COUNT_FIELD_NUMBER: _ClassVar[int]
    SEND_TIME_FIELD_NUMBER: _ClassVar[int]
    SEQUENCE_NUMBER_FIELD_NUMBER: _ClassVar[int]
    TRACE_HEADER_FIELD_NUMBER: _ClassVar[int]
    TYPED_ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    attributes: _containers.ScalarMap[str, str]
    body: bytes
    checkpoint: bytes
    dead_letter_reason: str
    dead_letter_source_queue: str
    dead_lettered_time: _timestamp_pb2.Timestamp
    deduplication_id: str
    first_receive_time: _timestamp_pb2.Timestamp
    lease_deadline: _timestamp_pb2.Timestamp
    message_group_id: str
    message_id: str
    receipt_handle: str
    receive_count: int
    send_time: _timestamp_pb2.Timestamp
    sequence_number: str
    trace_header: str
    typed_attributes: _containers.MessageMap[str, TypedAttributeValue]
    def __init__(self, message_id: _Optional[str] = ..., receipt_handle: _Optional[str] = ..., body: _Optional[bytes] = ..., attributes: _Optional[_Mapping[str, str]] = ..., receive_count: _Optional[int] = ..., send_time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., first_receive_time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., lease_deadline: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., checkpoint: _Optional[bytes] = ..., dead_letter_source_queue: _Optional[str] = ..., dead_letter_reason: _Optional[str] = ..., typed_attributes: _Optional[_Mapping[str, TypedAttributeValue]] = ..., message_group_id: _Optional[str] = ..., sequence_number: _Optional[str] = ..., deduplication_id: _Optional[str] = ..., trace_header: _Optional[str] = ..., dead_lettered_time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class SendBatchEntry(_message.Message):
    __slots__ = ["attributes", "body", "deduplication_id", "delay", "message_group_id", "trace_header", "typed_attributes"]
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
        value: TypedAttributeValue
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[TypedAttributeValue, _Mapping]] = ...) -> None: ...
    ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    DEDUPLICATION_ID_FIELD_NUMBER: _ClassVar[int]
    DELAY_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_GROUP_ID_FIELD_NUMBER: _ClassVar[int]
    TRACE_HEADER_FIELD_NUMBER: _ClassVar[int]
    TYPED_ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    attributes: _containers.ScalarMap[str, str]
    body: bytes
    deduplication_id: str
    delay: _duration_pb2.Duration
    message_group_id: str
    trace_header: str
    typed_attributes: _containers.MessageMap[str, TypedAttributeValue]
    def __init__(self, body: _Optional[bytes] = ..., attributes: _Optional[_Mapping[str, str]] = ..., delay: _Optional[_Union[_duration_pb2.Duration, _Mapping]] = ..., typed_attributes: _Optional[_Mapping[str, TypedAttributeValue]] = ..., message_group_id: _Optional[str] = ..., deduplication_id: _Optional[str] = ..., trace_header: _Optional[str] = ...) -> None: ...

class TypedAttributeValue(_message.Message):
    __slots__ = ["binary_value", "data_type", "string_value"]
    BINARY_VALUE_FIELD_NUMBER: _ClassVar[int]
    DATA_TYPE_FIELD_NUMBER: _ClassVar[int]
    STRING_VALUE_FIELD_NUMBER: _ClassVar[int]
    binary_value: bytes
    data_type: str
    string_value: str
    def __init__(self, data_type: _Optional[str] = ..., string_value: _Optional[str] = ..., binary_value: _Optional[bytes] = ...) -> None: ...

class MessageState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
