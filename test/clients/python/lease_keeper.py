"""The Python LeaseKeeper against scripted Heartbeat streams, one JSON line per check.

A fixture of test/clients/python-client.test.ts. A broker cannot be made to
stall, answer out of turn or push a notice on cue, so these checks give the
keeper a fake stream whose answers each check writes itself:

    first_requests    the first request is empty with release_on_disconnect;
                      a held lease is named in the next one, at once
    notice            an unsolicited LEASE_EXPIRED notice loses the lease
    checkpoint_lost   a checkpoint answered held=false fails with LeaseLostError
                      and cancels the holder
    endings           release(0) and fail(None) / fail(5) send what they should
    queue_not_found   a stream ended with QUEUE_NOT_FOUND loses every lease
    stall             a stream that leaves a request unanswered for max(5 s, the
                      lease) is cut and a new one opened (the lease, unanswered
                      past its end, counts as lost)
    down_expiry       a lease whose stream cannot be reopened is lost when it runs out
    out_of_range      a delay no Duration can carry is refused by fail() and by
                      RetryLater, and the keeper goes on naming new leases
    refused_renewal   a renewal refused (LEASE_LIMIT_EXCEEDED, INVALID_ARGUMENT)
                      cancels the holder, but the lease stays for its failed
                      renewal, unrenewed, and is forgotten at its deadline
    refused_ending    a fail or release refused (INVALID_ARGUMENT) fails its caller
                      with LeaseLostError; one answered lost (LEASE_SUPERSEDED)
                      resolves, the loss being no failure of the ending
    refused_then_release  a refused ending leaves the lease refused, unrenewed,
                      until its deadline, and the release queued behind it
                      (stop's) is sent next, not answered unsent
    close_unsent      a release still unsent at close fails, saying so
    unencodable       a lease whose renewal cannot be encoded is dropped (lost,
                      its error reported): nothing raises, later requests go out,
                      and the timing thread lives on
    checkpoint_after  a checkpoint after the release or after close raises
                      LeaseLostError RELEASED
    stop_refused      a Consumer (on a fake Client) reports the refusal of
                      stop's release, and its handler's error, and nothing else
"""

from __future__ import annotations

import json
import queue
import threading
import time
from datetime import datetime, timezone

import grpc

from holdshelf import (
    Consumer, HandlerContext, HoldshelfError, LeaseLostError, LeaseRenewal, LeaseState, ReceivedMessage, RetryLater,
)
from holdshelf.convert import renewal_to_wire
from holdshelf.lease_keeper import LeaseKeeper

WAIT = 10.0  # seconds: any wait below ends much sooner unless the keeper is wrong


class FakeStream:
    """A Heartbeat stream whose responses the check pushes; records what the keeper sent."""

    def __init__(self) -> None:
        self.requests: queue.SimpleQueue[tuple[list[LeaseRenewal], bool]] = queue.SimpleQueue()
        self._responses: queue.SimpleQueue[list[LeaseState] | Exception | None] = queue.SimpleQueue()
        self.cancelled = threading.Event()

    def send(self, queue_name: str, renewals: list[LeaseRenewal], *, release_on_disconnect: bool = False) -> None:
        for renewal in renewals:
            renewal_to_wire(renewal)  # encoded, as HeartbeatStream.send does, so that what it refuses raises here
        self.requests.put((list(renewals), release_on_disconnect))

    def half_close(self) -> None:
        self._responses.put(None)

    def cancel(self) -> None:
        self.cancelled.set()
        self._responses.put(HoldshelfError(grpc.StatusCode.CANCELLED, "", "cancelled"))

    def answer(self, *states: LeaseState) -> None:
        self._responses.put(list(states))

    def end(self, error: Exception) -> None:
        self._responses.put(error)

    def next_request(self) -> list[LeaseRenewal]:
        return self.requests.get(timeout=WAIT)[0]

    def __iter__(self):
        while (item := self._responses.get()) is not None:
            if isinstance(item, Exception):
                raise item
            yield item


