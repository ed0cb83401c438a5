// Command go-conformance-worker is the Go conformance worker that the
// consumer conformance suite drives (test/conformance/worker-protocol.md):
// a worker written on the holdshelf Go library as a user would write one,
// printing one JSON line per event of its handler.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	holdshelf "github.com/holdshelf/holdshelf/clients/go"
)

// job is a message's body; every field is optional.
type job struct {
	Steps        int     `json:"steps"`
	StepMs       int     `json:"stepMs"`
	Checkpoint   *bool   `json:"checkpoint"`
	FailTimes    int32   `json:"failTimes"`
	Failure      string  `json:"failure"`
	RetrySeconds float64 `json:"retrySeconds"`
}

func main() {
	address := flag.String("address", "", "broker address (host:port), plaintext")
	queue := flag.String("queue", "", "queue to consume")
	concurrency := flag.Int("concurrency", 1, "the Consumer's concurrency")
	visibility := flag.Float64("visibility-timeout", 0, "lease length in seconds (default: the queue's)")
	stopGrace := flag.Float64("stop-grace", 10, "grace period of the stop SIGTERM starts, in seconds")
	waitTime := flag.Float64("wait-time", 1, "long-poll wait of each receive, in seconds")
	mode := flag.String("mode", "subscribe", "subscribe (the Consumer's default) or receive (its Receive path)")
	flag.Parse()
	if *address == "" || *queue == "" {
		fmt.Fprintln(os.Stderr, "go-conformance-worker: --address and --queue are required")
		os.Exit(2)
	}
	if *mode != "subscribe" && *mode != "receive" {
		fmt.Fprintln(os.Stderr, "go-conformance-worker: --mode must be subscribe or receive")
		os.Exit(2)
	}

	ctx, stop := holdshelf.SignalContext(context.Background())
	defer stop()
	client, err := holdshelf.Dial(ctx, *address)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer client.Close()

	var active int32
	handler := func(ctx context.Context, d *holdshelf.Delivery) error {
		running := atomic.AddInt32(&active, 1)
		defer atomic.AddInt32(&active, -1)
		return handle(ctx, d, running)
	}
	consumer, err := holdshelf.NewConsumer(client, *queue, handler, holdshelf.ConsumerOptions{
		Concurrency:       *concurrency,
		VisibilityTimeout: leaseOption(*visibility),
		WaitTime:          holdshelf.Duration(seconds(*waitTime)),
		StopGrace:         holdshelf.Duration(seconds(*stopGrace)),
		Subscribe:         holdshelf.Bool(*mode == "subscribe"),
		OnError: func(err error, d *holdshelf.Delivery) {
			fmt.Fprintln(os.Stderr, "consumer:", err)
		},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	emit(map[string]any{"event": "started"})
	if err := consumer.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	emit(map[string]any{"event": "stopped"})
}

// handle runs one job as worker-protocol.md says.
func handle(ctx context.Context, d *holdshelf.Delivery, active int32) error {
	id := d.Message.ID
	var checkpoint any // null without one
	first := 0
	if last := d.Message.Checkpoint; last != nil {
		checkpoint = string(last)
		if step, err := strconv.Atoi(string(last)); err == nil {
			first = step + 1
		}
	}
	emit(map[string]any{
		"event": "received", "id": id, "receiveCount": d.Message.ReceiveCount,
		"receiptHandle": d.Message.ReceiptHandle, "checkpoint": checkpoint, "active": active,
	})
	var j job
	if err := json.Unmarshal(d.Message.Body, &j); err != nil {
		return fmt.Errorf("job %s: %w", id, err)
	}

	for step := first; step < j.Steps; step++ {
		select {
		case <-time.After(time.Duration(j.StepMs) * time.Millisecond):
		case <-ctx.Done():
			emit(map[string]any{"event": "cancelled", "id": id})
			return ctx.Err()
		}
		if j.Checkpoint == nil || *j.Checkpoint {
			if err := d.Checkpoint(ctx, []byte(strconv.Itoa(step))); err != nil {
				if ctx.Err() != nil {
					emit(map[string]any{"event": "cancelled", "id": id})
				}
				return err
			}
			emit(map[string]any{"event": "checkpoint", "id": id, "step": step})
		}
	}

	if d.Message.ReceiveCount <= j.FailTimes {
		if j.Failure == "retryLater" {
			emit(map[string]any{"event": "retrying", "id": id})
			return holdshelf.RetryLater(seconds(j.RetrySeconds))
		}
		emit(map[string]any{"event": "raised", "id": id})
		return errors.New("the job asked to fail")
	}
	emit(map[string]any{"event": "finished", "id": id})
	return nil
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// leaseOption is --visibility-timeout as ConsumerOptions takes it: 0, the
// flag's default, leaves the queue's.
func leaseOption(s float64) *time.Duration {
	if s == 0 {
		return nil
	}
	return holdshelf.Duration(seconds(s))
}

var stdout sync.Mutex // handlers print concurrently: keep lines whole

// emit prints one JSON line; os.Stdout is unbuffered, so it goes out at once.
func emit(event map[string]any) {
	stdout.Lock()
	defer stdout.Unlock()
	_ = json.NewEncoder(os.Stdout).Encode(event)
}
