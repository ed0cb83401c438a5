"""Every RPC of holdshelf.Client once, printing what it returned as JSON lines.

A fixture of test/clients/python-client.test.ts: one line per RPC,
{"rpc": NAME, ...fields}, with datetimes as ISO strings (their tzinfo
checked here) and durations as the floats the package returns.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from datetime import datetime, timedelta, timezone

from holdshelf import Client, LeaseRenewal, QueueConfig, RedrivePolicy, RetryPolicy, SendBatchEntry


def plain(value: object) -> object:
    """A JSON-able copy: dataclasses as dicts, bytes as text, aware datetimes as ISO strings."""
    if dataclasses.is_dataclass(value):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, datetime):
        if value.tzinfo != timezone.utc:
            raise AssertionError(f"a datetime that is not UTC-aware: {value!r}")
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


def emit(rpc: str, **fields: object) -> None:
    print(json.dumps({"rpc": rpc, **{k: plain(v) for k, v in fields.items()}}), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--address", required=True)
    args = parser.parse_args()
    with Client(args.address) as client:
        dlq = client.create_queue("py-dlq")
        config = QueueConfig(visibility_timeout=timedelta(seconds=20), delay=0, retention=3600.5,
                             max_message_bytes=4096, receive_wait_time=0.25, max_in_flight=50,
                             max_lease_duration=7200, redrive_policy=RedrivePolicy(dlq.name, 3),
                             retry_policy=RetryPolicy(0.5, 8))
        emit("create_queue", queue=client.create_queue("py-main", config))
        emit("get_queue", queue=client.get_queue("py-dlq"))
        first = client.list_queues(prefix="py-", page_size=1)
        second = client.list_queues(prefix="py-", page_size=1, page_token=first.next_page_token)
        emit("list_queues", first=[q.name for q in first.queues], second=[q.name for q in second.queues],
             last_token=second.next_page_token)
        updated = client.update_queue("py-main", dataclasses.replace(config, redrive_policy=None, retry_policy=None))
        emit("update_queue", queue=updated)
        partial = client.update_queue("py-main", QueueConfig(visibility_timeout=99, max_in_flight=60),
                                      fields=["max_in_flight"])
        refusals = []
        for fields in ([], ["visibilityTimeout"], "max_in_flight"):
            try:
                client.update_queue("py-main", QueueConfig(), fields=fields)
            except ValueError as error:
                refusals.append(str(error))
        emit("update_queue_fields", queue=partial, refusals=refusals)

        message_id = client.send("py-main", "one", attributes={"kind": "text"}, delay=0)
        emit("send", message_id=message_id)
        ids = client.send_batch("py-main", [b"two", SendBatchEntry("three", {"n": "3"}), SendBatchEntry("later", delay=60)])
        emit("send_batch", message_ids=ids)
        received = client.receive("py-main", max_messages=10, visibility_timeout=30, wait_time=1)
        emit("receive", messages=received)

        handles = [m.receipt_handle for m in received]
        emit("change_visibility", deadline=client.change_visibility("py-main", handles[0], timedelta(seconds=45)))
        emit("change_visibility_batch", results=client.change_visibility_batch("py-main", [handles[1], "forged"], 40))
        emit("delete", result=client.delete("py-main", handles[0]))
        emit("delete_batch", results=client.delete_batch("py-main", handles[1:]))

        stream = client.heartbeat()
        states = iter(stream)
        client.send("py-main", "leased")
        [leased] = client.receive("py-main", wait_time=1)
        stream.send("py-main", [LeaseRenewal(leased.receipt_handle, 10, b"half")], release_on_disconnect=True)
        renewed = next(states)
        stream.send("py-main", [LeaseRenewal(leased.receipt_handle, None, None, failed=True)])
        failed = next(states)
        stream.half_close()
        emit("heartbeat", renewed=renewed, failed=failed, ended=next(states, "ended"))
        [again] = client.receive("py-main", wait_time=2)
        emit("heartbeat_checkpoint", checkpoint=again.checkpoint, receive_count=again.receive_count)
        client.change_visibility("py-main", again.receipt_handle, 0)

        emit("purge_queue", purged=client.purge_queue("py-main"))
        client.send("py-dlq", "dead")
        emit("redrive_messages", moved=client.redrive_messages("py-dlq", destination_queue="py-main"))
        emit("delete_queue", result=client.delete_queue("py-main"),
             remaining=[q.name for q in client.list_queues(prefix="py-").queues])


if __name__ == "__main__":
    main()
