from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class BackupRequest(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class BackupResponse(_message.Message):
    __slots__ = ["data"]
    DATA_FIELD_NUMBER: _ClassVar[int]
    data: bytes
    def __init__(self, data: _Optional[bytes] = ...) -> None: ...

class BrokerBudget(_message.Message):
    __slots__ = ["limit", "name", "unit", "used"]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    UNIT_FIELD_NUMBER: _ClassVar[int]
    USED_FIELD_NUMBER: _ClassVar[int]
    limit: int
    name: str
    unit: str
    used: int
    def __init__(self, name: _Optional[str] = ..., used: _Optional[int] = ..., limit: _Optional[int] = ..., unit: _Optional[str] = ...) -> None: ...

class BrokerStatus(_message.Message):
    __slots__ = ["address", "budgets", "heartbeat_streams", "node_id", "started_at_ms", "state", "storage", "subscribe_streams", "version"]
    ADDRESS_FIELD_NUMBER: _ClassVar[int]
    BUDGETS_FIELD_NUMBER: _ClassVar[int]
    HEARTBEAT_STREAMS_FIELD_NUMBER: _ClassVar[int]
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    STARTED_AT_MS_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    STORAGE_FIELD_NUMBER: _ClassVar[int]
    SUBSCRIBE_STREAMS_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    address: str
    budgets: _containers.RepeatedCompositeFieldContainer[BrokerBudget]
    heartbeat_streams: int
    node_id: str
    started_at_ms: int
    state: str
    storage: str
    subscribe_streams: int
    version: str
    def __init__(self, node_id: _Optional[str] = ..., address: _Optional[str] = ..., version: _Optional[str] = ..., started_at_ms: _Optional[int] = ..., storage: _Optional[str] = ..., state: _Optional[str] = ..., budgets: _Optional[_Iterable[_Union[BrokerBudget, _Mapping]]] = ..., heartbeat_streams: _Optional[int] = ..., subscribe_streams: _Optional[int] = ...) -> None: ...

class ClusterMember(_message.Message):
    __slots__ = ["address", "last_heartbeat_ms", "live", "node_id", "shards"]
    ADDRESS_FIELD_NUMBER: _ClassVar[int]
    LAST_HEARTBEAT_MS_FIELD_NUMBER: _ClassVar[int]
    LIVE_FIELD_NUMBER: _ClassVar[int]
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    SHARDS_FIELD_NUMBER: _ClassVar[int]
    address: str
    last_heartbeat_ms: int
    live: bool
    node_id: str
    shards: int
    def __init__(self, node_id: _Optional[str] = ..., address: _Optional[str] = ..., shards: _Optional[int] = ..., last_heartbeat_ms: _Optional[int] = ..., live: bool = ...) -> None: ...

class GetBrokerStatusRequest(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class GetBrokerStatusResponse(_message.Message):
    __slots__ = ["brokers"]
    BROKERS_FIELD_NUMBER: _ClassVar[int]
    brokers: _containers.RepeatedCompositeFieldContainer[BrokerStatus]
    def __init__(self, brokers: _Optional[_Iterable[_Union[BrokerStatus, _Mapping]]] = ...) -> None: ...

class GetClusterStatusRequest(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class GetClusterStatusResponse(_message.Message):
    __slots__ = ["clustered", "events", "members", "node_id", "shards"]
    CLUSTERED_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    MEMBERS_FIELD_NUMBER: _ClassVar[int]
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    SHARDS_FIELD_NUMBER: _ClassVar[int]
    clustered: bool
    events: _containers.RepeatedCompositeFieldContainer[ShardEvent]
    members: _containers.RepeatedCompositeFieldContainer[ClusterMember]
    node_id: str
    shards: _containers.RepeatedCompositeFieldContainer[ShardOwner]
    def __init__(self, clustered: bool = ..., node_id: _Optional[str] = ..., members: _Optional[_Iterable[_Union[ClusterMember, _Mapping]]] = ..., shards: _Optional[_Iterable[_Union[ShardOwner, _Mapping]]] = ..., events: _Optional[_Iterable[_Union[ShardEvent, _Mapping]]] = ...) -> None: ...

class ShardEvent(_message.Message):
    __slots__ = ["kind", "node_id", "peer", "reason", "shard", "time_ms"]
    KIND_FIELD_NUMBER: _ClassVar[int]
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    PEER_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    SHARD_FIELD_NUMBER: _ClassVar[int]
    TIME_MS_FIELD_NUMBER: _ClassVar[int]
    kind: str
    node_id: str
    peer: str
    reason: str
    shard: int
    time_ms: int
    def __init__(self, time_ms: _Optional[int] = ..., kind: _Optional[str] = ..., shard: _Optional[int] = ..., node_id: _Optional[str] = ..., peer: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class ShardOwner(_message.Message):
    __slots__ = ["epoch", "owner", "shard"]
    EPOCH_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    SHARD_FIELD_NUMBER: _ClassVar[int]
    epoch: int
    owner: str
    shard: int
    def __init__(self, shard: _Optional[int] = ..., owner: _Optional[str] = ..., epoch: _Optional[int] = ...) -> None: ...
