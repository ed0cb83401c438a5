"""The Python Subscription (and the Consumer on it) against scripted Subscribe streams, one JSON line per check.

A fixture of test/clients/python-client.test.ts. A broker cannot be made to
answer out of order, push a notice or end a stream on cue, so these checks
give the Subscription a fake stream whose responses each check writes:

    opening           the first request names the queue, the lease, release_on_disconnect
                      and the credit, and nothing else
    coalesced_acks    acks made while a request is in flight go together in the next one,
                      and their results are matched by receipt handle, not by order: a
                      refused one fails its own ack with the reason
    notice            a LEASE_EXPIRED notice loses the lease and tells its holder
    notice_in_flight  a notice for a lease whose renewal is in flight waits for the answer,
                      which decides (held: not lost)
    reconnect         a stream ended with UNAVAILABLE is reported and reopened: the first
                      request renews the held lease (not the one being acked), and the
                      unanswered ack goes again on the new stream
    unimplemented     a stream ended with UNIMPLEMENTED calls on_unimplemented, is not
                      reopened and is not reported
    queue_not_found   a stream ended with QUEUE_NOT_FOUND loses every lease, is reported,
                      and reopened
    pause_close       pause() sends credit 0 alone; a delivery that comes after it is released
                      on the stream, not handed over; close() half-closes, and a delivery that
                      comes after the half-close is given back with a unary release
    consumer_notice   a Consumer's handler hears a LEASE_EXPIRED notice through ctx.cancelled
    consumer_fifo     a FIFO group's message delivered while the one before it is handled
                      waits for it, then runs
    consumer_fifo_again  a message of a group delivered again after its handler failed runs at
                      once, not behind the later ones still held, which go back unhandled
"""

from __future__ import annotations

import json
import queue
import threading
import time
from datetime import datetime, timezone

import grpc

from holdshelf import (
    AckResult, Consumer, FlowControl, HandlerContext, HoldshelfError, LeaseLostError, LeaseRenewal, LeaseState,
    ReceivedMessage, SubscribeResponse,
)
from holdshelf.convert import renewal_to_wire
from holdshelf.subscription import SubscribedLease, Subscription

WAIT = 10.0  # seconds: any wait below ends much sooner unless the Subscription is wrong


class FakeStream:
    """A Subscribe stream whose responses the check pushes; records what was sent as dicts."""

    def __init__(self) -> None:
        self.requests: queue.SimpleQueue[dict] = queue.SimpleQueue()
        self._responses: queue.SimpleQueue[SubscribeResponse | Exception | None] = queue.SimpleQueue()
        self.cancelled = threading.Event()
        self.half_closed = threading.Event()

    def open(self, queue_name: str, *, visibility_timeout: float | None = None, release_on_disconnect: bool = False,
             flow_control: FlowControl | None = None, acks=(), renewals=()) -> None:
        for renewal in renewals:
            renewal_to_wire(renewal)
        self.requests.put({"queue": queue_name, "visibility_timeout": visibility_timeout,
                           "release_on_disconnect": release_on_disconnect, "flow_control": flow_control,
                           "acks": list(acks), "renewals": list(renewals)})

    def send(self, *, acks=(), renewals=(), flow_control: FlowControl | None = None) -> None:
        for renewal in renewals:
            renewal_to_wire(renewal)
        self.requests.put({"acks": list(acks), "renewals": list(renewals), "flow_control": flow_control})

    def half_close(self) -> None:
        self.half_closed.set()

    def cancel(self) -> None:
        self.cancelled.set()
        self._responses.put(HoldshelfError(grpc.StatusCode.CANCELLED, "", "cancelled"))

    def respond(self, messages=(), acks=(), leases=()) -> None:
        self._responses.put(SubscribeResponse(tuple(messages), tuple(acks), tuple(leases)))

    def end(self, error: Exception | None) -> None:
        self._responses.put(error)

    def next_request(self) -> dict:
        return self.requests.get(timeout=WAIT)

    def __iter__(self):
        while (item := self._responses.get()) is not None:
            if isinstance(item, Exception):
                raise item
            yield item


def message(handle: str, group: str = "", sequence: int = 0, receive_count: int = 1) -> ReceivedMessage:
    now = datetime.now(timezone.utc)
    return ReceivedMessage(f"id-{handle}", handle, handle.encode(), {}, receive_count, now, now, now, None, "", "",
                           message_group_id=group, sequence_number=f"{sequence:020d}" if group else "")


