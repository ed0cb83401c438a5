"""Sends numbered jobs to a holdshelf queue: a minimal Python producer.

It creates the queue (CreateQueue with no config, so running it again is
fine), then sends the bodies "<prefix>-0" .. "<prefix>-<count-1>" with
SendBatch, up to 100 messages per call, and prints one JSON line per message:

    {"event": "sent", "messageId": "...", "body": "job-0"}

A failed call prints {"event": "error", "rpc", "code", "reason", "message"},
where reason is the stable ErrorInfo reason from the rich status, and exits 1.

Run it from the repository root, with the broker listening:

    npx buf generate --template buf.gen.python.yaml   # client code into .build/python
    PYTHONPATH=.build/python /usr/bin/python3 examples/python/producer.py --count 20

Needs Python 3.11 with grpcio and protobuf (Debian: python3-grpcio,
python3-protobuf).
"""

from __future__ import annotations

import argparse
import json
import sys

import grpc
from google.rpc import error_details_pb2, status_pb2

from holdshelf.v1 import message_pb2, queue_service_pb2 as pb, queue_service_pb2_grpc

BATCH_LIMIT = 100  # SendBatch takes 1 to 100 entries


def emit(**fields: object) -> None:
    print(json.dumps(fields), flush=True)


def error_reason(err: grpc.RpcError) -> str:
    """The ErrorInfo reason from the grpc-status-details-bin trailer, or ""."""
    for key, value in err.trailing_metadata() or ():
        if key == "grpc-status-details-bin":
            info = error_details_pb2.ErrorInfo()
            for detail in status_pb2.Status.FromString(value).details:
                if detail.Unpack(info):
                    return info.reason
    return ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--address", default="127.0.0.1:50051", help="broker address (default %(default)s)")
    parser.add_argument("--queue", default="jobs", help="queue name (default %(default)s)")
    parser.add_argument("--count", type=int, default=10, help="messages to send (default %(default)s)")
    parser.add_argument("--prefix", default="job", help='bodies are "<prefix>-<i>" (default %(default)s)')
    args = parser.parse_args()

    with grpc.insecure_channel(args.address) as channel:
        stub = queue_service_pb2_grpc.QueueServiceStub(channel)
        rpc = "CreateQueue"
        try:
            stub.CreateQueue(pb.CreateQueueRequest(name=args.queue))
            rpc = "SendBatch"
            for start in range(0, args.count, BATCH_LIMIT):
                bodies = [f"{args.prefix}-{i}" for i in range(start, min(start + BATCH_LIMIT, args.count))]
                entries = [message_pb2.SendBatchEntry(body=body.encode()) for body in bodies]
                response = stub.SendBatch(pb.SendBatchRequest(queue=args.queue, entries=entries))
                for message_id, body in zip(response.message_ids, bodies):
                    emit(event="sent", messageId=message_id, body=body)
        except grpc.RpcError as err:
            emit(event="error", rpc=rpc, code=err.code().name, reason=error_reason(err), message=err.details() or "")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
