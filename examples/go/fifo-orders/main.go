// Command fifo-orders processes each customer's orders in the order they
// were placed, on a FIFO queue (docs/fifo.md). "produce" sends --orders
// orders for each of --customers customers, interleaved, each with its
// customer as message group and its order id as deduplication id, and prints
// "sent <customer> <order> <sequence number>": run it twice and the second
// run stores nothing. "consume" handles them with the Consumer, several
// customers at once but each customer's orders one at a time and in order,
// printing "processed <customer> <order> <sequence number>"; SIGTERM or
// Ctrl-C stops it.
//
//	.build/bin/go-fifo-orders produce --customers 3 --orders 4
//	.build/bin/go-fifo-orders consume
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"time"

	holdshelf "github.com/holdshelf/holdshelf/clients/go"
)

// Order is a message's body.
type Order struct {
	Customer string `json:"customer"`
	ID       string `json:"id"`
}

func main() {
	if len(os.Args) < 2 || (os.Args[1] != "produce" && os.Args[1] != "consume") {
		log.Fatal("usage: fifo-orders produce|consume [--address host:port] [--queue orders.fifo] ...")
	}
	flags := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	address := flags.String("address", "127.0.0.1:50051", "broker address (host:port)")
	queue := flags.String("queue", "orders.fifo", "FIFO queue of orders")
	customers := flags.Int("customers", 3, "produce: how many customers")
	orders := flags.Int("orders", 4, "produce: orders per customer")
	_ = flags.Parse(os.Args[2:])

	// Cancelled by SIGTERM or SIGINT: the Consumer then stops gracefully.
	ctx, stop := holdshelf.SignalContext(context.Background())
	defer stop()
	client, err := holdshelf.Dial(ctx, *address)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	if os.Args[1] == "produce" {
		err = produce(ctx, client, *queue, *customers, *orders)
	} else {
		err = consume(ctx, client, *queue)
	}
	if err != nil {
		log.Fatal(err)
	}
}

func produce(ctx context.Context, client *holdshelf.Client, queue string, customers, orders int) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	// Creating a queue that exists with the same configuration returns it.
	if _, err := client.CreateQueue(ctx, queue, &holdshelf.QueueConfig{FIFO: true}); err != nil {
		return err
	}
	for n := 1; n <= orders; n++ {
		for c := 1; c <= customers; c++ {
			order := Order{Customer: fmt.Sprintf("customer-%d", c), ID: fmt.Sprintf("customer-%d-order-%d", c, n)}
			body, _ := json.Marshal(order)
			// A send repeated within five minutes (a retry after a timeout,
			// this program run again) returns the first send's result and
			// stores nothing.
			result, err := client.SendWithResult(ctx, queue, body, &holdshelf.SendOptions{
				MessageGroupID:  order.Customer,
				DeduplicationID: order.ID,
			})
			if err != nil {
				return err
			}
			fmt.Println("sent", order.Customer, order.ID, result.SequenceNumber)
		}
	}
	return nil
}

func consume(ctx context.Context, client *holdshelf.Client, queue string) error {
	handler := func(ctx context.Context, d *holdshelf.Delivery) error {
		var order Order
		if err := json.Unmarshal(d.Message.Body, &order); err != nil {
			return err // retried after the queue's backoff; the customer's later orders wait
		}
		// The work goes here: this customer's earlier orders are done.
		fmt.Println("processed", d.Message.MessageGroupID, order.ID, d.Message.SequenceNumber)
		return nil // deletes the order, and the customer's next one can come
	}
	consumer, err := holdshelf.NewConsumer(client, queue, handler, holdshelf.ConsumerOptions{Concurrency: 4})
	if err != nil {
		return err
	}
	return consumer.Run(ctx)
}
