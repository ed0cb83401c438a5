"""A holdshelf worker: a handler function and the library's Consumer.

The Consumer takes messages from one Subscribe stream (or, on a broker
without Subscribe, receives them), keeps every lease alive on that stream,
deletes a message when the handler returns and brings it back after the
queue's retry backoff when it raises. SIGTERM or SIGINT stops it: running
handlers get their grace period, then it exits 0. A queue that does not
exist stops it at once, with a message saying so.

    /usr/bin/python3 -m venv --system-site-packages .venv
    .venv/bin/pip install --no-index --no-build-isolation ./clients/python
    .venv/bin/python examples/python/worker.py --address 127.0.0.1:50051 --queue jobs
"""

import argparse
import sys
import threading

from holdshelf import Client, Consumer, HandlerContext, NotFoundError, ReceivedMessage


print_lock = threading.Lock()  # handlers run on several threads


def handle(message: ReceivedMessage, ctx: HandlerContext) -> None:
    """The work. A long job would check ctx.cancelled and call ctx.checkpoint(progress)."""
    body = message.body.decode("utf-8", "replace")
    with print_lock:
        print(f"processed {message.message_id} {body}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description="Processes a holdshelf queue's messages.")
    parser.add_argument("--address", default="127.0.0.1:50051")
    parser.add_argument("--queue", default="jobs")
    parser.add_argument("--concurrency", type=int, default=4)
    args = parser.parse_args()

    with Client(args.address) as client:
        consumer = Consumer(client, args.queue, handle, concurrency=args.concurrency)
        consumer.stop_on_signals()
        try:
            consumer.wait()  # until a signal's stop has finished
        except NotFoundError:  # raised at once: retrying cannot make the queue exist
            sys.exit(f"no queue named {args.queue}: create it first (holdshelf queue create {args.queue})")


if __name__ == "__main__":
    main()
