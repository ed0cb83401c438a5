// Command consumer is a test fixture of the Go client (test/clients/go-client
// .test.ts): it checks what the conformance worker protocol does not reach.
// A handler that panics on its first delivery counts as failed (reported to
// OnError with its delivery, the message back for a second delivery); on
// the second, LastCheckpoint follows Checkpoint, and a Checkpoint whose
// context is already cancelled returns that context's error. Then, on each
// path, a handled message dead-lettered before its delete or ack is
// reported to OnError as a *LeaseLostError (DEAD_LETTERED). Prints two
// JSON lines, then exits 0.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	holdshelf "github.com/holdshelf/holdshelf/clients/go"
)

func main() {
	address := flag.String("address", "", "broker address")
	queue := flag.String("queue", "go-consumer", "queue to make and consume")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client, err := holdshelf.Dial(ctx, *address)
	must(err)
	defer client.Close()
	_, err = client.CreateQueue(ctx, *queue, &holdshelf.QueueConfig{VisibilityTimeout: holdshelf.Duration(5 * time.Second)})
	must(err)
	_, err = client.Send(ctx, *queue, []byte("job"), nil)
	must(err)

	var mu sync.Mutex
	result := map[string]any{"check": "consumer", "deliveries": []int32{}}
	reported := []string{}
	done := make(chan struct{})
	handler := func(ctx context.Context, d *holdshelf.Delivery) error {
		mu.Lock()
		result["deliveries"] = append(result["deliveries"].([]int32), d.Message.ReceiveCount)
		mu.Unlock()
		if d.Message.ReceiveCount == 1 {
			panic("boom")
		}
		must(d.Checkpoint(ctx, []byte("half-way")))
		cancelled, stop := context.WithCancel(ctx)
		stop()
		late := d.Checkpoint(cancelled, []byte("never"))
		mu.Lock()
		result["lastCheckpoint"] = string(d.LastCheckpoint())
		result["cancelledCheckpoint"] = errors.Is(late, context.Canceled)
		mu.Unlock()
		close(done)
		return nil
	}
	consumer, err := holdshelf.NewConsumer(client, *queue, handler, holdshelf.ConsumerOptions{
		WaitTime: holdshelf.Duration(time.Second),
		OnError: func(err error, d *holdshelf.Delivery) {
			mu.Lock()
			defer mu.Unlock()
			if d != nil {
				reported = append(reported, fmt.Sprintf("%d: %v", d.Message.ReceiveCount, err))
			}
		},
	})
	must(err)
	go func() {
		<-done
		consumer.Stop()
	}()
	must(consumer.Run(ctx))
	mu.Lock()
	defer mu.Unlock()
	result["reported"] = strings.Join(reported, "; ")
	_ = json.NewEncoder(os.Stdout).Encode(result)
	deadLettered(ctx, client, *queue)
}

// deadLettered runs a Consumer on each path whose handler releases its
// message's last allowed delivery, which moves it to the dead-letter queue
// at once, then returns nil: the delete or ack comes too late.
func deadLettered(ctx context.Context, client *holdshelf.Client, prefix string) {
	dlq, once := prefix+"-dlq", prefix+"-once"
	_, err := client.CreateQueue(ctx, dlq, nil)
	must(err)
	_, err = client.CreateQueue(ctx, once, &holdshelf.QueueConfig{
		RedrivePolicy: &holdshelf.RedrivePolicy{DeadLetterQueue: dlq, MaxReceiveCount: 1},
	})
	must(err)
	result := map[string]any{"check": "deadLettered"}
	for i, subscribe := range []bool{true, false} {
		_, err = client.Send(ctx, once, []byte("late"), nil)
		must(err)
		reported := make(chan error, 10)
		dead := int64(i + 1)
		handler := func(ctx context.Context, d *holdshelf.Delivery) error {
			if _, err := client.ChangeVisibility(ctx, once, d.Message.ReceiptHandle, 0); err != nil {
				return err
			}
			// The ack must come after the move, not race it: GetQueue runs the move that is due, and
			// the dead-letter queue then holds the message.
			for {
				q, err := client.GetQueue(ctx, dlq)
				if err != nil {
					return err
				}
				if q.Stats.Visible >= dead {
					return nil
				}
				if _, err := client.GetQueue(ctx, once); err != nil {
					return err
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
		consumer, err := holdshelf.NewConsumer(client, once, handler, holdshelf.ConsumerOptions{
			Subscribe: &subscribe,
			WaitTime:  holdshelf.Duration(time.Second),
			OnError:   func(err error, _ *holdshelf.Delivery) { reported <- err },
		})
		must(err)
		go func() {
			var lost *holdshelf.LeaseLostError
			select {
			case err := <-reported:
				if errors.As(err, &lost) {
					result[fmt.Sprintf("subscribe=%t", subscribe)] = lost.Reason
				} else {
					result[fmt.Sprintf("subscribe=%t", subscribe)] = err.Error()
				}
			case <-time.After(10 * time.Second):
			}
			consumer.Stop()
		}()
		must(consumer.Run(ctx))
	}
	_ = json.NewEncoder(os.Stdout).Encode(result)
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "consumer:", err)
		os.Exit(1)
	}
}
