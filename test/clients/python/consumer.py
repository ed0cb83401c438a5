"""The Consumer's error paths that the conformance suite does not reach, one JSON line each.

A fixture of test/clients/python-client.test.ts:
    invalid_options   Consumer arguments refused before anything starts
    missing_queue     a Consumer of a queue that does not exist: on_error hears
                      QUEUE_NOT_FOUND (fail_fast.py has the rest), and stop() still returns
    lost_lease        someone else receives the message (released by them
                      first; on Subscribe, the Consumer's own stream may take
                      it): ctx.checkpoint raises LeaseLostError, and
                      ctx.cancelled is set with ctx.lost saying why
    handler_error     a handler's exception reaches on_error with its message
    given_back_error  so does one raised after stop() gave the message back
    retry_too_late    a RetryLater the broker refuses (over 12 h) reaches on_error,
                      and so does the refusal of its failed renewal
    zero_visibility   a queue whose visibility timeout is 0 is refused at start
                      (on_error hears why, and the Consumer stops) unless the
                      Consumer gives its own visibility_timeout
    big_checkpoint    a checkpoint over 64 KiB raises ValueError and keeps the lease
    signals           stop_on_signals puts the previous handler back once a signal came
    dead_lettered     (both paths) a handled message dead-lettered before its delete
                      or ack reaches on_error as a LeaseLostError DEAD_LETTERED
    delete_retry      (Receive path) a delete no broker answers (UNAVAILABLE for longer than the
                      lease) is tried again, each attempt with a 30 s deadline,
                      until it succeeds, the lease kept meanwhile (the message is
                      never delivered again); one the broker refuses is not
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import signal
import threading
import time
from collections.abc import Callable

from holdshelf import (
    Client, Consumer, DeleteOutcome, HandlerContext, HoldshelfError, LeaseLostError, QueueConfig, ReceivedMessage,
    RedrivePolicy, RetryLater,
)


def emit(check: str, **fields: object) -> None:
    print(json.dumps({"check": check, **fields}), flush=True)


def invalid_options(client: Client) -> None:
    refused = []
    for options in ({"concurrency": 0}, {"visibility_timeout": 0}, {"renew_fraction": 1}, {"wait_time": -1},
                    {"visibility_timeout": float("inf")}):
        try:
            Consumer(client, "consumer-q", lambda m, c: None, **options).stop()
            refused.append(None)
        except ValueError as error:
            refused.append(type(error).__name__)
    emit("invalid_options", refused=refused)


def missing_queue(client: Client) -> None:
    heard: queue.SimpleQueue[Exception] = queue.SimpleQueue()
    consumer = Consumer(client, "no-such-queue", lambda m, c: None, on_error=lambda error, message: heard.put(error))
    error = heard.get(timeout=10)
    consumer.stop(0)
    emit("missing_queue", type=type(error).__name__, reason=getattr(error, "reason", ""))


def lost_lease(client: Client) -> None:
    client.send("consumer-q", "to lose")
    started: queue.SimpleQueue[str] = queue.SimpleQueue()
    superseded = threading.Event()
    outcome: dict[str, object] = {}
    finished = threading.Event()

    def handler(message: ReceivedMessage, ctx: HandlerContext) -> None:
        if finished.is_set():
            return  # the message again: on Subscribe, the Consumer's own stream may take it back
        started.put(message.receipt_handle)
        superseded.wait(10)
        try:
            ctx.checkpoint(b"too late")
            outcome["checkpoint"] = "stored"
        except LeaseLostError as error:
            outcome["checkpoint"] = f"LeaseLostError {error.reason}"
        outcome["cancelled"] = ctx.cancelled.is_set()
        outcome["lost"] = ctx.lost.reason if ctx.cancelled.is_set() else None
        finished.set()

    # A 30 s lease: no renewal but the one at receive, which may still be on
    # its way and take the message back from a release, hence the loop.
    consumer = Consumer(client, "consumer-q", handler, visibility_timeout=30, wait_time=1)
    handle = started.get(timeout=10)
    taken: list[ReceivedMessage] = []
    for _ in range(10):  # someone else releases the message and receives it: the handle is superseded
        try:
            client.change_visibility("consumer-q", handle, 0)
        except HoldshelfError as error:
            if error.reason != "LEASE_SUPERSEDED":
                raise
            break  # received again already: a Subscribe stream, the Consumer's own, took the released message
        taken = client.receive("consumer-q", visibility_timeout=30, wait_time=0.5)
        if taken:
            break
    superseded.set()
    finished.wait(15)
    consumer.stop(5)
    emit("lost_lease", **outcome)
    if taken:
        client.delete("consumer-q", taken[0].receipt_handle)
    client.purge_queue("consumer-q")  # or handled and deleted again by the Consumer


def handler_error(client: Client) -> None:
    message_id = client.send("consumer-q", "to fail")
    heard: queue.SimpleQueue[tuple[Exception, ReceivedMessage | None]] = queue.SimpleQueue()

    def handler(message: ReceivedMessage, ctx: HandlerContext) -> None:
        raise ValueError("handler failed")

    consumer = Consumer(client, "consumer-q", handler, wait_time=1, on_error=lambda e, m: heard.put((e, m)))
    error, message = heard.get(timeout=10)
    consumer.stop(5)
    emit("handler_error", type=type(error).__name__, text=str(error),
         same_message=message is not None and message.message_id == message_id)


def retry_too_late(client: Client) -> None:
    client.send("consumer-q", "to retry much later")
    heard: queue.SimpleQueue[BaseException] = queue.SimpleQueue()

    def handler(message: ReceivedMessage, ctx: HandlerContext) -> None:
        raise RetryLater(13 * 3600)

    # A 30 s lease: the refused message does not come back during the check.
    consumer = Consumer(client, "consumer-q", handler, visibility_timeout=30, wait_time=1,
                        on_error=lambda e, m: heard.put(e))
    errors = [heard.get(timeout=10), heard.get(timeout=10)]
    consumer.stop(5)
    emit("retry_too_late", errors=[[type(e).__name__, getattr(e, "reason", "")] for e in errors])


def zero_visibility(client: Client) -> None:
    client.create_queue("zero-vt-q", QueueConfig(visibility_timeout=0))
    client.purge_queue("zero-vt-q")
    client.send("zero-vt-q", "needs a lease")
    heard: queue.SimpleQueue[BaseException] = queue.SimpleQueue()
    handled = threading.Event()

    def handler(message: ReceivedMessage, ctx: HandlerContext) -> None:
        handled.set()

    refused = Consumer(client, "zero-vt-q", handler, wait_time=1, on_error=lambda e, m: heard.put(e))
    error = heard.get(timeout=10)
    stopped = refused.wait(10)
    refused.stop()
    received = handled.is_set()
    with Consumer(client, "zero-vt-q", handler, visibility_timeout=5, wait_time=1):
        handled.wait(10)
    stats = client.get_queue("zero-vt-q").stats
    emit("zero_visibility", type=type(error).__name__, text=str(error), stopped=stopped, received=received,
         with_option=handled.is_set(), deleted=stats.visible + stats.in_flight + stats.delayed == 0)


def big_checkpoint(client: Client) -> None:
    client.send("consumer-q", "too big a checkpoint")
    outcome: dict[str, object] = {}
    finished = threading.Event()

    def handler(message: ReceivedMessage, ctx: HandlerContext) -> None:
        try:
            ctx.checkpoint(b"x" * 65537)
            outcome["big"] = "stored"
        except ValueError:
            outcome["big"] = "ValueError"
        ctx.checkpoint(b"x" * 65536)  # the largest allowed
        outcome["cancelled"] = ctx.cancelled.is_set()
        outcome["last"] = len(ctx.last_checkpoint or b"")
        finished.set()

    consumer = Consumer(client, "consumer-q", handler, wait_time=1)
    finished.wait(10)
    consumer.stop(5)
    stats = client.get_queue("consumer-q").stats
    outcome["deleted"] = stats.visible + stats.in_flight + stats.delayed == 0
    emit("big_checkpoint", **outcome)


def signals(client: Client) -> None:
    heard: list[int] = []

    def previous(signum: int, frame: object) -> None:
        heard.append(signum)

    signal.signal(signal.SIGUSR1, previous)
    consumer = Consumer(client, "consumer-q", lambda m, c: None, wait_time=1)
    consumer.stop_on_signals([signal.SIGUSR1])
    installed = signal.getsignal(signal.SIGUSR1) is not previous
    os.kill(os.getpid(), signal.SIGUSR1)
    stopped = consumer.wait(10)
    restored = signal.getsignal(signal.SIGUSR1) is previous
    if restored:  # else SIGUSR1's default action would end this script
        os.kill(os.getpid(), signal.SIGUSR1)
        deadline = time.monotonic() + 5
        while not heard and time.monotonic() < deadline:
            time.sleep(0.01)  # the handler runs on this thread between bytecodes
    signal.signal(signal.SIGUSR1, signal.SIG_DFL)
    emit("signals", installed=installed, stopped=stopped, restored=restored, previous_called=len(heard))


def given_back_error(client: Client) -> None:
    client.send("consumer-q", "given back unfinished")
    heard: queue.SimpleQueue[tuple[BaseException, ReceivedMessage | None]] = queue.SimpleQueue()
    started = threading.Event()

    def handler(message: ReceivedMessage, ctx: HandlerContext) -> None:
        started.set()
        ctx.cancelled.wait(10)
        raise ValueError("stopped unfinished")

    consumer = Consumer(client, "consumer-q", handler, visibility_timeout=30, wait_time=1,
                        on_error=lambda e, m: heard.put((e, m)))
    started.wait(10)
    consumer.stop(0)  # gives the message back at once, cancelling the handler
    error, message = heard.get(timeout=10)
    stats = client.get_queue("consumer-q").stats
    emit("given_back_error", type=type(error).__name__, text=str(error), with_message=message is not None,
         released=stats.visible == 1, others=heard.qsize())


def wait_until(condition: Callable[[], bool], timeout: float = 15) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.01)
    return True


class FlakyDeletes:
    """A Client whose deletes fail with `failure` for `fail_for` seconds from the first, then pass: a broker restarting, say."""

    def __init__(self, client: Client, failure: HoldshelfError, fail_for: float) -> None:
        self._client = client
        self._failure = failure
        self._fail_for = fail_for
        self._fail_until: float | None = None
        self.attempts = 0
        self.timeouts: list[float | None] = []
        self.deleted = threading.Event()

    def __getattr__(self, name: str) -> object:
        return getattr(self._client, name)

    def delete(self, queue_name: str, receipt_handle: str, *, timeout: float | None = None) -> DeleteOutcome:
        self.attempts += 1
        self.timeouts.append(timeout)
        if self._fail_until is None:
            self._fail_until = time.monotonic() + self._fail_for
        if time.monotonic() < self._fail_until:
            raise self._failure
        outcome = self._client.delete(queue_name, receipt_handle, timeout=timeout)
        self.deleted.set()
        return outcome


def dead_lettered(client: Client) -> None:
    client.create_queue("consumer-dlq")
    client.create_queue("consumer-once", QueueConfig(redrive_policy=RedrivePolicy("consumer-dlq", 1)))
    outcome: dict[str, object] = {}
    for dead, path in enumerate(("subscribe", "receive"), start=1):
        client.send("consumer-once", path)
        heard: queue.SimpleQueue[BaseException] = queue.SimpleQueue()

        def handler(message: ReceivedMessage, ctx: HandlerContext, dead: int = dead) -> None:
            # Its last delivery released: the broker moves it to the dead-letter queue. The ack must
            # come after the move, not race it: get_queue runs the move that is due.
            client.change_visibility("consumer-once", message.receipt_handle, 0)
            while client.get_queue("consumer-dlq").stats.visible < dead:
                client.get_queue("consumer-once")
                time.sleep(0.02)

        consumer = Consumer(client, "consumer-once", handler, wait_time=1, on_error=lambda e, m: heard.put(e),
                            subscribe=path == "subscribe")
        error = heard.get(timeout=10)
        consumer.stop(5)
        outcome[path] = [type(error).__name__, getattr(error, "reason", "")]
    outcome["dead"] = client.get_queue("consumer-dlq").stats.visible
    emit("dead_lettered", **outcome)


def delete_retry(client: Client) -> None:
    import grpc

    outcome: dict[str, object] = {}
    for case, failure, lease, fail_for in (("unavailable", grpc.StatusCode.UNAVAILABLE, 2, 3.0),
                                          ("refused", grpc.StatusCode.FAILED_PRECONDITION, 30, float("inf"))):
        client.send("consumer-q", case)
        flaky = FlakyDeletes(client, HoldshelfError(failure, "QUEUE_MOVING", "no broker"), fail_for)
        heard: queue.SimpleQueue[BaseException] = queue.SimpleQueue()
        handled: list[str] = []
        # Two slots: a message whose lease were dropped during the retries
        # would come back after 2 s and be handled again by the free one.
        # subscribe=False: on a Subscribe stream a handled message is acked, not deleted.
        consumer = Consumer(flaky, "consumer-q", lambda m, c: handled.append(m.message_id),  # type: ignore[arg-type]
                            concurrency=2, visibility_timeout=lease, wait_time=1, on_error=lambda e, m: heard.put(e),
                            subscribe=False)
        wait_until(lambda: flaky.attempts >= 1)
        # Its job over, the delete has no further attempt to make: the retries are in the job.
        finished = wait_until(lambda: flaky.deleted.is_set() if case == "unavailable" else consumer.active == 0)
        wait_until(lambda: consumer.active == 0)
        consumer.stop(5)
        counts = client.get_queue("consumer-q").stats
        outcome[case] = {"finished": finished, "handled": len(handled), "attempts": flaky.attempts,
                         "errors": heard.qsize(), "timeouts": sorted(set(flaky.timeouts)),
                         "left": counts.visible + counts.in_flight + counts.delayed}
        client.purge_queue("consumer-q")
    emit("delete_retry", **outcome)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--address", required=True)
    args = parser.parse_args()
    with Client(args.address) as client:
        client.create_queue("consumer-q")
        client.purge_queue("consumer-q")  # a rerun starts empty
        invalid_options(client)
        missing_queue(client)
        lost_lease(client)
        handler_error(client)
        client.purge_queue("consumer-q")  # the failing message may be back
        given_back_error(client)
        client.purge_queue("consumer-q")  # the message given back
        retry_too_late(client)
        client.purge_queue("consumer-q")  # the refused message is still leased
        zero_visibility(client)
        big_checkpoint(client)
        signals(client)
        delete_retry(client)
        dead_lettered(client)


if __name__ == "__main__":
    try:
        main()
    except HoldshelfError as error:
        print(json.dumps({"check": "crashed", "error": str(error)}), flush=True)
        raise
