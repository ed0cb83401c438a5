"""The Client's batched send through a forwarding proxy that counts the calls, one JSON line per check.

A fixture of test/clients/python-client.test.ts:
    bad_options   batch settings out of bounds are refused with ValueError
    batched       40 threads sending at once share a few SendBatch calls; each gets its own id
    entry_error   one refused entry of a batch fails its own send (the reason and field a Send
                  would give); the others are stored
    batch_error   a failure of the whole call (QUEUE_NOT_FOUND) reaches every send of the batch
    fifo_order    4 threads each sending one group's 25 messages: each group's order and sequence
                  numbers follow its sends
    limits        batch_max_messages cuts batches at once (10, 10), the rest waits for close()
    flush         close() sends what is gathered at once, long before the delay
    timeout       a send's timeout shorter than the delay sends its batch when it runs out
    unbatched     batch_delay=0: unary Sends only; and a body over batch_max_bytes goes alone
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from collections.abc import Callable

from forwarding_proxy import ForwardingProxy

from holdshelf import Client, HoldshelfError, QueueConfig


def emit(check: str, **fields: object) -> None:
    print(json.dumps({"check": check, **fields}), flush=True)


def at_once(count: int, send: Callable[[int], object]) -> list[object]:
    """Runs send(0..count-1) on as many threads released together; each one's result or exception."""
    results: list[object] = [None] * count
    barrier = threading.Barrier(count)

    def run(i: int) -> None:
        barrier.wait()
        try:
            results[i] = send(i)
        except Exception as error:
            results[i] = error

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def drain(client: Client, queue: str) -> list[str]:
    """Receives and deletes everything visible; the bodies in receive order."""
    bodies = []
    while messages := client.receive(queue, max_messages=100):
        bodies += [m.body.decode() for m in messages]
        client.delete_batch(queue, [m.receipt_handle for m in messages])
    return bodies


def bad_options(address: str) -> None:
    refused = []
    for options in ({"batch_max_messages": 0}, {"batch_max_messages": 101}, {"batch_max_bytes": 0},
                    {"batch_max_bytes": 4 * 1024 * 1024 + 1}, {"batch_delay": -1}):
        try:
            Client(address, **options).close()
            refused.append(None)
        except ValueError as error:
            refused.append(type(error).__name__)
    emit("bad_options", refused=refused)


def batched(proxy: ForwardingProxy, direct: Client) -> None:
    direct.create_queue("batch-q")
    # A 50 ms delay, not the default 1 ms: 40 threads released together may take longer than 1 ms to start on a
    # loaded 2-core machine, and the check is that sends share calls, not how fast threads start.
    with Client(proxy.address, batch_delay=0.05) as client:
        ids = at_once(40, lambda i: client.send("batch-q", f"m{i}"))
    stored = drain(direct, "batch-q")
    emit("batched", ids=len(set(ids)), all_ids=all(isinstance(i, str) for i in ids), sends=proxy.calls["Send"],
         batches=len(proxy.send_batches), entries=sum(proxy.send_batches),
         stored=sorted(stored) == sorted(f"m{i}" for i in range(40)))


def entry_error(proxy: ForwardingProxy, direct: Client) -> None:
    direct.create_queue("batch-orders.fifo", QueueConfig(fifo=True, content_based_deduplication=True))
    before = len(proxy.send_batches)
    with Client(proxy.address, batch_delay=0.2) as client:
        outcomes = at_once(5, lambda i: client.send_with_result(
            "batch-orders.fifo", f"o{i}", message_group_id=None if i == 2 else f"g{i}"))
    refused = outcomes[2]
    stored = drain(direct, "batch-orders.fifo")
    emit("entry_error", refused={"type": type(refused).__name__, "reason": getattr(refused, "reason", ""),
                                 "fields": [v.field for v in getattr(refused, "field_violations", ())]},
         others=[type(o).__name__ for i, o in enumerate(outcomes) if i != 2],
         stored=sorted(stored), batches=proxy.send_batches[before:])


