// Command refusal is a test fixture of the Go client (test/clients/go-client
// .test.ts): it runs a Consumer of --queue (made by the test, or missing on
// purpose) and prints JSON lines as things happen: {"check":"reported"}
// with the code and reason of each failure OnError is told of,
// {"check":"handled"} with the body of each message handled, and once Run
// returned {"check":"run"} with its error, the error's reason, and what
// IsReason says of QUEUE_NOT_FOUND and PERMISSION_DENIED. With --stop-after
// it stops the Consumer after that many messages; without, it runs until
// Run returns on its own (or 30 s pass). With --receive it consumes the
// Receive way (Subscribe off).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"sync"
	"time"

	holdshelf "github.com/holdshelf/holdshelf/clients/go"
)

func main() {
	address := flag.String("address", "", "broker address")
	queue := flag.String("queue", "", "queue to consume")
	token := flag.String("token", "", "bearer token (none if empty)")
	stopAfter := flag.Int("stop-after", 0, "messages after which to stop (0: never)")
	receive := flag.Bool("receive", false, "consume with Receive and Heartbeat instead of Subscribe")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var options []holdshelf.Option
	if *token != "" {
		options = append(options, holdshelf.WithToken(*token))
	}
	client, err := holdshelf.Dial(ctx, *address, options...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "refusal:", err)
		os.Exit(1)
	}
	defer client.Close()

	var mu sync.Mutex
	handled := 0
	enough := make(chan struct{})
	consumer, err := holdshelf.NewConsumer(client, *queue, func(_ context.Context, d *holdshelf.Delivery) error {
		emit(map[string]any{"check": "handled", "body": string(d.Message.Body)})
		mu.Lock()
		defer mu.Unlock()
		handled++
		if handled == *stopAfter {
			close(enough)
		}
		return nil
	}, holdshelf.ConsumerOptions{Subscribe: holdshelf.Bool(!*receive), WaitTime: holdshelf.Duration(time.Second), OnError: func(err error, _ *holdshelf.Delivery) {
		code, reason := describe(err)
		emit(map[string]any{"check": "reported", "code": code, "reason": reason})
	}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "refusal:", err)
		os.Exit(1)
	}
	go func() {
		<-enough
		consumer.Stop()
	}()
	started := time.Now()
	err = consumer.Run(ctx)
	code, reason := describe(err)
	text := ""
	if err != nil {
		text = err.Error()
	}
	emit(map[string]any{
		"check": "run", "error": text, "code": code, "reason": reason,
		"queueNotFound":    holdshelf.IsReason(err, holdshelf.ReasonQueueNotFound),
		"permissionDenied": holdshelf.IsReason(err, holdshelf.ReasonPermissionDenied),
		"ms":               time.Since(started).Milliseconds(),
	})
}

// describe is an error's code and reason; empty for nil or an error of no
// broker.
func describe(err error) (string, string) {
	var e *holdshelf.Error
	if !errors.As(err, &e) {
		return "", ""
	}
	return holdshelf.CodeName(e.Code), e.Reason
}

var stdout sync.Mutex // handlers and OnError print concurrently: keep lines whole

func emit(v map[string]any) {
	stdout.Lock()
	defer stdout.Unlock()
	_ = json.NewEncoder(os.Stdout).Encode(v)
}
