"""Interop probe: how a Python grpcio client sees holdshelf's errors.

A test fixture for test/interop (not an example). It runs five checks in
order against a broker and prints one JSON line per check:

    queue_not_found   GetQueue of "<prefix>-missing"
    invalid_argument  Receive with max_messages=1000 (fields: the BadRequest's)
    lease_superseded  Delete with a handle whose message was received again
    deadline          a 10 s long poll with a 300 ms client timeout; then a
                      Send, and the queue's visible / in-flight counts
    cancel            a 10 s long poll cancelled by the client after 300 ms;
                      then the same

Codes are grpc.StatusCode names (err.code().name); reasons come from the
google.rpc.ErrorInfo in the grpc-status-details-bin trailer ("" if none;
"OK" as the code if a call unexpectedly succeeded). Exits 0 once every
check has printed, 1 only on an unexpected crash.

    npx buf generate --template buf.gen.python.yaml
    PYTHONPATH=.build/python /usr/bin/python3 test/interop/python/probe.py --address 127.0.0.1:50051
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable

import grpc
from google.protobuf.duration_pb2 import Duration
from google.rpc import error_details_pb2, status_pb2

from holdshelf.v1 import queue_service_pb2 as pb, queue_service_pb2_grpc


def emit(**fields: object) -> None:
    print(json.dumps(fields), flush=True)


def seconds(value: float) -> Duration:
    duration = Duration()
    duration.FromMilliseconds(round(value * 1000))
    return duration


def rich_status(err: grpc.RpcError) -> tuple[str, list[str]]:
    """(ErrorInfo reason or "", BadRequest field names) from grpc-status-details-bin."""
    reason, fields = "", []
    for key, value in err.trailing_metadata() or ():
        if key != "grpc-status-details-bin":
            continue
        for detail in status_pb2.Status.FromString(value).details:
            info, bad_request = error_details_pb2.ErrorInfo(), error_details_pb2.BadRequest()
            if detail.Unpack(info):
                reason = info.reason
            elif detail.Unpack(bad_request):
                fields += [violation.field for violation in bad_request.field_violations]
    return reason, fields


def failure(call: Callable[[], object]) -> tuple[str, str, list[str]]:
    """Runs a call expected to fail: (code name, reason, BadRequest fields)."""
    try:
        call()
    except grpc.RpcError as err:
        return (err.code().name, *rich_status(err))
    return "OK", "", []


class Probe:
    def __init__(self, stub: queue_service_pb2_grpc.QueueServiceStub, prefix: str) -> None:
        self.stub = stub
        self.queue = f"{prefix}-q"
        self.missing = f"{prefix}-missing"

    def receive_one(self, visibility: float = 30) -> pb.ReceivedMessage:
        response = self.stub.Receive(pb.ReceiveRequest(
            queue=self.queue, max_messages=1, visibility_timeout=seconds(visibility), wait_time=seconds(5)))
        if len(response.messages) != 1:
            raise RuntimeError(f"expected one message on {self.queue}, got {len(response.messages)}")
        return response.messages[0]

    def delete(self, handle: str) -> None:
        self.stub.Delete(pb.DeleteRequest(queue=self.queue, receipt_handle=handle))

    def send_and_count(self) -> dict[str, int]:
        """Sends one message, reads the counts, then receives and deletes it."""
        self.stub.Send(pb.SendRequest(queue=self.queue, body=b"after"))
        stats = self.stub.GetQueue(pb.GetQueueRequest(name=self.queue)).queue.stats
        counts = {"visibleAfter": stats.visible, "inFlightAfter": stats.in_flight}
        self.delete(self.receive_one().receipt_handle)
        return counts

    def queue_not_found(self) -> None:
        code, reason, _ = failure(lambda: self.stub.GetQueue(pb.GetQueueRequest(name=self.missing)))
        emit(check="queue_not_found", code=code, reason=reason)

    def invalid_argument(self) -> None:
        self.stub.CreateQueue(pb.CreateQueueRequest(name=self.queue))
        self.stub.PurgeQueue(pb.PurgeQueueRequest(name=self.queue))  # a rerun starts empty
        code, reason, fields = failure(
            lambda: self.stub.Receive(pb.ReceiveRequest(queue=self.queue, max_messages=1000)))
        emit(check="invalid_argument", code=code, reason=reason, fields=fields)

    def lease_superseded(self) -> None:
        self.stub.Send(pb.SendRequest(queue=self.queue, body=b"superseded"))
        first = self.receive_one().receipt_handle
        self.stub.ChangeVisibility(pb.ChangeVisibilityRequest(
            queue=self.queue, receipt_handle=first, visibility_timeout=seconds(0)))
        second = self.receive_one().receipt_handle
        code, reason, _ = failure(lambda: self.delete(first))
        emit(check="lease_superseded", code=code, reason=reason)
        self.delete(second)

    def deadline(self) -> None:
        long_poll = pb.ReceiveRequest(queue=self.queue, max_messages=1, wait_time=seconds(10))
        code, _, _ = failure(lambda: self.stub.Receive(long_poll, timeout=0.3))
        emit(check="deadline", code=code, **self.send_and_count())

    def cancel(self) -> None:
        long_poll = pb.ReceiveRequest(queue=self.queue, max_messages=1, wait_time=seconds(10))
        future = self.stub.Receive.future(long_poll)
        time.sleep(0.3)
        future.cancel()
        code = future.code().name  # as the client sees it: CANCELLED
        emit(check="cancel", code=code, **self.send_and_count())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--address", default="127.0.0.1:50051")
    parser.add_argument("--queue", default="jobs", help="accepted for uniformity; the probe uses its own queues")
    parser.add_argument("--queue-prefix", default="probe", help="queues <P>-missing and <P>-q (default %(default)s)")
    args = parser.parse_args()
    with grpc.insecure_channel(args.address) as channel:
        probe = Probe(queue_service_pb2_grpc.QueueServiceStub(channel), args.queue_prefix)
        probe.queue_not_found()
        probe.invalid_argument()
        probe.lease_superseded()
        probe.deadline()
        probe.cancel()
    return 0


if __name__ == "__main__":
    sys.exit(main())
