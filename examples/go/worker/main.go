// Command worker consumes a holdshelf queue with the Go client's Consumer,
// printing "processed <message_id> <body>" for each message. The Consumer
// takes messages from one Subscribe stream, which keeps every lease alive,
// deletes a message when the handler returns nil and releases it when the
// handler fails. SIGTERM or
// Ctrl-C stops it gracefully. See docs/clients/go.md.
//
//	.build/bin/go-worker --address 127.0.0.1:50051 --queue jobs
package main

import (
	"context"
	"flag"
	"fmt"
	"log"

	holdshelf "github.com/holdshelf/holdshelf/clients/go"
)

func main() {
	address := flag.String("address", "127.0.0.1:50051", "broker address (host:port)")
	queue := flag.String("queue", "jobs", "queue to consume")
	concurrency := flag.Int("concurrency", 4, "messages worked on at once")
	plaintext := flag.Bool("plaintext", false, "no TLS beyond loopback either (the default there is TLS with the system's roots)")
	flag.Parse()

	// Cancelled by SIGTERM or SIGINT: Run then stops gracefully and returns.
	ctx, stop := holdshelf.SignalContext(context.Background())
	defer stop()
	var options []holdshelf.Option
	if *plaintext {
		options = append(options, holdshelf.WithPlaintext())
	}
	client, err := holdshelf.Dial(ctx, *address, options...)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	handler := func(ctx context.Context, d *holdshelf.Delivery) error {
		// The work goes here; ctx is cancelled if the lease is lost.
		fmt.Println("processed", d.Message.ID, string(d.Message.Body))
		return nil // deletes the message
	}
	consumer, err := holdshelf.NewConsumer(client, *queue, handler, holdshelf.ConsumerOptions{Concurrency: *concurrency})
	if err != nil {
		log.Fatal(err)
	}
	// Returns at once, with QUEUE_NOT_FOUND or PERMISSION_DENIED, if the
	// broker refuses this worker for good; retries what may pass.
	if err := consumer.Run(ctx); err != nil {
		log.Fatal(err)
	}
}
