"""Interop probe: how the holdshelf Python package sees holdshelf's errors.

A test fixture for test/interop (not an example). It runs five checks in
order against a broker and prints one JSON line per check:

    queue_not_found   GetQueue of "<prefix>-missing"
    invalid_argument  Receive with max_messages=1000 (fields: the BadRequest's)
    lease_superseded  Delete with a handle whose message was received again
    deadline          a 10 s long poll with a 300 ms client timeout; then a
                      Send, and the queue's visible / in-flight counts
    cancel            a 10 s long poll cancelled by the client after 300 ms;
                      then the same

Codes are grpc.StatusCode names, reasons and fields come from the
HoldshelfError the package raises ("OK" as the code if a call unexpectedly
succeeded). Exits 0 once every check has printed, 1 only on an unexpected
crash. Run it with the python of a venv where clients/python is installed:

    .venv/bin/python test/interop/python/probe.py --address 127.0.0.1:50051
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable

from holdshelf import Client, HoldshelfError, ReceivedMessage


def emit(**fields: object) -> None:
    print(json.dumps(fields), flush=True)


def failure(call: Callable[[], object]) -> tuple[str, str, list[str]]:
    """Runs a call expected to fail: (code name, reason, BadRequest fields)."""
    try:
        call()
    except HoldshelfError as error:
        return error.code.name, error.reason, [violation.field for violation in error.field_violations]
    return "OK", "", []


class Probe:
    def __init__(self, client: Client, prefix: str) -> None:
        self.client = client
        self.queue = f"{prefix}-q"
        self.missing = f"{prefix}-missing"

    def receive_one(self, visibility: float = 30) -> ReceivedMessage:
        messages = self.client.receive(self.queue, max_messages=1, visibility_timeout=visibility, wait_time=5)
        if len(messages) != 1:
            raise RuntimeError(f"expected one message on {self.queue}, got {len(messages)}")
        return messages[0]

    def send_and_count(self) -> dict[str, int]:
        """Sends one message, reads the counts, then receives and deletes it."""
        self.client.send(self.queue, b"after")
        stats = self.client.get_queue(self.queue).stats
        counts = {"visibleAfter": stats.visible, "inFlightAfter": stats.in_flight}
        self.client.delete(self.queue, self.receive_one().receipt_handle)
        return counts

    def queue_not_found(self) -> None:
        code, reason, _ = failure(lambda: self.client.get_queue(self.missing))
        emit(check="queue_not_found", code=code, reason=reason)

    def invalid_argument(self) -> None:
        self.client.create_queue(self.queue)
        self.client.purge_queue(self.queue)  # a rerun starts empty
        code, reason, fields = failure(lambda: self.client.receive(self.queue, max_messages=1000))
        emit(check="invalid_argument", code=code, reason=reason, fields=fields)

    def lease_superseded(self) -> None:
        self.client.send(self.queue, b"superseded")
        first = self.receive_one().receipt_handle
        self.client.change_visibility(self.queue, first, 0)
        second = self.receive_one().receipt_handle
        code, reason, _ = failure(lambda: self.client.delete(self.queue, first))
        emit(check="lease_superseded", code=code, reason=reason)
        self.client.delete(self.queue, second)

    def deadline(self) -> None:
        code, _, _ = failure(lambda: self.client.receive(self.queue, max_messages=1, wait_time=10, timeout=0.3))
        emit(check="deadline", code=code, **self.send_and_count())

    def cancel(self) -> None:
        pending = self.client.start_receive(self.queue, max_messages=1, wait_time=10)
        time.sleep(0.3)
        pending.cancel()
        code, _, _ = failure(pending.result)  # as the client sees it: CANCELLED
        emit(check="cancel", code=code, **self.send_and_count())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--address", default="127.0.0.1:50051")
    parser.add_argument("--queue", default="jobs", help="accepted for uniformity; the probe uses its own queues")
    parser.add_argument("--queue-prefix", default="probe", help="queues <P>-missing and <P>-q (default %(default)s)")
    args = parser.parse_args()
    with Client(args.address) as client:
        probe = Probe(client, args.queue_prefix)
        probe.queue_not_found()
        probe.invalid_argument()
        probe.lease_superseded()
        probe.deadline()
        probe.cancel()
    return 0


if __name__ == "__main__":
    sys.exit(main())
