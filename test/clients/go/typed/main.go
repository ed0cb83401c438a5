// Command typed is a test fixture of the Go client (test/clients/go-client
// .test.ts): typed attributes against a broker whose SQS endpoint the test
// reads and writes. With --mode send it sends three messages with String,
// Number, Binary and labelled String attributes: two by concurrent Sends
// (gathered into one SendBatch) and one by SendBatch, and prints
// {"check":"sent","ids":[...]}. With --mode receive it consumes --count
// messages with a Consumer and prints {"check":"received","messages":[...]},
// each with its attributes and typed attributes (binary values in base64).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sync"
	"time"

	holdshelf "github.com/holdshelf/holdshelf/clients/go"
)

func main() {
	address := flag.String("address", "", "broker address")
	queue := flag.String("queue", "", "queue")
	mode := flag.String("mode", "", "send or receive")
	count := flag.Int("count", 1, "messages to receive")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client, err := holdshelf.Dial(ctx, *address)
	must(err)
	defer client.Close()
	switch *mode {
	case "send":
		send(ctx, client, *queue)
	case "receive":
		receive(ctx, client, *queue, *count)
	default:
		must(fmt.Errorf("--mode must be send or receive, not %q", *mode))
	}
}

func attributes(n int) *holdshelf.SendOptions {
	return &holdshelf.SendOptions{
		Attributes: map[string]string{"tenant": "acme"},
		TypedAttributes: map[string]holdshelf.TypedAttribute{
			"price": {DataType: "Number", StringValue: fmt.Sprintf("%d.99", n)},
			"thumb": {DataType: "Binary.png", BinaryValue: []byte{0x89, 'P', 'N', 'G', byte(n)}},
			"label": {DataType: "String.json", StringValue: fmt.Sprintf(`{"n":%d}`, n)},
		},
	}
}

func send(ctx context.Context, client *holdshelf.Client, queue string) {
	ids := make([]string, 3)
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			id, err := client.Send(ctx, queue, []byte(fmt.Sprintf("typed-%d", i)), attributes(i))
			must(err)
			ids[i] = id
		}(i)
	}
	wg.Wait()
	options := attributes(2)
	batch, err := client.SendBatch(ctx, queue, []holdshelf.SendBatchEntry{{
		Body: []byte("typed-2"), Attributes: options.Attributes, TypedAttributes: options.TypedAttributes,
	}})
	must(err)
	ids[2] = batch[0]
	emit(map[string]any{"check": "sent", "ids": ids})
}

func receive(ctx context.Context, client *holdshelf.Client, queue string, count int) {
	var mu sync.Mutex
	var messages []map[string]any
	all := make(chan struct{})
	consumer, err := holdshelf.NewConsumer(client, queue, func(_ context.Context, d *holdshelf.Delivery) error {
		typed := map[string]any{}
		for name, a := range d.Message.TypedAttributes {
			typed[name] = map[string]any{"dataType": a.DataType, "stringValue": a.StringValue, "binaryValue": a.BinaryValue}
		}
		mu.Lock()
		defer mu.Unlock()
		messages = append(messages, map[string]any{
			"id": d.Message.ID, "body": string(d.Message.Body), "attributes": d.Message.Attributes, "typedAttributes": typed,
		})
		if len(messages) == count {
			close(all)
		}
		return nil
	}, holdshelf.ConsumerOptions{Concurrency: count, OnError: func(err error, _ *holdshelf.Delivery) {
		fmt.Fprintln(os.Stderr, "typed:", err)
	}})
	must(err)
	go func() {
		select {
		case <-all:
		case <-ctx.Done():
		}
		consumer.Stop()
	}()
	must(consumer.Run(ctx))
	mu.Lock()
	defer mu.Unlock()
	emit(map[string]any{"check": "received", "messages": messages})
}

func emit(v map[string]any) {
	_ = json.NewEncoder(os.Stdout).Encode(v)
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "typed:", err)
		os.Exit(1)
	}
}
