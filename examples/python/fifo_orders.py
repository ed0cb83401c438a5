"""Each customer's orders processed in the order they were placed, on a FIFO queue (docs/fifo.md).

"produce" sends --orders orders for each of --customers customers,
interleaved, each with its customer as message group and its order id as
deduplication id, and prints "sent <customer> <order> <sequence number>":
run it twice and the second run stores nothing. "consume" handles them with
the Consumer, several customers at once but each customer's orders one at a
time and in order, printing "processed <customer> <order> <sequence
number>"; SIGTERM or Ctrl-C stops it.

    .venv/bin/python examples/python/fifo_orders.py produce --customers 3 --orders 4
    .venv/bin/python examples/python/fifo_orders.py consume
"""

import argparse
import json
import threading

from holdshelf import Client, Consumer, HandlerContext, QueueConfig, ReceivedMessage

print_lock = threading.Lock()  # handlers run on several threads


def produce(client: Client, queue: str, customers: int, orders: int) -> None:
    # Creating a queue that exists with the same configuration returns it.
    client.create_queue(queue, QueueConfig(fifo=True))
    for n in range(1, orders + 1):
        for c in range(1, customers + 1):
            order = {"customer": f"customer-{c}", "id": f"customer-{c}-order-{n}"}
            # A send repeated within five minutes (a retry after a timeout,
            # this program run again) returns the first send's result and
            # stores nothing.
            result = client.send_with_result(queue, json.dumps(order), message_group_id=order["customer"],
                                             deduplication_id=order["id"])
            print(f"sent {order['customer']} {order['id']} {result.sequence_number}", flush=True)


def handle(message: ReceivedMessage, ctx: HandlerContext) -> None:
    """The work: this customer's earlier orders are done. Raising retries the order; the customer's later ones wait."""
    order = json.loads(message.body)
    with print_lock:
        print(f"processed {message.message_group_id} {order['id']} {message.sequence_number}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description="Orders processed in order per customer, on a FIFO queue.")
    parser.add_argument("command", choices=["produce", "consume"])
    parser.add_argument("--address", default="127.0.0.1:50051")
    parser.add_argument("--queue", default="orders.fifo")
    parser.add_argument("--customers", type=int, default=3)
    parser.add_argument("--orders", type=int, default=4, help="orders per customer")
    args = parser.parse_args()

    with Client(args.address) as client:
        if args.command == "produce":
            produce(client, args.queue, args.customers, args.orders)
        else:
            consumer = Consumer(client, args.queue, handle, concurrency=4)
            consumer.stop_on_signals()
            consumer.wait()  # until a signal's stop has finished


if __name__ == "__main__":
    main()
