"""The Consumer on Subscribe and its fallback, through a forwarding proxy that records the calls, one JSON line per check.

A fixture of test/clients/python-client.test.ts, against a broker with Subscribe:
    fallback     a broker answering Subscribe with UNIMPLEMENTED (the proxy without it): the Consumer
                 receives with Receive, Heartbeat and Delete instead, and reports no error
    forced       subscribe=False: Receive even though the broker has Subscribe
    subscribed   30 messages, concurrency 4: one Subscribe stream and no other consuming call; its
                 first request names the queue, the lease, release_on_disconnect and a credit of 4;
                 every message handled once and acked on the stream, several acks to a request
    renew        a 1 s lease renewed on the stream while the handler works 2.5 s: not redelivered
    fail         a raising handler's message comes back (a failed renewal), RetryLater's after its wait,
                 each with the checkpoint it stored
    reconnect    the stream cut under a running handler: the Consumer reopens it, renews the lease in
                 the new stream's first request, and the handler's ack there deletes the message
    stop         stop(grace) asks for no more deliveries (credit 0), cancels the handler still running
                 after the grace, releases its message and half-closes; the handler's `raise ctx.lost`
                 is no failure, so on_error hears nothing
    raw_stream   Client.subscribe(): a delivery, its ack confirmed, a renewal of a forged handle
                 refused, a LEASE_EXPIRED notice, a half-close that ends the stream
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from collections.abc import Callable

from forwarding_proxy import ForwardingProxy

from holdshelf import (
    Client, Consumer, FlowControl, HandlerContext, LeaseRenewal, ReceivedMessage, RetryLater, SubscribeResponse,
)

WAIT = 20.0


def emit(check: str, **fields: object) -> None:
    print(json.dumps({"check": check, **fields}), flush=True)


def wait_until(condition: Callable[[], bool], timeout: float = WAIT) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def left(client: Client, queue: str) -> int:
    stats = client.get_queue(queue).stats
    return stats.visible + stats.in_flight + stats.delayed


class Recorder:
    """A handler that records each delivery and the most handlers seen running at once."""

    def __init__(self, work: Callable[[ReceivedMessage, HandlerContext], None] = lambda m, c: None) -> None:
        self._work = work
        self._lock = threading.Lock()
        self._active = 0
        self.most_active = 0
        self.handled: list[tuple[str, int]] = []
        self.errors: list[str] = []

    def __call__(self, message: ReceivedMessage, ctx: HandlerContext) -> None:
        with self._lock:
            self._active += 1
            self.most_active = max(self.most_active, self._active)
            self.handled.append((message.body.decode(), message.receive_count))
        try:
            self._work(message, ctx)
        finally:
            with self._lock:
                self._active -= 1

    def on_error(self, error: BaseException, message: ReceivedMessage | None) -> None:
        with self._lock:
            self.errors.append(f"{type(error).__name__} {getattr(error, 'reason', '')}".strip())


def consuming_calls(proxy: ForwardingProxy) -> dict[str, int]:
    return {method: proxy.calls[method] for method in ("Subscribe", "Receive", "Heartbeat", "Delete", "DeleteBatch")}


def fallback(upstream: str, direct: Client) -> None:
    proxy = ForwardingProxy(upstream, subscribe=False)
    try:
        direct.create_queue("sub-fallback")
        for i in range(10):
            direct.send("sub-fallback", f"f{i}")
        recorder = Recorder()
        with Client(proxy.address) as client:
            consumer = Consumer(client, "sub-fallback", recorder, concurrency=3, wait_time=1, on_error=recorder.on_error)
            finished = wait_until(lambda: len(recorder.handled) == 10)
            consumer.stop()
        emit("fallback", finished=finished, handled=sorted(b for b, _ in recorder.handled), calls=consuming_calls(proxy),
             errors=recorder.errors, left=left(direct, "sub-fallback"))
    finally:
        proxy.stop()


def forced(proxy: ForwardingProxy, direct: Client) -> None:
    direct.create_queue("sub-forced")
    direct.send("sub-forced", "r0")
    before = consuming_calls(proxy)
    recorder = Recorder()
    with Client(proxy.address) as client:
        consumer = Consumer(client, "sub-forced", recorder, wait_time=1, subscribe=False, on_error=recorder.on_error)
        finished = wait_until(lambda: len(recorder.handled) == 1)
        consumer.stop()
    calls = {method: count - before[method] for method, count in consuming_calls(proxy).items()}
    emit("forced", finished=finished, calls=calls, errors=recorder.errors, left=left(direct, "sub-forced"))


def subscribed(proxy: ForwardingProxy, direct: Client) -> None:
    direct.create_queue("sub-main")
    direct.send_batch("sub-main", [f"s{i}" for i in range(30)])
    before = consuming_calls(proxy)
    first_request = len(proxy.subscribe_requests)
    recorder = Recorder(lambda m, c: time.sleep(0.01))
    with Client(proxy.address) as client:
        consumer = Consumer(client, "sub-main", recorder, concurrency=4, visibility_timeout=30,
                            on_error=recorder.on_error)
        finished = wait_until(lambda: len(recorder.handled) == 30)
        settled = wait_until(lambda: consumer.active == 0)
        consumer.stop()
    calls = {method: count - before[method] for method, count in consuming_calls(proxy).items()}
    requests = proxy.subscribe_requests[first_request:]
    opening = requests[0]
    acking = [len(r.ack_receipt_handles) for r in requests if r.ack_receipt_handles]
    emit("subscribed", finished=finished and settled, handled=sorted(b for b, _ in recorder.handled),
         receive_counts=sorted({n for _, n in recorder.handled}), most_active=recorder.most_active, calls=calls,
         opening={"queue": opening.queue, "visibility_timeout": opening.visibility_timeout.seconds,
                  "release_on_disconnect": opening.release_on_disconnect,
                  "max_outstanding_messages": opening.flow_control.max_outstanding_messages,
                  "max_outstanding_bytes": opening.flow_control.max_outstanding_bytes},
         acks=sum(acking), ack_requests=len(acking), errors=recorder.errors, left=left(direct, "sub-main"))


def renew(proxy: ForwardingProxy, direct: Client) -> None:
    direct.create_queue("sub-renew")
    direct.send("sub-renew", "long")
    first_request = len(proxy.subscribe_requests)
    recorder = Recorder(lambda m, ctx: ctx.cancelled.wait(2.5))
    cancelled: list[bool] = []
    with Client(proxy.address) as client:
        consumer = Consumer(client, "sub-renew", lambda m, ctx: (recorder(m, ctx), cancelled.append(ctx.cancelled.is_set())),
                            visibility_timeout=1, on_error=recorder.on_error)
        finished = wait_until(lambda: bool(cancelled)) and wait_until(lambda: consumer.active == 0)
        time.sleep(1.5)  # a lost lease would bring the message back meanwhile
        consumer.stop()
    renewals = [lease for r in proxy.subscribe_requests[first_request:] for lease in r.leases if not lease.failed]
    emit("renew", finished=finished, handled=recorder.handled, cancelled=cancelled, renewals=len(renewals),
         errors=recorder.errors, left=left(direct, "sub-renew"))


def fail(proxy: ForwardingProxy, direct: Client) -> None:
    direct.create_queue("sub-fail")
    direct.send("sub-fail", "raise")
    direct.send("sub-fail", "later")
    first_request = len(proxy.subscribe_requests)
    seen: list[tuple[str, int, str | None, float]] = []
    start = time.monotonic()

    def work(message: ReceivedMessage, ctx: HandlerContext) -> None:
        body = message.body.decode()
        checkpoint = None if ctx.last_checkpoint is None else ctx.last_checkpoint.decode()
        seen.append((body, message.receive_count, checkpoint, time.monotonic() - start))
        if message.receive_count == 1:
            ctx.checkpoint(f"{body}-half".encode())
            if body == "later":
                raise RetryLater(1.0)
            raise ValueError("failed once")

    recorder = Recorder(work)
    with Client(proxy.address) as client:
        consumer = Consumer(client, "sub-fail", recorder, concurrency=2, visibility_timeout=30,
                            on_error=recorder.on_error)
        finished = wait_until(lambda: len(seen) == 4) and wait_until(lambda: consumer.active == 0)
        consumer.stop()
    failed = [(lease.failed, lease.visibility_timeout.ToMilliseconds() if lease.HasField("visibility_timeout") else None)
              for r in proxy.subscribe_requests[first_request:] for lease in r.leases if lease.failed]
    first_later = next(t for body, n, _, t in seen if body == "later" and n == 1)
    second_later = next(t for body, n, _, t in seen if body == "later" and n == 2)
    emit("fail", finished=finished, seen=sorted([body, n, checkpoint] for body, n, checkpoint, _ in seen),
         failed=sorted(failed, key=str), later_after=second_later - first_later, errors=sorted(recorder.errors),
         left=left(direct, "sub-fail"))


def reconnect(proxy: ForwardingProxy, direct: Client) -> None:
    direct.create_queue("sub-reconnect")
    direct.send("sub-reconnect", "held")
    first_request = len(proxy.subscribe_requests)
    streams = proxy.calls["Subscribe"]
    may_finish = threading.Event()
    handles: list[str] = []
    cancelled: list[bool] = []

    def work(message: ReceivedMessage, ctx: HandlerContext) -> None:
        handles.append(message.receipt_handle)
        may_finish.wait(WAIT)
        cancelled.append(ctx.cancelled.is_set())

    recorder = Recorder(work)
    with Client(proxy.address) as client:
        consumer = Consumer(client, "sub-reconnect", recorder, visibility_timeout=10, on_error=recorder.on_error)
        started = wait_until(lambda: bool(handles))
        cut = proxy.cut()
        reopened = wait_until(lambda: proxy.calls["Subscribe"] == streams + 2 and any(
            r.queue and r.leases for r in proxy.subscribe_requests[first_request + 1:]))
        time.sleep(0.5)  # the renewal's answer comes back
        may_finish.set()
        finished = wait_until(lambda: consumer.active == 0)
        consumer.stop()
    openings = [r for r in proxy.subscribe_requests[first_request:] if r.queue]
    renewed = [lease.receipt_handle for lease in openings[-1].leases] if len(openings) > 1 else []
    emit("reconnect", started=started, cut=cut, reopened=reopened, finished=finished, handled=recorder.handled,
         renewed_in_first_request=renewed == handles, cancelled=cancelled, errors=recorder.errors,
         left=left(direct, "sub-reconnect"))


def stop(proxy: ForwardingProxy, direct: Client) -> None:
    direct.create_queue("sub-stop")
    direct.send("sub-stop", "unfinished")
    first_request = len(proxy.subscribe_requests)
    started = threading.Event()
    cancelled: list[bool] = []

    def work(message: ReceivedMessage, ctx: HandlerContext) -> None:
        started.set()
        cancelled.append(ctx.cancelled.wait(WAIT))
        raise ctx.lost  # RuntimeError if not cancelled

    recorder = Recorder(work)
    with Client(proxy.address) as client:
        consumer = Consumer(client, "sub-stop", recorder, concurrency=2, visibility_timeout=30,
                            on_error=recorder.on_error)
        started.wait(WAIT)
        begun = time.monotonic()
        consumer.stop(0.3)
        took = time.monotonic() - begun
    requests = proxy.subscribe_requests[first_request:]
    paused = [r.flow_control.max_outstanding_messages for r in requests[1:] if r.HasField("flow_control")]
    released = [(lease.receipt_handle != "", lease.visibility_timeout.ToMilliseconds(), lease.failed)
                for r in requests for lease in r.leases if lease.HasField("visibility_timeout")]
    stats = direct.get_queue("sub-stop").stats
    emit("stop", cancelled=cancelled, paused=paused, released=released, stop_seconds=took,
         errors=recorder.errors, visible=stats.visible, in_flight=stats.in_flight)


def raw_stream(direct: Client) -> None:
    direct.create_queue("sub-raw")
    direct.send("sub-raw", "ack me")
    stream = direct.subscribe()
    responses: list[SubscribeResponse] = []
    arrived = threading.Condition()
    ended: list[str] = []

    def read() -> None:
        try:
            for response in stream:
                with arrived:
                    responses.append(response)
                    arrived.notify_all()
            ended.append("ok")
        except Exception as error:
            ended.append(f"{type(error).__name__} {getattr(error, 'reason', '')}")
        with arrived:
            arrived.notify_all()

    def next_response(match: Callable[[SubscribeResponse], bool]) -> SubscribeResponse | None:
        with arrived:
            arrived.wait_for(lambda: any(match(r) for r in responses) or bool(ended), WAIT)
            found = [r for r in responses if match(r)]
            for r in found:
                responses.remove(r)
            return found[0] if found else None

    reader = threading.Thread(target=read)
    reader.start()
    stream.open("sub-raw", visibility_timeout=0.5, release_on_disconnect=True, flow_control=FlowControl(1))
    first = next_response(lambda r: bool(r.messages))
    handle = first.messages[0].receipt_handle if first else ""
    stream.send(acks=[handle], renewals=[LeaseRenewal("forged")])
    answer = next_response(lambda r: bool(r.acks))
    direct.send("sub-raw", "let expire")
    second = next_response(lambda r: bool(r.messages))
    notice = next_response(lambda r: any(s.reason == "LEASE_EXPIRED" for s in r.leases))
    stream.half_close()
    reader.join(WAIT)
    emit("raw_stream", delivered=[m.body.decode() for m in first.messages] if first else None,
         ack=[[a.receipt_handle == handle, a.reason] for a in answer.acks] if answer else None,
         renewal=[[s.receipt_handle, s.held, s.reason] for s in answer.leases] if answer else None,
         second=[m.body.decode() for m in second.messages] if second else None,
         notice=[[s.receipt_handle == second.messages[0].receipt_handle, s.held] for s in notice.leases]
         if notice and second else None,
         ended=ended)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--address", required=True)
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    proxy = ForwardingProxy(args.address, subscribe=True)
    checks: dict[str, Callable[[], None]] = {
        "fallback": lambda: fallback(args.address, direct),
        "forced": lambda: forced(proxy, direct),
        "subscribed": lambda: subscribed(proxy, direct),
        "renew": lambda: renew(proxy, direct),
        "fail": lambda: fail(proxy, direct),
        "reconnect": lambda: reconnect(proxy, direct),
        "stop": lambda: stop(proxy, direct),
        "raw_stream": lambda: raw_stream(direct),
    }
    try:
        with Client(args.address) as direct:
            for name, check in checks.items():
                if not args.only or name in args.only.split(","):
                    check()
    finally:
        proxy.stop()


if __name__ == "__main__":
    main()
