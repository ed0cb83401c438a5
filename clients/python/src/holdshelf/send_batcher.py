"""Gathers single sends, per queue, into SendBatch calls: by count, bytes and a short delay."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

import grpc

from holdshelf._wire import message_pb2, service_pb2
from holdshelf.convert import send_results
from holdshelf.errors import FieldViolation, HoldshelfError
from holdshelf.values import SendResult

# SendBatch's bounds (queue_service.proto): 1 to 100 entries, at most 4 MiB in all.
MAX_BATCH_MESSAGES = 100
MAX_BATCH_BYTES = 4 * 1024 * 1024
# A field violation naming one entry of a batch ("entries[2].delay"), and the rest of its path.
_ENTRY_FIELD = re.compile(r"^entries\[(\d+)\]\.?(.*)$")

CallBatch = Callable[[service_pb2.SendBatchRequest, float | None], Any]
"""Starts a SendBatch call: (request, timeout) to a grpc.Future of its SendBatchResponse."""


@dataclass(eq=False)
class _Send:
    entry: message_pb2.SendBatchEntry
    size: int
    deadline: float | None  # time.monotonic() by which the caller's timeout runs out
    result: Future[SendResult] = field(default_factory=Future)


@dataclass(eq=False)
class _Batch:
    queue: str
    due: float  # when the delay runs out, or half the shortest timeout of its sends
    sends: list[_Send] = field(default_factory=list)
    size: int = 0


class SendBatcher:
    """Gathers the single sends of many threads into SendBatch calls, one queue's at a time.

    A send joins its queue's open batch, which goes out once it holds
    max_messages entries, once the next send would take it past max_bytes,
    or `delay` seconds after its first send (sooner if half of a send's
    timeout runs out first), whichever comes first; several batches of a
    queue may be in flight at once. A batch is one atomic call
    that stores its entries in order, so the sends of one thread (each
    waiting for its answer before the next) keep their order, FIFO groups
    included. Each send gets its own result; an entry the broker refuses (its
    field violation names it, "entries[2].delay") fails only its own send,
    with the same code and reason and the field as a Send would name it
    ("delay"), and the others go again as a new batch. Any other failure
    fails every send of the batch.
    """

    def __init__(self, call_batch: CallBatch, *, delay: float, max_messages: int, max_bytes: int) -> None:
        self._call_batch = call_batch
        self._delay = delay
        self._max_messages = max_messages
        self._max_bytes = max_bytes
        self._cv = threading.Condition()
        self._open: dict[str, _Batch] = {}
        self._in_flight = 0
        self._closed = False
        self._thread: threading.Thread | None = None

    def fits(self, size: int) -> bool:
        """Whether an entry of this many bytes may go in a batch (else it goes as a unary Send)."""
        return size <= self._max_bytes

    def send(self, queue: str, entry: message_pb2.SendBatchEntry, size: int, timeout: float | None) -> Future[SendResult] | None:
        """Adds one entry to its queue's batch; a Future of its SendResult, or None once closed."""
        send = _Send(entry, size, None if timeout is None else time.monotonic() + timeout)
        full: list[_Batch] = []
        with self._cv:
            if self._closed:
                return None
            batch = self._open.get(queue)
            if batch is not None and batch.size + size > self._max_bytes:
                full.append(self._open.pop(queue))
                batch = None
            if batch is None:
                batch = self._open[queue] = _Batch(queue, time.monotonic() + self._delay)
                self._start_timer()
            batch.sends.append(send)
            batch.size += size
            if timeout is not None:
                # A timeout shorter than the delay does not wait it out: half of it is left for the call.
                batch.due = min(batch.due, time.monotonic() + timeout / 2)
            if len(batch.sends) >= self._max_messages:
                full.append(self._open.pop(queue))
            self._in_flight += len(full)
            self._cv.notify_all()
        for ready in full:
            self._dispatch(ready.queue, ready.sends)
        return send.result

    def close(self, timeout: float | None = None) -> None:
        """Sends every open batch at once and waits (up to timeout) for every batch in flight to be answered."""
        with self._cv:
            self._closed = True
            ready = list(self._open.values())
            self._open.clear()
            self._in_flight += len(ready)
            self._cv.notify_all()
        for batch in ready:
            self._dispatch(batch.queue, batch.sends)
        with self._cv:
            self._cv.wait_for(lambda: self._in_flight == 0, timeout)
        if self._thread is not None:
            self._thread.join()

    def _start_timer(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="holdshelf-send-batcher", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        """Sends each batch whose delay ran out."""
        while True:
            with self._cv:
                if self._closed:
                    return
                now = time.monotonic()
                due = [batch for batch in self._open.values() if batch.due <= now]
                for batch in due:
                    del self._open[batch.queue]
                self._in_flight += len(due)
                if not due:
                    wake = min((batch.due for batch in self._open.values()), default=None)
                    self._cv.wait(None if wake is None else max(0.0, wake - now))
                    continue
            for batch in due:
                self._dispatch(batch.queue, batch.sends)

    def _dispatch(self, queue: str, sends: list[_Send]) -> None:
        """Starts one SendBatch call (counted in _in_flight by the caller); its answer settles the sends."""
        deadlines = [send.deadline for send in sends if send.deadline is not None]
        timeout = None if not deadlines else max(0.0, min(deadlines) - time.monotonic())
        request = service_pb2.SendBatchRequest(queue=queue, entries=[send.entry for send in sends])
        try:
            call = self._call_batch(request, timeout)
        except Exception as error:  # a closed channel refuses at once
            self._settle(sends, error)
            return
        call.add_done_callback(lambda done: self._answered(queue, sends, done))

    def _answered(self, queue: str, sends: list[_Send], call: Any) -> None:
        try:
            response = call.result()
        except grpc.RpcError as rpc_error:
            error = HoldshelfError.from_rpc_error(rpc_error)
            refused = _refused_entry(error, len(sends))
            if refused is None or len(sends) == 1:
                self._settle(sends, error if refused is None else _as_single_send(error, refused))
                return
            # Nothing was stored: the refused entry fails alone, the others go again, in order.
            sends[refused].result.set_exception(_as_single_send(error, refused))
            self._dispatch(queue, sends[:refused] + sends[refused + 1:])
            return
        except Exception as error:  # cancelled by a closed channel
            self._settle(sends, error)
            return
        for send, result in zip(sends, send_results(response.message_ids, response.sequence_numbers)):
            send.result.set_result(result)
        self._done()

    def _settle(self, sends: Sequence[_Send], error: Exception) -> None:
        for send in sends:
            send.result.set_exception(error)
        self._done()

    def _done(self) -> None:
        with self._cv:
            self._in_flight -= 1
            self._cv.notify_all()


def _refused_entry(error: HoldshelfError, count: int) -> int | None:
    """The index of the entry a batch's failure names, if it names one of the batch."""
    for violation in error.field_violations:
        match = _ENTRY_FIELD.match(violation.field)
        if match is not None and int(match.group(1)) < count:
            return int(match.group(1))
    return None


def _as_single_send(error: HoldshelfError, index: int) -> HoldshelfError:
    """A batch entry's refusal as a Send of that entry alone would have said it ("entries[2].delay" as "delay")."""
    violations = []
    for violation in error.field_violations:
        match = _ENTRY_FIELD.match(violation.field)
        if match is not None and int(match.group(1)) == index:
            violations.append(FieldViolation(match.group(2), violation.description))
    return HoldshelfError.of(error.code, error.reason, error.message, tuple(violations))

