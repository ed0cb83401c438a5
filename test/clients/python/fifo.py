"""FIFO queues through holdshelf.Client and holdshelf.Consumer, printing what they returned as JSON lines.

A fixture of test/clients/python-client.test.ts: one line per check,
{"check": NAME, ...fields}: the FIFO settings read back, the three FIFO
reasons, sequence numbers and duplicates on send, each customer's orders
received in send order with their FIFO fields, content-based
deduplication, and a Consumer of concurrency 4 on the queue.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import threading
from collections.abc import Callable

from holdshelf import Client, Consumer, HandlerContext, HoldshelfError, QueueConfig, ReceivedMessage, SendBatchEntry

CUSTOMERS = ("c1", "c2", "c3")


def emit(check: str, **fields: object) -> None:
    print(json.dumps({"check": check, **fields}), flush=True)


def config_of(client: Client, name: str) -> dict[str, object]:
    config = client.get_queue(name).config
    return {"fifo": config.fifo, "content_based_deduplication": config.content_based_deduplication,
            "deduplication_scope": config.deduplication_scope}


def raised(call: Callable[[], object]) -> Exception:
    """What a call that must fail raised."""
    try:
        call()
    except Exception as error:
        return error
    raise AssertionError("the call did not fail")


def error_of(call: Callable[[], object]) -> dict[str, object]:
    """A HoldshelfError's code, reason and fields."""
    error = raised(call)
    assert isinstance(error, HoldshelfError), error
    return {"code": error.code.name, "reason": error.reason, "fields": [v.field for v in error.field_violations]}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--address", required=True)
    args = parser.parse_args()
    with Client(args.address) as client:
        orders, by_body, standard = "py-fifo-orders.fifo", "py-fifo-by-body.fifo", "py-fifo-standard"
        client.create_queue(orders, QueueConfig(fifo=True, visibility_timeout=30))
        client.create_queue(by_body, QueueConfig(fifo=True, content_based_deduplication=True,
                                                 deduplication_scope="message_group"))
        client.create_queue(standard)
        emit("config", orders=config_of(client, orders), by_body=config_of(client, by_body),
             standard=config_of(client, standard))

        # A scope the package does not know is refused before any call, rather than sent as the default.
        typo = QueueConfig(fifo=True, deduplication_scope="group")  # type: ignore[arg-type]
        emit("errors",
             group_required=error_of(lambda: client.send(orders, "x", deduplication_id="d")),
             deduplication_required=error_of(lambda: client.send_batch(orders, [
                 SendBatchEntry("x", message_group_id="g", deduplication_id="d"),
                 SendBatchEntry("y", message_group_id="g")])),
             not_fifo=error_of(lambda: client.send(standard, "x", message_group_id="g")),
             bad_scope=type(raised(lambda: client.create_queue("py-fifo-typo.fifo", typo))).__name__)

        sent = []
        for i in range(1, 5):
            for customer in CUSTOMERS:
                order = f"{customer}-order-{i}"
                result = client.send_with_result(orders, order, message_group_id=customer, deduplication_id=order)
                sent.append({"body": order, "id": result.message_id, "sequence_number": result.sequence_number})
        retried = client.send_with_result(orders, "c2-order-1, sent again", message_group_id="c2",
                                          deduplication_id="c2-order-1")
        batch = client.send_batch_with_results(orders, [
            SendBatchEntry("c1-order-5", message_group_id="c1", deduplication_id="c1-order-5"),
            SendBatchEntry("c1-order-5 again", message_group_id="c1", deduplication_id="c1-order-5"),
        ])
        sent.append({"body": "c1-order-5", "id": batch[0].message_id, "sequence_number": batch[0].sequence_number})
        plain = client.send_with_result(standard, "plain")
        emit("send", sent=sent,
             retried={"id": retried.message_id, "sequence_number": retried.sequence_number},
             batch=[{"id": r.message_id, "sequence_number": r.sequence_number} for r in batch],
             plain={"id": plain.message_id, "sequence_number": plain.sequence_number})

        received = []
        while len(received) < len(sent):
            messages = client.receive(orders, max_messages=5, wait_time=5)
            if not messages:
                raise AssertionError(f"received nothing with {len(sent) - len(received)} messages left")
            received += [{"body": m.body.decode(), "id": m.message_id, "group": m.message_group_id,
                          "sequence_number": m.sequence_number, "deduplication_id": m.deduplication_id}
                         for m in messages]
            client.delete_batch(orders, [m.receipt_handle for m in messages])
        stats = client.get_queue(orders).stats
        plain_message = client.receive(standard, wait_time=5)[0]
        emit("receive", received=received, left=stats.visible + stats.in_flight + stats.delayed,
             plain=[plain_message.message_group_id, plain_message.sequence_number, plain_message.deduplication_id])

        first = client.send(by_body, "same", message_group_id="a")
        again = client.send(by_body, "same", message_group_id="a")
        other = client.send(by_body, "same", message_group_id="b")
        emit("content_based", duplicate=again == first, other_group_stored=other != first,
             deduplication_ids=[m.deduplication_id for m in client.receive(by_body, max_messages=10, wait_time=5)],
             sha256=hashlib.sha256(b"same").hexdigest())

        emit("consumer", **consume(client, orders))
        emit("consumer_failure", **consume_with_failure(client, "py-fifo-retry.fifo"))