class Harness:
    """A keeper whose streams are FakeStreams, opened on demand, with what it reported."""

    def __init__(self, lease_seconds: float = 30, fail_opens_after: int | None = None) -> None:
        self.streams: queue.SimpleQueue[FakeStream] = queue.SimpleQueue()
        self.errors: list[Exception] = []
        self.lost: queue.SimpleQueue[str] = queue.SimpleQueue()
        self._opens = 0
        self._fail_opens_after = fail_opens_after
        self.keeper = LeaseKeeper("q", self._open, visibility_timeout=None, lease_seconds=lease_seconds,
                                  renew_fraction=1 / 3, on_error=self.errors.append)

    def _open(self) -> FakeStream:
        self._opens += 1
        if self._fail_opens_after is not None and self._opens > self._fail_opens_after:
            raise ConnectionError("refused")
        stream = FakeStream()
        self.streams.put(stream)
        return stream

    def stream(self) -> FakeStream:
        """The next stream opened, its first (empty) request answered."""
        stream = self.streams.get(timeout=WAIT)
        assert stream.requests.get(timeout=WAIT) == ([], True)
        stream.answer()
        return stream

    def hold(self, handle: str, stream: FakeStream):
        """Holds a lease and answers the renewal that names it with held=True."""
        lease = self.keeper.hold(handle, time.monotonic(), lambda error: self.lost.put(error.reason))
        assert [r.receipt_handle for r in stream.next_request()] == [handle]
        stream.answer(held(handle))
        return lease

    def close(self) -> None:
        self.keeper.close(1)


def held(handle: str) -> LeaseState:
    return LeaseState(handle, True, None, "")


def not_held(handle: str, reason: str) -> LeaseState:
    return LeaseState(handle, False, None, reason)


def emit(check: str, **fields: object) -> None:
    print(json.dumps({"check": check, **fields}), flush=True)


def outcome(call) -> str:
    """What a call raised (type and, for LeaseLostError, reason), or "ok"."""
    try:
        call()
        return "ok"
    except LeaseLostError as error:
        return f"LeaseLostError {error.reason}"
    except Exception as error:
        return type(error).__name__


def first_requests() -> None:
    harness = Harness()
    stream = harness.streams.get(timeout=WAIT)
    first = stream.requests.get(timeout=WAIT)
    harness.keeper.hold("h1", time.monotonic(), lambda error: None)
    stream.answer()
    second = stream.requests.get(timeout=WAIT)
    emit("first_requests", first=[len(first[0]), first[1]], second=[r.receipt_handle for r in second[0]],
         second_timeout=second[0][0].visibility_timeout)
    stream.answer(held("h1"))
    harness.close()


def notice() -> None:
    harness = Harness()
    stream = harness.stream()
    harness.hold("h1", stream)
    stream.answer(not_held("h1", "LEASE_EXPIRED"))  # nothing in flight: a notice
    emit("notice", lost=harness.lost.get(timeout=WAIT))
    harness.close()


def checkpoint_lost() -> None:
    harness = Harness()
    stream = harness.stream()
    lease = harness.hold("h1", stream)
    saved = lease.checkpoint(b"7")
    renewal = stream.next_request()[0]
    stream.answer(not_held("h1", "LEASE_SUPERSEDED"))
    try:
        saved.result(WAIT)
        outcome = "stored"
    except LeaseLostError as error:
        outcome = error.reason
    emit("checkpoint_lost", sent=renewal.checkpoint.decode(), outcome=outcome, lost=harness.lost.get(timeout=WAIT))
    harness.close()


def endings() -> None:
    harness = Harness()
    stream = harness.stream()
    sent = {}
    for name, end in (("release", lambda lease: lease.release(0)), ("fail", lambda lease: lease.fail(None)),
                      ("retry_later", lambda lease: lease.fail(5))):
        lease = harness.hold(name, stream)
        answered = end(lease)
        renewal = stream.next_request()[0]
        stream.answer(not_held(name, "RELEASED"))
        answered.result(WAIT)
        sent[name] = [renewal.visibility_timeout, renewal.failed]
    emit("endings", **sent, lost=harness.lost.qsize())
    harness.close()


def queue_not_found() -> None:
    harness = Harness()
    stream = harness.stream()
    harness.hold("h1", stream)
    harness.hold("h2", stream)
    stream.end(HoldshelfError(grpc.StatusCode.NOT_FOUND, "QUEUE_NOT_FOUND", "gone"))
    emit("queue_not_found", lost=sorted([harness.lost.get(timeout=WAIT), harness.lost.get(timeout=WAIT)]))
    harness.close()


def stall() -> None:
    harness = Harness(lease_seconds=1.2)  # renewed every ~0.4 s; the stall limit is then 5 s
    stream = harness.stream()
    harness.hold("h1", stream)
    stream.next_request()  # a renewal, never answered
    started = time.monotonic()
    again = harness.streams.get(timeout=WAIT)
    broken_after = time.monotonic() - started
    first = again.requests.get(timeout=WAIT)
    again.answer()
    # Unanswered for longer than the lease, the lease has run out by now.
    emit("stall", broken_after=round(broken_after, 2), cancelled=stream.cancelled.is_set(),
         first=[len(first[0]), first[1]], lost=harness.lost.get(timeout=WAIT),
         errors=[type(e).__name__ for e in harness.errors])
    harness.close()