def held(handle: str) -> LeaseState:
    return LeaseState(handle, True, None, "")


def expired(handle: str) -> LeaseState:
    return LeaseState(handle, False, None, "LEASE_EXPIRED")


def unavailable() -> HoldshelfError:
    return HoldshelfError(grpc.StatusCode.UNAVAILABLE, "SHUTTING_DOWN", "the broker is stopping")


class Harness:
    """A Subscription whose streams are FakeStreams, with what it delivered and reported."""

    def __init__(self) -> None:
        self.streams: queue.SimpleQueue[FakeStream] = queue.SimpleQueue()
        self.errors: list[Exception] = []
        self.delivered: queue.SimpleQueue[SubscribedLease] = queue.SimpleQueue()
        self.lost: queue.SimpleQueue[str] = queue.SimpleQueue()
        self.unimplemented = threading.Event()
        self.given_back: list[str] = []
        self.subscription = Subscription(
            "q", self._open, visibility_timeout=30, lease_seconds=30, renew_fraction=1 / 3,
            flow_control=FlowControl(4), on_deliveries=self._deliveries, on_unimplemented=self.unimplemented.set,
            give_back=self.given_back.extend, on_error=self.errors.append)

    def _open(self) -> FakeStream:
        stream = FakeStream()
        self.streams.put(stream)
        return stream

    def _deliveries(self, deliveries: list[tuple[ReceivedMessage, SubscribedLease]]) -> None:
        for _, lease in deliveries:
            self.delivered.put(lease.watch(lambda error: self.lost.put(error.reason)))

    def stream(self) -> tuple[FakeStream, dict]:
        """The next stream opened, with its first request."""
        stream = self.streams.get(timeout=WAIT)
        return stream, stream.next_request()

    def deliver(self, stream: FakeStream, *handles: str) -> list[SubscribedLease]:
        stream.respond(messages=[message(h) for h in handles])
        return [self.delivered.get(timeout=WAIT) for _ in handles]

    def close(self) -> None:
        self.subscription.close(1)


def emit(check: str, **fields: object) -> None:
    print(json.dumps({"check": check, **fields}), flush=True)


def outcome(future) -> str:
    try:
        future.result(WAIT)
        return "ok"
    except Exception as error:
        # A lost lease reads as its reason alone: its code is derived from it.
        code = error.code.name if isinstance(error, HoldshelfError) and not isinstance(error, LeaseLostError) else ""
        return " ".join(part for part in (type(error).__name__, code, getattr(error, "reason", "")) if part)


def opening() -> None:
    h = Harness()
    _, first = h.stream()
    h.close()
    flow = first["flow_control"]
    emit("opening", queue=first["queue"], visibility_timeout=first["visibility_timeout"],
         release_on_disconnect=first["release_on_disconnect"],
         flow=[flow.max_outstanding_messages, flow.max_outstanding_bytes], acks=first["acks"],
         renewals=first["renewals"])


def coalesced_acks() -> None:
    h = Harness()
    stream, _ = h.stream()
    first, second, third = h.deliver(stream, "h1", "h2", "h3")
    acked = [first.ack()]
    alone = stream.next_request()["acks"]
    acked += [second.ack(), third.ack()]
    time.sleep(0.1)  # both queued behind the request in flight
    stream.respond(acks=[AckResult("h1", "")])
    together = stream.next_request()["acks"]
    stream.respond(acks=[AckResult("h3", ""), AckResult("h2", "LEASE_SUPERSEDED")])
    results = [outcome(a) for a in acked]
    h.close()
    emit("coalesced_acks", alone=alone, together=together, results=results, errors=len(h.errors))


def notice() -> None:
    h = Harness()
    stream, _ = h.stream()
    lease, = h.deliver(stream, "h1")
    stream.respond(leases=[expired("h1")])
    lost = h.lost.get(timeout=WAIT)
    checkpoint = outcome(lease.checkpoint(b"late"))
    h.close()
    emit("notice", lost=lost, checkpoint=checkpoint)


