"""The generated stubs, in one place: nothing else imports holdshelf._gen."""

from holdshelf._gen.google.rpc import error_details_pb2, status_pb2
from holdshelf._gen.holdshelf.v1 import message_pb2, queue_pb2
from holdshelf._gen.holdshelf.v1 import queue_service_pb2 as service_pb2
from holdshelf._gen.holdshelf.v1.queue_service_pb2_grpc import QueueServiceStub

__all__ = ["error_details_pb2", "status_pb2", "message_pb2", "queue_pb2", "service_pb2", "QueueServiceStub"]