def down_expiry() -> None:
    harness = Harness(lease_seconds=0.6, fail_opens_after=1)
    stream = harness.stream()
    harness.hold("h1", stream)
    stream.end(HoldshelfError(grpc.StatusCode.UNAVAILABLE, "SHUTTING_DOWN", "stopping"))
    emit("down_expiry", lost=harness.lost.get(timeout=WAIT),
         errors=sorted({type(e).__name__ for e in harness.errors}))
    harness.close()


def out_of_range() -> None:
    retry_later = [outcome(lambda: RetryLater(seconds)) for seconds in (float("inf"), 1e300, -1, float("nan"))]
    harness = Harness()
    stream = harness.stream()
    lease = harness.hold("h1", stream)
    fail = [outcome(lambda: lease.fail(seconds)) for seconds in (float("inf"), 1e300)]
    harness.hold("h2", stream)  # named at once: no request is stuck in flight
    ended = lease.release(0)  # h1 was left held: its first ending was refused, not queued
    renewal = stream.next_request()[0]
    stream.answer(not_held("h1", "RELEASED"))
    emit("out_of_range", retry_later=retry_later, fail=fail, then=[renewal.receipt_handle, renewal.visibility_timeout],
         released=outcome(lambda: ended.result(WAIT)), timing_thread=harness.keeper._thread.is_alive())
    harness.close()


def refused_renewal() -> None:
    harness = Harness(lease_seconds=1.2)  # renewed every ~0.4 s
    stream = harness.stream()
    lease = harness.keeper.hold("h1", time.monotonic(), lambda error: harness.lost.put(error.reason))
    stream.next_request()
    stream.answer(not_held("h1", "LEASE_LIMIT_EXCEEDED"))
    lost = harness.lost.get(timeout=WAIT)
    checkpoint = outcome(lambda: lease.checkpoint(b"1").result(WAIT))
    # The handler raised: its failed renewal still goes, since the handle works until the deadline.
    failed = lease.fail(None)
    renewal = stream.next_request()[0]
    stream.answer(not_held("h1", "RELEASED"))
    released = outcome(lambda: failed.result(WAIT))
    # Refused and left alone: never renewed, forgotten once its deadline passed.
    started = time.monotonic()
    harness.keeper.hold("h2", started, lambda error: harness.lost.put(error.reason))
    stream.next_request()
    stream.answer(not_held("h2", "INVALID_ARGUMENT"))
    second = harness.lost.get(timeout=WAIT)
    while "h2" in harness.keeper._leases and time.monotonic() - started < WAIT:
        time.sleep(0.05)
    emit("refused_renewal", lost=[lost, second], checkpoint=checkpoint, sent=[renewal.receipt_handle, renewal.failed],
         released=released, forgotten_after=round(time.monotonic() - started, 2),
         renewals_after=stream.requests.qsize(), lost_again=harness.lost.qsize())
    harness.close()


def refused_ending() -> None:
    harness = Harness()
    stream = harness.stream()
    endings = {}
    for name, end, reason in (("retry_too_late", lambda lease: lease.fail(13 * 3600), "INVALID_ARGUMENT"),
                              ("release_superseded", lambda lease: lease.release(0), "LEASE_SUPERSEDED")):
        lease = harness.hold(name, stream)
        ended = end(lease)
        stream.next_request()
        stream.answer(not_held(name, reason))
        endings[name] = outcome(lambda: ended.result(WAIT))
    emit("refused_ending", **endings)
    harness.close()


def refused_then_release() -> None:
    harness = Harness(lease_seconds=1.2)  # renewed every ~0.4 s, were it held
    stream = harness.stream()
    started = time.monotonic()
    lease = harness.hold("h1", stream)
    failed = lease.fail(13 * 3600)
    stream.next_request()
    released = lease.release(0)  # stop's, queued behind the failed renewal in flight
    stream.answer(not_held("h1", "INVALID_ARGUMENT"))
    refusal = outcome(lambda: failed.result(WAIT))
    try:
        renewal = stream.next_request()[0]
        sent = [renewal.receipt_handle, renewal.visibility_timeout, renewal.failed]
    except queue.Empty:
        sent = None
    # Refused again (it is only a check): the lease stays until its deadline, unrenewed.
    stream.answer(not_held("h1", "LEASE_LIMIT_EXCEEDED"))
    second = outcome(lambda: released.result(WAIT))
    state = harness.keeper._leases["h1"].state if "h1" in harness.keeper._leases else None
    while "h1" in harness.keeper._leases and time.monotonic() - started < WAIT:
        time.sleep(0.05)
    emit("refused_then_release", refusal=refusal, sent=sent, second=second, state=state,
         forgotten_after=round(time.monotonic() - started, 2), renewals_after=stream.requests.qsize(),
         lost=harness.lost.qsize())
    harness.close()