def notice_in_flight() -> None:
    h = Harness()
    stream, _ = h.stream()
    lease, = h.deliver(stream, "h1")
    saved = lease.checkpoint(b"7")
    sent = [(r.receipt_handle, r.checkpoint) for r in stream.next_request()["renewals"]]
    stream.respond(leases=[expired("h1")])
    time.sleep(0.1)
    stream.respond(leases=[held("h1")])
    result = outcome(saved)
    time.sleep(0.1)
    h.close()
    emit("notice_in_flight", sent=[[handle, data.decode()] for handle, data in sent], checkpoint=result,
         lost=h.lost.qsize())


def reconnect() -> None:
    h = Harness()
    stream, _ = h.stream()
    _, acking = h.deliver(stream, "h1", "h2")
    acked = acking.ack()
    before = stream.next_request()["acks"]
    stream.end(unavailable())
    second, first_request = h.stream()
    renewed = [r.receipt_handle for r in first_request["renewals"]]
    second.respond(leases=[held("h1")])
    again = second.next_request()["acks"]
    second.respond(acks=[AckResult("h2", "")])
    result = outcome(acked)
    h.close()
    emit("reconnect", before=before, first_request=[first_request["queue"], renewed, first_request["acks"]],
         again=again, ack=result, errors=[getattr(e, "reason", "") for e in h.errors], lost=h.lost.qsize())


def unimplemented() -> None:
    h = Harness()
    stream, _ = h.stream()
    stream.end(HoldshelfError(grpc.StatusCode.UNIMPLEMENTED, "", "unknown method"))
    called = h.unimplemented.wait(WAIT)
    time.sleep(0.5)  # a reopen would come within the first backoff (at most 0.1 s)
    reopened = not h.streams.empty()
    h.close()
    emit("unimplemented", called=called, reopened=reopened, errors=len(h.errors))


def queue_not_found() -> None:
    h = Harness()
    stream, _ = h.stream()
    h.deliver(stream, "h1", "h2")
    stream.end(HoldshelfError(grpc.StatusCode.NOT_FOUND, "QUEUE_NOT_FOUND", "no queue q"))
    lost = sorted([h.lost.get(timeout=WAIT), h.lost.get(timeout=WAIT)])
    _, first_request = h.stream()
    h.close()
    emit("queue_not_found", lost=lost, errors=[getattr(e, "reason", "") for e in h.errors],
         reopened_with=[r.receipt_handle for r in first_request["renewals"]])


def pause_close() -> None:
    h = Harness()
    stream, _ = h.stream()
    h.subscription.pause()
    paused = stream.next_request()
    stream.respond(messages=[message("on-its-way")])
    released = [(r.receipt_handle, r.visibility_timeout) for r in stream.next_request()["renewals"]]
    closing = threading.Thread(target=h.subscription.close, args=(WAIT,))
    closing.start()
    time.sleep(0.1)
    waited = not stream.half_closed.is_set()  # for the release's answer
    stream.respond(leases=[LeaseState("on-its-way", False, None, "RELEASED")])
    half_closed = stream.half_closed.wait(WAIT)
    stream.respond(messages=[message("late")])
    stream.end(None)
    closing.join(WAIT)
    emit("pause_close", paused=[paused["flow_control"].max_outstanding_messages, paused["acks"], paused["renewals"]],
         released=released, waited=waited, half_closed=half_closed, given_back=h.given_back,
         delivered=h.delivered.qsize(), errors=len(h.errors))


class FakeClient:
    """Just enough of a Client for a Consumer on fake Subscribe streams."""

    def __init__(self) -> None:
        self.streams: queue.SimpleQueue[FakeStream] = queue.SimpleQueue()

    def subscribe(self) -> FakeStream:
        stream = FakeStream()
        self.streams.put(stream)
        return stream


def consumer_notice() -> None:
    client = FakeClient()
    heard: list[str] = []
    started = threading.Event()

    def handler(message: ReceivedMessage, ctx: HandlerContext) -> None:
        started.set()
        heard.append(str(ctx.cancelled.wait(WAIT)))
        heard.append(ctx.lost.reason if ctx.lost else "")
        raise ctx.lost or RuntimeError("not lost")

    errors: list[str] = []
    consumer = Consumer(client, "q", handler, visibility_timeout=30,  # type: ignore[arg-type]
                        on_error=lambda e, m: errors.append(type(e).__name__))
    stream = client.streams.get(timeout=WAIT)
    stream.next_request()
    stream.respond(messages=[message("h1")])
    started.wait(WAIT)
    stream.respond(leases=[expired("h1")])
    stopping = threading.Thread(target=consumer.stop, args=(WAIT,))
    stopping.start()
    stream.next_request()  # credit 0
    # Ended only after stop's half-close, as a server does: an end before it reads as a broken stream.
    stream.half_closed.wait(WAIT)
    stream.end(None)
    stopping.join(WAIT)
    emit("consumer_notice", heard=heard, errors=errors)


