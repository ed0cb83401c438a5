"""The generated stubs, in one place: nothing else imports holdshelf._gen."""

from collections.abc import Callable
from typing import Any

import grpc

from holdshelf._gen.google.rpc import error_details_pb2, status_pb2
from holdshelf._gen.holdshelf.v1 import message_pb2, queue_pb2, queue_service_pb2_grpc
from holdshelf._gen.holdshelf.v1 import queue_service_pb2 as service_pb2

# protoc's gRPC plugin writes no type hints: the stub's methods are Any, their requests and answers typed by the .pyi.
QueueServiceStub: Callable[[grpc.Channel], Any] = queue_service_pb2_grpc.QueueServiceStub

__all__ = ["error_details_pb2", "status_pb2", "message_pb2", "queue_pb2", "service_pb2", "QueueServiceStub"]