def batch_error(proxy: ForwardingProxy) -> None:
    with Client(proxy.address, batch_delay=0.2) as client:
        outcomes = at_once(3, lambda i: client.send("no-such-queue", f"x{i}"))
    emit("batch_error", errors=[[type(o).__name__, getattr(o, "reason", "")] for o in outcomes])


def fifo_order(proxy: ForwardingProxy, direct: Client) -> None:
    direct.create_queue("batch-groups.fifo", QueueConfig(fifo=True, content_based_deduplication=True))
    with Client(proxy.address) as client:
        numbers = at_once(4, lambda g: [client.send_with_result("batch-groups.fifo", f"g{g}-{n}",
                                                                message_group_id=f"g{g}").sequence_number
                                        for n in range(25)])
    stored = drain(direct, "batch-groups.fifo")
    emit("fifo_order",
         in_order=all(stored_of == [f"g{g}-{n}" for n in range(25)]
                      for g in range(4) for stored_of in [[b for b in stored if b.startswith(f"g{g}-")]]),
         increasing=all(ns == sorted(ns) and len(set(ns)) == 25 for ns in numbers), count=len(stored))


def limits(proxy: ForwardingProxy, direct: Client) -> None:
    before = len(proxy.send_batches)
    client = Client(proxy.address, batch_delay=30, batch_max_messages=10)
    returned: list[float] = []
    start = time.monotonic()
    lock = threading.Lock()

    def send(i: int) -> str:
        message_id = client.send("batch-q", f"l{i}")
        with lock:
            returned.append(time.monotonic() - start)
        return message_id

    senders = [threading.Thread(target=send, args=(i,)) for i in range(25)]
    for sender in senders:
        sender.start()
    # The 20 of two full batches return; the 5 left wait for the delay or close().
    deadline = time.monotonic() + 10
    while len(returned) < 20 and time.monotonic() < deadline:
        time.sleep(0.05)
    early = len(returned)
    time.sleep(0.3)
    client.close()
    for sender in senders:
        sender.join()
    emit("limits", early=early, total=len(returned),
         batches=proxy.send_batches[before:], stored=len(drain(direct, "batch-q")))


def flush(proxy: ForwardingProxy, direct: Client) -> None:
    client = Client(proxy.address, batch_delay=60)
    sent: list[object] = []
    sender = threading.Thread(target=lambda: sent.append(client.send("batch-q", "flushed")))
    sender.start()
    time.sleep(0.3)
    waiting = not sent
    start = time.monotonic()
    client.close()
    took = time.monotonic() - start
    sender.join(10)
    emit("flush", waiting_before=waiting, close_seconds=took, sent=len(sent), stored=drain(direct, "batch-q"))


def timeout(proxy: ForwardingProxy, direct: Client) -> None:
    with Client(proxy.address, batch_delay=60) as client:
        start = time.monotonic()
        client.send("batch-q", "in time", timeout=0.5)
        took = time.monotonic() - start
    emit("timeout", seconds=took, stored=drain(direct, "batch-q"))


def unbatched(proxy: ForwardingProxy, direct: Client) -> None:
    sends, batches = proxy.calls["Send"], proxy.calls["SendBatch"]
    with Client(proxy.address, batch_delay=0) as client:
        at_once(5, lambda i: client.send("batch-q", f"u{i}"))
    plain = [proxy.calls["Send"] - sends, proxy.calls["SendBatch"] - batches]
    sends = proxy.calls["Send"]
    with Client(proxy.address, batch_max_bytes=1000) as client:
        client.send("batch-q", "x" * 2000)
    emit("unbatched", plain=plain, too_large=proxy.calls["Send"] - sends, stored=len(drain(direct, "batch-q")))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--address", required=True)
    args = parser.parse_args()
    proxy = ForwardingProxy(args.address, subscribe=True)
    try:
        with Client(args.address) as direct:
            bad_options(args.address)
            batched(proxy, direct)
            entry_error(proxy, direct)
            batch_error(proxy)
            fifo_order(proxy, direct)
            limits(proxy, direct)
            flush(proxy, direct)
            timeout(proxy, direct)
            unbatched(proxy, direct)
    finally:
        proxy.stop()


if __name__ == "__main__":
    main()