def consumer_fifo() -> None:
    client = FakeClient()
    order: list[str] = []
    first_may_end = threading.Event()

    def handler(message: ReceivedMessage, ctx: HandlerContext) -> None:
        order.append(f"start {message.receipt_handle}")
        if message.receipt_handle == "a1":
            first_may_end.wait(WAIT)
        order.append(f"end {message.receipt_handle}")

    consumer = Consumer(client, "q.fifo", handler, concurrency=2, visibility_timeout=30)  # type: ignore[arg-type]
    stream = client.streams.get(timeout=WAIT)
    stream.next_request()
    stream.respond(messages=[message("a1", "g", 1)])
    deadline = time.monotonic() + WAIT
    while not order and time.monotonic() < deadline:
        time.sleep(0.01)
    stream.respond(messages=[message("a2", "g", 2)])
    time.sleep(0.3)  # a2 would start meanwhile if it did not wait for a1
    before = list(order)
    first_may_end.set()
    acks = stream.next_request()["acks"]
    stream.respond(acks=[AckResult("a1", "")])
    second_acks = stream.next_request()["acks"]
    stream.respond(acks=[AckResult("a2", "")])
    stopping = threading.Thread(target=consumer.stop, args=(WAIT,))
    stopping.start()
    stream.next_request()
    stream.end(None)
    stopping.join(WAIT)
    emit("consumer_fifo", before=before, order=order, acks=[acks, second_acks])


def answer_everything(stream: FakeStream, until: threading.Event) -> None:
    """Answers each request as a broker would if nothing raced it: acks done, endings released, renewals held."""
    while not until.is_set():
        try:
            request = stream.requests.get(timeout=0.05)
        except queue.Empty:
            continue
        leases = [LeaseState(r.receipt_handle, False, None, "RELEASED") if r.failed or r.visibility_timeout == 0
                  else held(r.receipt_handle) for r in request["renewals"]]
        if request["acks"] or leases:
            stream.respond(acks=[AckResult(handle, "") for handle in request["acks"]], leases=leases)


def consumer_fifo_again() -> None:
    client = FakeClient()
    calls: list[str] = []
    done = threading.Event()

    def handler(message: ReceivedMessage, ctx: HandlerContext) -> None:
        calls.append(f"{message.receipt_handle}#{message.receive_count}")
        if message.receipt_handle == "a1":
            raise ValueError("fails once")
        if message.receipt_handle == "a1-again":
            done.set()

    consumer = Consumer(client, "q.fifo", handler, concurrency=4, visibility_timeout=30,  # type: ignore[arg-type]
                        on_error=lambda e, m: None)
    stream = client.streams.get(timeout=WAIT)
    stream.next_request()
    answering = threading.Event()
    answerer = threading.Thread(target=answer_everything, args=(stream, answering))
    answerer.start()
    stream.respond(messages=[message("a1", "g", 1), message("a2", "g", 2), message("a3", "g", 3)])
    deadline = time.monotonic() + WAIT
    while "a1#1" not in calls and time.monotonic() < deadline:
        time.sleep(0.01)
    stream.respond(messages=[message("a1-again", "g", 1, receive_count=2)])
    handled = done.wait(WAIT)
    answering.set()
    answerer.join()
    stopping = threading.Thread(target=consumer.stop, args=(WAIT,))
    stopping.start()
    stream.end(None)
    stopping.join(WAIT)
    emit("consumer_fifo_again", handled=handled, calls=calls)


if __name__ == "__main__":
    opening()
    coalesced_acks()
    notice()
    notice_in_flight()
    reconnect()
    unimplemented()
    queue_not_found()
    pause_close()
    consumer_notice()
    consumer_fifo()
    consumer_fifo_again()
