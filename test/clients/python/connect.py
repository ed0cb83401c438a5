"""Connects with the given TLS and token options and makes a unary call and a stream.

A fixture of test/clients/python-client.test.ts. Prints three JSON lines:
{"call": "list_queues", "ok": true, "queues": [...]},
{"call": "heartbeat", "ok": true} (an empty request on --queue, answered) and
{"call": "subscribe", "ok": true, "answer": [...]} (a Subscribe stream on
--queue whose first request renews a forged handle, answered not held),
or "ok": false with the HoldshelfError's code and reason. --tls on|off passes
tls=True|False (default: neither, the Client's choice by address);
--allow-plaintext-token passes allow_plaintext_token=True; a Client that
refuses its options prints {"call": "client", "ok": false, "error": ...};
--target-name checks the broker's certificate against that name instead of
the address's (grpcio's ssl_target_name_override).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable

from holdshelf import Client, FlowControl, HoldshelfError, LeaseRenewal


def attempt(call: str, run: Callable[[], dict[str, object]]) -> None:
    try:
        line = {"ok": True, **run()}
    except HoldshelfError as error:
        line = {"ok": False, "code": error.code.name, "reason": error.reason, "message": error.message}
    print(json.dumps({"call": call, **line}), flush=True)


def heartbeat(client: Client, queue: str) -> dict[str, object]:
    stream = client.heartbeat()
    stream.send(queue)
    answer = next(iter(stream))
    stream.cancel()
    return {"answer": [state.receipt_handle for state in answer]}


def subscribe(client: Client, queue: str) -> dict[str, object]:
    stream = client.subscribe()
    stream.open(queue, flow_control=FlowControl(0), renewals=[LeaseRenewal("forged")])
    answer = next(iter(stream))
    stream.cancel()
    return {"answer": [[state.receipt_handle, state.reason] for state in answer.leases]}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--address", required=True)
    parser.add_argument("--queue", required=True)
    parser.add_argument("--token")
    parser.add_argument("--ca-file")
    parser.add_argument("--cert-file")
    parser.add_argument("--key-file")
    parser.add_argument("--tls", choices=["on", "off"])
    parser.add_argument("--target-name")
    parser.add_argument("--allow-plaintext-token", action="store_true")
    args = parser.parse_args()
    tls = None if args.tls is None else args.tls == "on"
    options = [] if args.target_name is None else [("grpc.ssl_target_name_override", args.target_name)]
    try:
        client = Client(args.address, tls=tls, token=args.token, ca_file=args.ca_file, cert_file=args.cert_file,
                        key_file=args.key_file, allow_plaintext_token=args.allow_plaintext_token, options=options)
    except ValueError as error:
        print(json.dumps({"call": "client", "ok": False, "error": str(error)}), flush=True)
        return
    with client:
        attempt("list_queues", lambda: {"queues": [q.name for q in client.list_queues(timeout=15).queues]})
        attempt("heartbeat", lambda: heartbeat(client, args.queue))
        attempt("subscribe", lambda: subscribe(client, args.queue))


if __name__ == "__main__":
    main()
