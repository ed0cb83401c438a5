"""A worker written from docs/clients/python.md alone, as a new user would.

A Consumer runs the handler on each message of the queue, printing one JSON
line per message handled; SIGTERM stops it gracefully. Its test
(test/clients/python-user.test.ts) copies it into a new directory outside
the repository, installs the library there the documented way and runs it
against a real broker.
"""

import argparse
import json
import threading

from holdshelf import Client, Consumer, HandlerContext, ReceivedMessage

print_lock = threading.Lock()  # handlers run on several threads


def handle(message: ReceivedMessage, ctx: HandlerContext) -> None:
    """Prints the message; returning deletes it (a job this short never checks ctx.cancelled)."""
    line = {"processed": message.message_id, "body": message.body.decode(), "attributes": message.attributes}
    with print_lock:
        print(json.dumps(line), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description="Handles a holdshelf queue's messages.")
    parser.add_argument("--address", required=True)
    parser.add_argument("--queue", required=True)
    args = parser.parse_args()

    with Client(args.address) as client:
        consumer = Consumer(client, args.queue, handle, concurrency=4)
        consumer.stop_on_signals()  # SIGTERM and SIGINT stop it gracefully
        consumer.wait()


if __name__ == "__main__":
    main()
