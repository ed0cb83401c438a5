"""Sends numbered jobs to a holdshelf queue: a minimal Python producer.

Creates the queue if it is missing, sends the bodies "job-0" .. "job-<N-1>"
with SendBatch (up to 100 a call) and prints "sent <message_id>" per message.

    /usr/bin/python3 -m venv --system-site-packages .venv
    .venv/bin/pip install --no-index --no-build-isolation ./clients/python
    .venv/bin/python examples/python/producer.py --address 127.0.0.1:50051 --queue jobs --count 20
"""

import argparse

from holdshelf import Client, HoldshelfError

BATCH_LIMIT = 100  # SendBatch takes 1 to 100 entries


def main() -> None:
    parser = argparse.ArgumentParser(description="Sends numbered jobs to a holdshelf queue.")
    parser.add_argument("--address", default="127.0.0.1:50051")
    parser.add_argument("--queue", default="jobs")
    parser.add_argument("--count", type=int, default=10)
    args = parser.parse_args()

    with Client(args.address) as client:
        try:
            client.create_queue(args.queue)
        except HoldshelfError as error:
            if error.reason != "QUEUE_ALREADY_EXISTS":  # there already, with its own configuration
                raise
        for start in range(0, args.count, BATCH_LIMIT):
            bodies = [f"job-{i}" for i in range(start, min(start + BATCH_LIMIT, args.count))]
            for message_id in client.send_batch(args.queue, bodies):
                print(f"sent {message_id}", flush=True)


if __name__ == "__main__":
    main()
