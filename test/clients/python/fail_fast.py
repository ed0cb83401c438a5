"""A Consumer fails fast on errors no retry can fix, and keeps retrying transient ones, one JSON line each.

A fixture of test/clients/python-client.test.ts. Against a broker (--address):
    missing_get_queue  a Consumer of a queue that does not exist, reading its
                       visibility timeout with GetQueue: wait() raises
                       NotFoundError QUEUE_NOT_FOUND at once
    missing_subscribe  the same with a visibility_timeout: the Subscribe stream's refusal
    missing_receive    the same on the Receive path (subscribe=False)
    deleted_subscribe  a running Consumer, a handler at work, whose queue is
                       deleted: wait() raises NotFoundError at once
    deleted_receive    the same on the Receive path (a free slot's receive hears it)
    transient          through a proxy that refuses the first GetQueue calls
                       (UNAVAILABLE QUEUE_MOVING) and Subscribe streams
                       (UNAVAILABLE SHUTTING_DOWN): each reaches on_error, is
                       retried, and the message is still handled
With --token and --denied-queue (a broker with tokens, a queue the token may not consume, or
a token it does not know):
    denied_get_queue, denied_subscribe   wait() raises PermissionDeniedError (UnauthenticatedError)
Each line has the error's class, code and reason, the seconds wait() took,
and what on_error heard.
"""

from __future__ import annotations

import argparse
import json
import threading
import time

import grpc
from forwarding_proxy import ForwardingProxy

from holdshelf import Client, Consumer, HandlerContext, HoldshelfError, ReceivedMessage, reasons

WAIT = 10.0  # seconds: far more than failing fast takes


def emit(check: str, **fields: object) -> None:
    print(json.dumps({"check": check, **fields}), flush=True)


def ignore(message: ReceivedMessage, ctx: HandlerContext) -> None:
    pass


def fails_fast(check: str, client: Client, queue: str, **options: object) -> None:
    heard: list[str] = []
    consumer = Consumer(client, queue, ignore, on_error=lambda error, message: heard.append(type(error).__name__),
                        **options)  # type: ignore[arg-type]
    begun = time.monotonic()
    try:
        stopped = consumer.wait(WAIT)
        emit(check, raised=None, stopped=stopped)
    except HoldshelfError as error:
        emit(check, raised=type(error).__name__, code=error.code.name, reason=error.reason,
             seconds=time.monotonic() - begun, heard=heard, again=_raises_again(consumer),
             failure=consumer.failure is error)
    consumer.stop()


def _raises_again(consumer: Consumer) -> bool:
    try:
        consumer.wait(0)
    except HoldshelfError:
        return True
    return False


def deleted(check: str, client: Client, subscribe: bool) -> None:
    queue = f"fail-fast-{check}"
    client.create_queue(queue)
    client.send(queue, "at work when its queue goes")
    started = threading.Event()

    def work(message: ReceivedMessage, ctx: HandlerContext) -> None:
        started.set()
        ctx.cancelled.wait(WAIT)
        raise ctx.lost

    heard: list[str] = []
    consumer = Consumer(client, queue, work, concurrency=2, visibility_timeout=30, subscribe=subscribe,
                        on_error=lambda error, message: heard.append(type(error).__name__))
    started.wait(WAIT)
    begun = time.monotonic()
    client.delete_queue(queue)
    try:
        consumer.wait(WAIT)
        emit(check, raised=None)
    except HoldshelfError as error:
        emit(check, raised=type(error).__name__, reason=error.reason, seconds=time.monotonic() - begun,
             heard=heard[0] if heard else None)
    consumer.stop()


def transient(upstream: str, direct: Client) -> None:
    proxy = ForwardingProxy(upstream, subscribe=True)
    try:
        direct.create_queue("fail-fast-transient")
        direct.send("fail-fast-transient", "after the retries")
        proxy.refuse("GetQueue", 2, grpc.StatusCode.UNAVAILABLE, reasons.QUEUE_MOVING)
        proxy.refuse("Subscribe", 2, grpc.StatusCode.UNAVAILABLE, reasons.SHUTTING_DOWN)
        heard: list[str] = []
        handled = threading.Event()
        with Client(proxy.address) as client:
            consumer = Consumer(client, "fail-fast-transient", lambda m, c: handled.set(),
                                on_error=lambda error, message: heard.append(
                                    f"{type(error).__name__} {getattr(error, 'reason', '')}"))
            finished = handled.wait(WAIT)
            running = not consumer.wait(0.2)  # retried: not stopped, nothing raised
            consumer.stop()
        emit("transient", handled=finished, running=running, heard=heard, calls=dict(proxy.calls))
    finally:
        proxy.stop()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--address", required=True)
    parser.add_argument("--token")
    parser.add_argument("--denied-queue")
    args = parser.parse_args()
    with Client(args.address, token=args.token) as client:
        if args.denied_queue:
            fails_fast("denied_get_queue", client, args.denied_queue)
            fails_fast("denied_subscribe", client, args.denied_queue, visibility_timeout=5)
            return
        fails_fast("missing_get_queue", client, "no-such-queue")
        fails_fast("missing_subscribe", client, "no-such-queue", visibility_timeout=5)
        fails_fast("missing_receive", client, "no-such-queue", visibility_timeout=5, subscribe=False)
        deleted("deleted_subscribe", client, subscribe=True)
        deleted("deleted_receive", client, subscribe=False)
        transient(args.address, client)


if __name__ == "__main__":
    main()
