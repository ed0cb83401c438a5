// Each customer's orders processed in the order they were placed, on a FIFO
// queue (docs/fifo.md). "produce" sends --orders orders for each of
// --customers customers, interleaved, each with its customer as message
// group and its order id as deduplication id, and prints "sent <customer>
// <order> <sequence number>": run it twice and the second run stores
// nothing. "consume" handles them with the Consumer, several customers at
// once but each customer's orders one at a time and in order, printing
// "processed <customer> <order> <sequence number>"; SIGTERM or Ctrl-C stops it.
//
//   node .build/examples/typescript/fifo-orders.js produce --customers 3 --orders 4
//   node .build/examples/typescript/fifo-orders.js consume
import { parseArgs } from "node:util";
import { QueueClient, stopOnSignals } from "holdshelf";

interface Order {
  readonly customer: string;
  readonly id: string;
}

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    address: { type: "string", default: "127.0.0.1:50051" },
    queue: { type: "string", default: "orders.fifo" },
    customers: { type: "string", default: "3" },
    orders: { type: "string", default: "4" },
  },
});
const client = new QueueClient(values.address);

if (positionals[0] === "produce") {
  // Creating a queue that exists with the same configuration returns it.
  await client.createQueue(values.queue, { fifo: true });
  for (let n = 1; n <= Number(values.orders); n++) {
    for (let c = 1; c <= Number(values.customers); c++) {
      const order: Order = { customer: `customer-${c}`, id: `customer-${c}-order-${n}` };
      // A send repeated within five minutes (a retry after a timeout, this
      // program run again) returns the first send's result and stores nothing.
      const { sequenceNumber } = await client.sendWithResult(values.queue, JSON.stringify(order), {
        messageGroupId: order.customer,
        deduplicationId: order.id,
      });
      console.log("sent", order.customer, order.id, sequenceNumber);
    }
  }
} else if (positionals[0] === "consume") {
  const consumer = client.consume(
    values.queue,
    async (message) => {
      const order = JSON.parse(Buffer.from(message.body).toString()) as Order;
      // The work goes here: this customer's earlier orders are done.
      console.log("processed", message.messageGroupId, order.id, message.sequenceNumber);
    }, // resolving deletes the order, and the customer's next one can come; throwing retries it, the later ones waiting
    { concurrency: 4 },
  );
  await stopOnSignals(consumer);
} else {
  console.error(
    "usage: fifo-orders produce|consume [--address host:port] [--queue orders.fifo] [--customers N] [--orders N]",
  );
  process.exitCode = 2;
}
client.close();
