"""A holdshelf worker for long jobs: Heartbeat leases, checkpoints, clean stop.

What it shows:
- Receive as a long poll (20 s; 1 s with --exit-when-idle), started with
  stub.Receive.future(...) so that SIGTERM/SIGINT can cancel it at once
  (a cancelled poll takes no message).
- One bidirectional Heartbeat stream per received batch, opened with
  release_on_disconnect: if this process dies, its leases are released and
  another worker gets the messages within milliseconds. In grpcio the
  request side is an iterator (here a generator draining a queue.Queue, so
  grpc's own thread is the one sender; ending it half-closes the stream) and
  the responses are read by a reader thread.
- A background renewal of every held lease each lease-seconds/3, and after
  every step of a job a renewal carrying a checkpoint (the step number as
  ASCII). A retry of the message resumes from the last checkpoint.
- Stable error reasons read from the google.rpc.Status in the
  grpc-status-details-bin trailer.

Each job "works" --steps steps of --step-ms each, then deletes its message.
It prints JSON lines: polling, received, checkpoint, processed, lease_lost,
error and, at the end, stopped. On SIGTERM or SIGINT it stops receiving,
finishes the job at hand, releases the batch's jobs it has not started,
half-closes the stream and exits 0.

Run it from the repository root, with the broker listening:

    npx buf generate --template buf.gen.python.yaml   # client code into .build/python
    PYTHONPATH=.build/python /usr/bin/python3 examples/python/worker.py --steps 3 --step-ms 50

Needs Python 3.11 with grpcio and protobuf (Debian: python3-grpcio,
python3-protobuf).
"""

from __future__ import annotations

import argparse
import collections
import json
import queue
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass

import grpc
from google.protobuf.duration_pb2 import Duration
from google.rpc import error_details_pb2, status_pb2

from holdshelf.v1 import message_pb2, queue_service_pb2 as pb, queue_service_pb2_grpc

_print_lock = threading.Lock()


def emit(**fields: object) -> None:
    """Prints one JSON line at once; the reader thread prints too."""
    with _print_lock:
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


def emit_error(rpc: str, err: grpc.RpcError) -> None:
    emit(event="error", rpc=rpc, code=err.code().name, reason=error_reason(err), message=err.details() or "")


def duration(seconds: float) -> Duration:
    value = Duration()
    value.FromMilliseconds(round(seconds * 1000))
    return value


@dataclass(frozen=True)
class Options:
    address: str
    queue: str
    steps: int
    step_ms: int
    lease_seconds: float
    batch: int
    exit_when_idle: bool


class StreamBroken(Exception):
    """The Heartbeat stream ended before it answered a request."""


class LeaseStream:
    """One Heartbeat stream: send() queues a request, a reader thread reads.

    The server answers requests in order, one response each, and may push
    unsolicited responses whose states are all held=false, LEASE_EXPIRED
    (no answer to a renewal ever says LEASE_EXPIRED). So each answer
    resolves the oldest pending Future, and every state, answer or notice,
    goes to on_state first.
    """

    def __init__(self, stub: queue_service_pb2_grpc.QueueServiceStub, queue_name: str,
                 on_state: Callable[[LeaseStream, pb.LeaseState], None]) -> None:
        self._queue = queue_name
        self._on_state = on_state
        self._requests: queue.Queue[pb.HeartbeatRequest | None] = queue.Queue()
        self._pending: collections.deque[Future] = collections.deque()
        self._lock = threading.Lock()
        self._ended = False
        self.broken = False
        self._call = stub.Heartbeat(self._request_iterator())
        self._reader = threading.Thread(target=self._read, name="heartbeat-reader", daemon=True)
        self._reader.start()

    def _request_iterator(self) -> Iterator[pb.HeartbeatRequest]:
        # grpc's thread drains this generator: the stream's one sender.
        while (request := self._requests.get()) is not None:
            yield request

    def send(self, renewals: list[pb.LeaseRenewal]) -> Future:
        """Queues one request; the Future gets its HeartbeatResponse."""
        answer: Future = Future()
        with self._lock:  # pending order == send order
            if self._ended:
                answer.set_exception(StreamBroken())
                return answer
            self._pending.append(answer)
            # release_on_disconnect is read from the first request only.
            self._requests.put(pb.HeartbeatRequest(queue=self._queue, leases=renewals, release_on_disconnect=True))
        return answer

    def _read(self) -> None:
        try:
            for response in self._call:
                states = list(response.leases)
                notice = bool(states) and all(not s.held and s.reason == "LEASE_EXPIRED" for s in states)
                answer = None
                if not notice:
                    with self._lock:
                        answer = self._pending.popleft() if self._pending else None
                for state in states:
                    self._on_state(self, state)
                if answer is not None:
                    answer.set_result(response)
        except grpc.RpcError as err:
            self.broken = True
            emit_error("Heartbeat", err)
        finally:
            with self._lock:
                self._ended = True
                unanswered = list(self._pending)
                self._pending.clear()
            for answer in unanswered:
                answer.set_exception(StreamBroken())

    def close(self) -> None:
        """Half-closes the stream (ends the iterator) and waits for the server to end it."""
        with self._lock:
            self._ended = True  # later sends fail at once
            self._requests.put(None)
        self._reader.join()


