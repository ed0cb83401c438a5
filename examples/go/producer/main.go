// Command producer sends --count messages, "job-0" to "job-<count-1>", to a
// holdshelf queue (created if missing) and prints "sent <message_id>" for
// each. See docs/clients/go.md.
//
//	.build/bin/go-producer --address 127.0.0.1:50051 --queue jobs --count 20
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"time"

	holdshelf "github.com/holdshelf/holdshelf/clients/go"
)

func main() {
	address := flag.String("address", "127.0.0.1:50051", "broker address (host:port)")
	queue := flag.String("queue", "jobs", "queue to send to (created if missing)")
	count := flag.Int("count", 10, "how many messages to send")
	plaintext := flag.Bool("plaintext", false, "no TLS beyond loopback either (the default there is TLS with the system's roots)")
	flag.Parse()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var options []holdshelf.Option
	if *plaintext {
		options = append(options, holdshelf.WithPlaintext())
	}
	client, err := holdshelf.Dial(ctx, *address, options...)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	// Creating a queue that exists with the same configuration returns it.
	if _, err := client.CreateQueue(ctx, *queue, nil); err != nil {
		log.Fatal(err)
	}
	for i := 0; i < *count; i++ {
		id, err := client.Send(ctx, *queue, []byte(fmt.Sprintf("job-%d", i)), nil)
		if err != nil {
			log.Fatal(err) // e.g. "holdshelf: NOT_FOUND (QUEUE_NOT_FOUND): ..."
		}
		fmt.Println("sent", id)
	}
}