def close_unsent() -> None:
    harness = Harness()
    stream = harness.stream()
    lease = harness.hold("h1", stream)
    saved = lease.checkpoint(b"1")  # in flight, never answered: the release waits behind it
    stream.next_request()
    released = lease.release(0)
    harness.close()
    try:
        released.result(WAIT)
        release = "ok"
    except Exception as error:
        release = f"{type(error).__name__}: {error}"
    emit("close_unsent", release=release, checkpoint=outcome(lambda: saved.result(WAIT)))


def unencodable() -> None:
    harness = Harness()
    stream = harness.stream()
    bad = outcome(lambda: harness.keeper.hold("\ud800", time.monotonic(), lambda error: harness.lost.put(error.reason)))
    lost = harness.lost.get(timeout=WAIT)
    harness.hold("h2", stream)  # named at once: the bad lease is not queued in every request
    deadline = time.monotonic() + WAIT
    while not harness.errors and time.monotonic() < deadline:
        time.sleep(0.01)  # reported by the timing thread
    emit("unencodable", hold=bad, lost=lost, errors=[type(e).__name__ for e in harness.errors],
         timing_thread=harness.keeper._thread.is_alive())
    harness.close()


def checkpoint_after() -> None:
    harness = Harness()
    stream = harness.stream()
    lease = harness.hold("h1", stream)
    ended = lease.release(0)
    stream.next_request()
    stream.answer(not_held("h1", "RELEASED"))
    ended.result(WAIT)
    after_release = outcome(lambda: lease.checkpoint(b"1").result(WAIT))
    lease = harness.hold("h2", stream)
    harness.close()
    emit("checkpoint_after", release=after_release, close=outcome(lambda: lease.checkpoint(b"2").result(WAIT)))


class FakeReceive:
    """A receive that returns its messages, or, with none, waits until cancelled."""

    def __init__(self, messages: list[ReceivedMessage]) -> None:
        self._messages = messages
        self._cancelled = threading.Event()

    def cancel(self) -> None:
        self._cancelled.set()

    def result(self) -> list[ReceivedMessage]:
        if self._messages:
            return self._messages
        self._cancelled.wait()
        raise HoldshelfError(grpc.StatusCode.CANCELLED, "", "the receive was cancelled")


class FakeClient:
    """What a Consumer uses of a Client: one message to receive, then none; its streams FakeStreams."""

    def __init__(self, message: ReceivedMessage) -> None:
        self._messages = [[message]]
        self.streams: queue.SimpleQueue[FakeStream] = queue.SimpleQueue()

    def start_receive(self, queue_name: str, **options: object) -> FakeReceive:
        return FakeReceive(self._messages.pop() if self._messages else [])

    def heartbeat(self) -> FakeStream:
        stream = FakeStream()
        self.streams.put(stream)
        return stream


def stop_refused() -> None:
    now = datetime.now(timezone.utc)
    client = FakeClient(ReceivedMessage("m1", "h1", b"", {}, 1, now, now, now, None, "", ""))
    heard: queue.SimpleQueue[BaseException] = queue.SimpleQueue()

    def handler(message: ReceivedMessage, ctx: HandlerContext) -> None:
        ctx.cancelled.wait(WAIT)
        raise ValueError("stopped unfinished")

    # subscribe=False: the receive loop's LeaseKeeper is the one scripted here.
    consumer = Consumer(client, "q", handler, visibility_timeout=30, on_error=lambda e, m: heard.put(e),  # type: ignore[arg-type]
                        subscribe=False)
    stream = client.streams.get(timeout=WAIT)
    assert stream.requests.get(timeout=WAIT) == ([], True)
    stream.answer()
    stream.next_request()
    stream.answer(held("h1"))
    stopping = threading.Thread(target=consumer.stop, args=(0,))
    stopping.start()
    release = stream.next_request()[0]
    stream.answer(not_held("h1", "LEASE_LIMIT_EXCEEDED"))  # say: stop's release refused
    stopping.join(WAIT)
    errors = sorted(f"{type(e).__name__} {getattr(e, 'reason', '')}".strip() for e in [heard.get(timeout=WAIT), heard.get(timeout=WAIT)])
    emit("stop_refused", release=[release.receipt_handle, release.visibility_timeout, release.failed],
         stopped=not stopping.is_alive(), errors=errors, others=heard.qsize())


if __name__ == "__main__":
    first_requests()
    notice()
    checkpoint_lost()
    endings()
    queue_not_found()
    stall()
    down_expiry()
    out_of_range()
    refused_renewal()
    refused_ending()
    refused_then_release()
    close_unsent()
    unencodable()
    checkpoint_after()
    stop_refused()