class Worker:
    def __init__(self, stub: queue_service_pb2_grpc.QueueServiceStub, options: Options) -> None:
        self._stub = stub
        self._options = options
        self._stopping = False
        self._poll: grpc.Future | None = None
        self._held: dict[str, str] = {}  # receipt handle -> message id: this batch's leases still ours
        self._lost: set[str] = set()  # handles of leases reported lost
        self._held_lock = threading.Lock()

    def request_stop(self, signum: int, frame: object) -> None:
        """Signal handler (runs on the main thread): stop after the job at hand.

        Cancelling the waiting Receive here ends its poll at once; grpc's
        Future.result() waits in short slices, so the handler runs promptly.
        """
        self._stopping = True
        poll = self._poll
        if poll is not None:
            poll.cancel()

    def run(self) -> None:
        while not self._stopping:
            messages = self._receive()
            if messages:
                self._work_batch(messages)
            elif messages is not None and self._options.exit_when_idle:
                break
        emit(event="stopped")

    def _receive(self) -> list[message_pb2.ReceivedMessage] | None:
        """One long poll: its messages, or None if it failed or was cancelled."""
        opts = self._options
        request = pb.ReceiveRequest(
            queue=opts.queue,
            max_messages=opts.batch,
            visibility_timeout=duration(opts.lease_seconds),
            wait_time=duration(1 if opts.exit_when_idle else 20),
        )
        self._poll = poll = self._stub.Receive.future(request)
        if self._stopping:  # a signal came before self._poll was set
            poll.cancel()
        emit(event="polling")
        try:
            return list(poll.result().messages)
        except grpc.FutureCancelledError:
            return None
        except grpc.RpcError as err:
            if err.code() == grpc.StatusCode.CANCELLED and self._stopping:
                return None
            emit_error("Receive", err)
            deadline = time.monotonic() + 1
            while not self._stopping and time.monotonic() < deadline:
                time.sleep(0.05)
            return None
        finally:
            self._poll = None

    def _renewal(self, handle: str, timeout: float, checkpoint: bytes | None = None) -> pb.LeaseRenewal:
        return pb.LeaseRenewal(receipt_handle=handle, visibility_timeout=duration(timeout), checkpoint=checkpoint)

    def _lease_state(self, stream: LeaseStream, state: pb.LeaseState) -> None:
        """Called by the reader for every LeaseState, before its answer's Future resolves."""
        handle = state.receipt_handle
        with self._held_lock:
            if state.held:
                # A renewal sent just before the loss was reported took the lease back
                # (nobody had received the message since): give it back at once.
                regained = handle in self._lost
                message_id = None
            else:
                regained = False
                message_id = self._held.pop(handle, None)  # None: deleted or released by us
                if message_id is not None:
                    self._lost.add(handle)
        if message_id is not None:
            emit(event="lease_lost", messageId=message_id, reason=state.reason)
        if regained:
            stream.send([self._renewal(handle, 0)])

    def _holds(self, handle: str) -> bool:
        with self._held_lock:
            return handle in self._held

    def _let_go(self, handle: str) -> bool:
        """Stops renewing a lease; False if it was lost already."""
        with self._held_lock:
            return self._held.pop(handle, None) is not None

    def _work_batch(self, messages: list[message_pb2.ReceivedMessage]) -> None:
        lease = self._options.lease_seconds
        with self._held_lock:
            self._held = {m.receipt_handle: m.message_id for m in messages}
            self._lost = set()
        stream = LeaseStream(self._stub, self._options.queue, self._lease_state)
        done = threading.Event()
        try:  # every lease on the stream before the first job starts
            stream.send([self._renewal(m.receipt_handle, lease) for m in messages]).result()
        except StreamBroken:
            pass  # printed by the reader; stream.broken skips the jobs below

        def renew_in_background() -> None:
            while not done.wait(lease / 3):
                with self._held_lock:
                    handles = list(self._held)
                if handles:  # answers are checked by the reader
                    stream.send([self._renewal(h, lease) for h in handles])

        renewer = threading.Thread(target=renew_in_background, name="lease-renewer", daemon=True)
        renewer.start()
        for message in messages:
            if self._stopping or stream.broken:
                break
            if self._holds(message.receipt_handle):
                self._work(stream, message)
        done.set()
        renewer.join()

        # Jobs not started (stopping): give them back now rather than at their deadline.
        with self._held_lock:
            unstarted, self._held = list(self._held), {}
        if unstarted and not stream.broken:
            try:
                stream.send([self._renewal(h, 0) for h in unstarted]).result()
            except StreamBroken:
                pass
        stream.close()

    def _work(self, stream: LeaseStream, message: message_pb2.ReceivedMessage) -> None:
        handle = message.receipt_handle
        body = message.body.decode("utf-8", "replace")
        checkpoint = message.checkpoint.decode() if message.HasField("checkpoint") else None
        emit(event="received", messageId=message.message_id, body=body,
             receiveCount=message.receive_count, checkpoint=checkpoint)
        start = int(checkpoint) if checkpoint and checkpoint.isdigit() else 0

        for step in range(start, self._options.steps):
            time.sleep(self._options.step_ms / 1000)  # the "work"
            if not self._holds(handle):
                return  # lease lost (already printed): another worker owns the job now
            renewal = self._renewal(handle, self._options.lease_seconds, str(step + 1).encode())
            try:
                state = stream.send([renewal]).result().leases[0]
            except StreamBroken:
                return
            if not (state.held and self._holds(handle)):
                return  # lost (already printed)
            emit(event="checkpoint", messageId=message.message_id, step=step + 1)

        if not self._let_go(handle):
            return
        try:
            self._stub.Delete(pb.DeleteRequest(queue=self._options.queue, receipt_handle=handle))
        except grpc.RpcError as err:
            emit_error("Delete", err)
            return
        emit(event="processed", messageId=message.message_id, body=body)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--address", default="127.0.0.1:50051", help="broker address (default %(default)s)")
    parser.add_argument("--queue", default="jobs", help="queue name (default %(default)s)")
    parser.add_argument("--steps", type=int, default=5, help="steps per job, may be 0 (default %(default)s)")
    parser.add_argument("--step-ms", type=int, default=200, help="milliseconds per step (default %(default)s)")
    parser.add_argument("--lease-seconds", type=float, default=30,
                        help="visibility timeout of each renewal; renewed every third of it (default %(default)s)")
    parser.add_argument("--batch", type=int, default=10, help="Receive max_messages (default %(default)s)")
    parser.add_argument("--exit-when-idle", action="store_true",
                        help="poll 1 s instead of 20 s and exit once a poll comes back empty")
    args = parser.parse_args()
    options = Options(**vars(args))

    with grpc.insecure_channel(args.address) as channel:
        worker = Worker(queue_service_pb2_grpc.QueueServiceStub(channel), options)
        signal.signal(signal.SIGTERM, worker.request_stop)
        signal.signal(signal.SIGINT, worker.request_stop)
        worker.run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
