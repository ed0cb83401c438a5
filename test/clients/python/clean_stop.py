"""A worker written as docs/clients/python.md's, with logging on: stopped by a signal, it logs no ERROR.

A fixture of test/clients/python-client.test.ts, which sends it SIGINT once
every handler has started. Each handler follows the documented pattern:
steps that stop when the lease is lost or given back, then `raise ctx.lost`.
The grace period is short, so that stop() gives the messages back. Prints
{"started": <body>} per handler and {"stopped": true} once wait() returns;
logs to standard error at INFO with each line's level first.
"""

from __future__ import annotations

import argparse
import json
import logging
import threading

from holdshelf import Client, Consumer, HandlerContext, ReceivedMessage


# Handlers print from threads of their own: one line at a time, or two lines could interleave.
_print_lock = threading.Lock()


def handle(message: ReceivedMessage, ctx: HandlerContext) -> None:
    with _print_lock:
        print(json.dumps({"started": message.body.decode()}), flush=True)
    start = int(ctx.last_checkpoint or b"0")
    for step in range(start, 600):
        if ctx.cancelled.wait(0.1):
            raise ctx.lost  # lost: raise, since returning would delete the unfinished job
        ctx.checkpoint(str(step + 1).encode())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--address", required=True)
    parser.add_argument("--queue", required=True)
    parser.add_argument("--concurrency", type=int, default=3)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s %(message)s")
    with Client(args.address) as client:
        consumer = Consumer(client, args.queue, handle, concurrency=args.concurrency, stop_grace=0.2)
        consumer.stop_on_signals()
        consumer.wait()
    print(json.dumps({"stopped": True}), flush=True)


if __name__ == "__main__":
    main()
