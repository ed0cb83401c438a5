"""holdshelf: a client of the holdshelf queue broker and a lease-managing Consumer.

    from holdshelf import Client, Consumer

See docs/clients/python.md in the repository.
"""

from holdshelf import _requirements

_requirements.check()  # before the imports below need grpcio and protobuf: names what to pip install

from holdshelf.client import Client, PendingReceive
from holdshelf.consumer import Consumer, Handler
from holdshelf import reasons
from holdshelf.errors import (
    AlreadyExistsError, FailedPreconditionError, FieldViolation, HoldshelfError, InvalidArgumentError, LeaseError,
    LeaseLostError, NotFoundError, PermissionDeniedError, ResourceExhaustedError, UnauthenticatedError,
    UnavailableError,
)
from holdshelf.handler_context import HandlerContext
from holdshelf.heartbeat_stream import HeartbeatStream
from holdshelf.retry_later import RetryLater
from holdshelf.subscribe_stream import SubscribeStream
from holdshelf.values import (
    AckResult, DeduplicationScope, DeleteOutcome, EntryError, EntryResult, FlowControl, LeaseRenewal, LeaseState, Queue,
    QueueConfig, QueuePage, QueueStats, ReceivedMessage, RedrivePolicy, RetryPolicy, SendBatchEntry, SendResult,
    SqsEncryption, SubscribeResponse, TypedAttribute,
)

__all__ = [
    "Client", "PendingReceive", "Consumer", "Handler", "HandlerContext", "HeartbeatStream", "SubscribeStream",
    "RetryLater", "HoldshelfError", "LeaseLostError", "FieldViolation", "reasons",
    "NotFoundError", "AlreadyExistsError", "InvalidArgumentError", "FailedPreconditionError", "LeaseError",
    "ResourceExhaustedError", "UnavailableError", "UnauthenticatedError", "PermissionDeniedError",
    "AckResult", "DeduplicationScope", "DeleteOutcome", "EntryError", "EntryResult", "FlowControl", "LeaseRenewal", "LeaseState",
    "Queue", "QueueConfig", "QueuePage", "QueueStats", "ReceivedMessage", "RedrivePolicy", "RetryPolicy",
    "SendBatchEntry", "SendResult", "SqsEncryption", "SubscribeResponse", "TypedAttribute",
]
