"""A producer written from docs/clients/python.md alone, as a new user would.

Creates the queue unless it exists and sends --count messages, each with an
attribute, printing one JSON line per message sent. Its test
(test/clients/python-user.test.ts) copies it into a new directory outside
the repository, installs the library there the documented way and runs it
against a real broker.
"""

import argparse
import json

from holdshelf import Client, HoldshelfError


def main() -> None:
    parser = argparse.ArgumentParser(description="Sends numbered messages to a holdshelf queue.")
    parser.add_argument("--address", required=True)
    parser.add_argument("--queue", required=True)
    parser.add_argument("--count", type=int, default=10)
    args = parser.parse_args()

    with Client(args.address) as client:
        try:
            client.create_queue(args.queue)
        except HoldshelfError as error:
            if error.reason != "QUEUE_ALREADY_EXISTS":
                raise
        for n in range(args.count):
            body = f"order-{n}"
            message_id = client.send(args.queue, body, attributes={"n": str(n)})
            print(json.dumps({"sent": message_id, "body": body}), flush=True)


if __name__ == "__main__":
    main()
