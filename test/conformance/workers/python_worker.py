"""The Python conformance worker: test/conformance/worker-protocol.md on the holdshelf package.

Written as a user would write a worker, with Client and Consumer only.
Run with the python of a venv where the package is installed.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading

from holdshelf import Client, Consumer, HandlerContext, ReceivedMessage, RetryLater

_print_lock = threading.Lock()


def emit(**fields: object) -> None:
    """One JSON line, flushed: handlers print from several threads."""
    with _print_lock:
        print(json.dumps(fields), flush=True)


class JobFailed(Exception):
    """The plain error a job asks for with failure "raise"."""


class Cancelled(Exception):
    """Raised once the handler saw its cancellation; the Consumer ignores the outcome."""


class Worker:
    def __init__(self) -> None:
        self._active = 0
        self._lock = threading.Lock()

    def handle(self, message: ReceivedMessage, ctx: HandlerContext) -> None:
        with self._lock:
            self._active += 1
            active = self._active
        try:
            self._run_job(message, ctx, active)
        finally:
            with self._lock:
                self._active -= 1

    def _run_job(self, message: ReceivedMessage, ctx: HandlerContext, active: int) -> None:
        job = json.loads(message.body or b"{}")
        checkpoint = ctx.last_checkpoint.decode() if ctx.last_checkpoint is not None else None
        emit(event="received", id=message.message_id, receiveCount=message.receive_count,
             receiptHandle=message.receipt_handle, checkpoint=checkpoint, active=active)
        first = int(checkpoint) + 1 if checkpoint is not None else 0
        for step in range(first, job.get("steps", 0)):
            if ctx.cancelled.wait(job.get("stepMs", 0) / 1000):
                emit(event="cancelled", id=message.message_id)
                raise Cancelled()
            if job.get("checkpoint", True):
                ctx.checkpoint(str(step).encode())
                emit(event="checkpoint", id=message.message_id, step=step)
        if message.receive_count <= job.get("failTimes", 0):
            if job.get("failure", "raise") == "retryLater":
                emit(event="retrying", id=message.message_id)
                raise RetryLater(job.get("retrySeconds", 0))
            emit(event="raised", id=message.message_id)
            raise JobFailed(f"job failure {message.receive_count}")
        emit(event="finished", id=message.message_id)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--address", required=True)
    parser.add_argument("--queue", required=True)
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--visibility-timeout", type=float, default=None)
    parser.add_argument("--stop-grace", type=float, default=10)
    parser.add_argument("--wait-time", type=float, default=1)
    # receive forces the Consumer's fallback path (Receive and Heartbeat) on a broker with Subscribe.
    parser.add_argument("--mode", choices=("subscribe", "receive"), default="subscribe")
    args = parser.parse_args()

    with Client(args.address) as client:
        consumer = Consumer(client, args.queue, Worker().handle, concurrency=args.concurrency,
                            visibility_timeout=args.visibility_timeout, wait_time=args.wait_time,
                            stop_grace=args.stop_grace, subscribe=args.mode == "subscribe")
        consumer.stop_on_signals()
        emit(event="started")
        consumer.wait()
        emit(event="stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
