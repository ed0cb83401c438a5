"""The holdshelf package's error paths, one JSON line per check.

A fixture of test/clients/python-client.test.ts. Each line is
{"check": NAME, "type": exception class (HoldshelfError's subclass of the
reason's family), "code", "reason", "fields"} for a HoldshelfError, or {"check", "type", "message"} for an error the package
raises itself before any call; {"check", "type": "none"} if nothing was raised.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable

from holdshelf import Client, HoldshelfError, QueueConfig, SendBatchEntry


def check(name: str, call: Callable[[], object]) -> None:
    try:
        call()
    except HoldshelfError as error:
        fields = [[v.field, bool(v.description)] for v in error.field_violations]
        line = {"type": type(error).__name__, "code": error.code.name, "reason": error.reason,
                "message": error.message, "fields": fields}
    except Exception as error:
        line = {"type": type(error).__name__, "message": str(error)}
    else:
        line = {"type": "none"}
    print(json.dumps({"check": name, **line}), flush=True)


def lease_superseded(client: Client) -> None:
    client.send("errors", "twice")
    [first] = client.receive("errors", wait_time=1)
    client.change_visibility("errors", first.receipt_handle, 0)
    client.receive("errors", wait_time=1)
    client.delete("errors", first.receipt_handle)


def heartbeat_unknown_queue(client: Client) -> None:
    stream = client.heartbeat()
    stream.send("no-such-queue")
    for _ in stream:
        pass


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--address", required=True)
    parser.add_argument("--unreachable", required=True, help="an address nothing listens on")
    args = parser.parse_args()
    with Client(args.address) as client:
        client.create_queue("errors")
        check("queue_not_found", lambda: client.get_queue("no-such-queue"))
        check("config_out_of_bounds", lambda: client.create_queue("bad", QueueConfig(retention=1, max_message_bytes=1)))
        check("batch_entry", lambda: client.send_batch("errors", [b"fine", SendBatchEntry(b"", {"": "empty key"})]))
        check("lease_superseded", lambda: lease_superseded(client))
        check("receipt_handle_invalid", lambda: client.delete("errors", "forged"))
        check("already_exists", lambda: client.create_queue("errors", QueueConfig(max_in_flight=7)))
        check("heartbeat_queue_not_found", lambda: heartbeat_unknown_queue(client))
        check("negative_duration", lambda: client.send("errors", "x", delay=-1))
        check("bad_token", lambda: Client(args.address, token="two words"))
        check("cert_without_key", lambda: Client(args.address, cert_file="/dev/null"))
        check("plaintext_with_files", lambda: Client(args.address, tls=False, ca_file="/dev/null"))
    with Client(args.unreachable) as unreachable:
        check("unreachable", lambda: unreachable.list_queues(timeout=10))


if __name__ == "__main__":
    main()