def consume(client: Client, queue: str) -> dict[str, object]:
    """Five more orders per customer, handled by a Consumer of concurrency 4: each customer's order and overlaps."""
    per_customer = 5
    client.send_batch(queue, [SendBatchEntry(f"{customer}-later-{i}", message_group_id=customer,
                                             deduplication_id=f"{customer}-later-{i}")
                              for i in range(1, per_customer + 1) for customer in CUSTOMERS])
    lock = threading.Lock()
    handled: dict[str, list[str]] = {customer: [] for customer in CUSTOMERS}
    running: dict[str, int] = {customer: 0 for customer in CUSTOMERS}
    overlaps = 0
    errors: list[str] = []
    finished = threading.Event()

    def handle(message: ReceivedMessage, ctx: HandlerContext) -> None:
        nonlocal overlaps
        group = message.message_group_id
        with lock:
            running[group] += 1
            overlaps += running[group] > 1
        # A little work, for another handler of the group to show if one ran beside it.
        sum(range(20_000))
        with lock:
            running[group] -= 1
            handled[group].append(message.body.decode().removeprefix(f"{group}-"))
            if sum(len(done) for done in handled.values()) == per_customer * len(CUSTOMERS):
                finished.set()

    def on_error(error: BaseException, message: ReceivedMessage | None) -> None:
        with lock:
            errors.append(repr(error))

    with Consumer(client, queue, handle, concurrency=4, wait_time=1, on_error=on_error):
        if not finished.wait(30):
            raise AssertionError(f"the Consumer handled {handled}")
    return {"handled": handled, "overlaps": overlaps, "errors": errors}


def consume_with_failure(client: Client, queue: str) -> dict[str, object]:
    """A group's four messages taken in one receive, the second failing once: the two behind it wait for its retry."""
    client.create_queue(queue, QueueConfig(fifo=True, visibility_timeout=30))
    bodies = ["a0", "a1", "a2", "a3", "b0"]
    client.send_batch(queue, [SendBatchEntry(body, message_group_id=body[0], deduplication_id=body) for body in bodies])
    lock = threading.Lock()
    calls: list[str] = []
    errors: list[str] = []
    succeeded = 0
    finished = threading.Event()

    def handle(message: ReceivedMessage, ctx: HandlerContext) -> None:
        nonlocal succeeded
        body = message.body.decode()
        with lock:
            calls.append(f"{body}#{message.receive_count}")
            if body == "a1" and message.receive_count == 1:
                raise ValueError("a1 fails once")
            succeeded += 1
            if succeeded == len(bodies):
                finished.set()

    def on_error(error: BaseException, message: ReceivedMessage | None) -> None:
        with lock:
            errors.append(repr(error))

    with Consumer(client, queue, handle, concurrency=10, wait_time=1, on_error=on_error):
        if not finished.wait(30):
            raise AssertionError(f"the Consumer of the failing group made the calls {calls}")
    return {"calls": calls, "errors": errors}


if __name__ == "__main__":
    main()
