// Command subscribe is a test fixture of the Go client (test/clients/go-client
// .test.ts): the Consumer on a real broker's Subscribe stream, counting the
// RPCs it makes. It prints one JSON line per check, then exits 0:
//   - consume: handlers that succeed, fail once, retry later once, and
//     outlast their lease, with what each delivery saw;
//   - fallback: the same Consumer on a broker that answers Subscribe
//     UNIMPLEMENTED (a gRPC server in front of the real one);
//   - reconnect: a handler holding a message while every connection to the
//     broker is cut, checkpointing after the reconnect and acked with its
//     first receipt handle.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"
	"sync"
	"time"

	"google.golang.org/grpc/codes"

	holdshelf "github.com/holdshelf/holdshelf/clients/go"
	"holdshelf/test/clients/go/callcount"
)

func main() {
	address := flag.String("address", "", "broker address")
	prefix := flag.String("queue-prefix", "go-subscribe", "prefix of the queues it makes")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	consume(ctx, *address, *prefix+"-consume")
	fallback(ctx, *address, *prefix+"-fallback")
	reconnect(ctx, *address, *prefix+"-reconnect")
}

// consume runs a Consumer of concurrency 4 with 2 s leases on jobs named by
// their bodies: "ok-N" succeed, "fail" fails its first delivery, "later"
// asks to come back 300 ms later, "slow" works 4.5 s.
func consume(ctx context.Context, address, queue string) {
	counted := callcount.New()
	client := dial(ctx, address, counted.Option())
	defer client.Close()
	_, err := client.CreateQueue(ctx, queue, &holdshelf.QueueConfig{VisibilityTimeout: holdshelf.Duration(2 * time.Second)})
	must(err)
	bodies := []string{"ok-0", "ok-1", "ok-2", "ok-3", "fail", "later", "slow"}
	for _, body := range bodies {
		_, err := client.Send(ctx, queue, []byte(body), nil)
		must(err)
	}

	var mu sync.Mutex
	deliveries := map[string][]int32{}
	var laterGap time.Duration
	var laterFirst time.Time
	slowCancelled := false
	reported := []string{}
	done := make(chan struct{})
	handler := func(ctx context.Context, d *holdshelf.Delivery) error {
		body := string(d.Message.Body)
		mu.Lock()
		deliveries[body] = append(deliveries[body], d.Message.ReceiveCount)
		finished := 0
		for _, counts := range deliveries {
			finished += len(counts)
		}
		mu.Unlock()
		defer func() {
			// Every job done once, and fail and later twice.
			if finished == len(bodies)+2 {
				close(done)
			}
		}()
		switch {
		case body == "fail" && d.Message.ReceiveCount == 1:
			return errors.New("fails once")
		case body == "later" && d.Message.ReceiveCount == 1:
			mu.Lock()
			laterFirst = time.Now()
			mu.Unlock()
			return holdshelf.RetryLater(300 * time.Millisecond)
		case body == "later":
			mu.Lock()
			laterGap = time.Since(laterFirst)
			mu.Unlock()
		case body == "slow":
			select {
			case <-time.After(4500 * time.Millisecond):
			case <-ctx.Done():
				mu.Lock()
				slowCancelled = true
				mu.Unlock()
				return ctx.Err()
			}
			must(d.Checkpoint(ctx, []byte("done")))
		}
		return nil
	}
	consumer, err := holdshelf.NewConsumer(client, queue, handler, holdshelf.ConsumerOptions{
		Concurrency: 4,
		OnError: func(err error, d *holdshelf.Delivery) {
			mu.Lock()
			defer mu.Unlock()
			if d != nil {
				reported = append(reported, fmt.Sprintf("%s: %v", d.Message.Body, err))
			} else {
				reported = append(reported, err.Error())
			}
		},
	})
	must(err)
	run(ctx, consumer, done)
	mu.Lock()
	defer mu.Unlock()
	sort.Strings(reported)
	emit(map[string]any{
		"check": "consume", "deliveries": deliveries, "laterGapMs": laterGap.Milliseconds(),
		"slowCancelled": slowCancelled, "reported": reported, "calls": counted.Snapshot(),
	})
}

// fallback consumes three messages through a broker without Subscribe.
func fallback(ctx context.Context, address, queue string) {
	real := dial(ctx, address)
	defer real.Close()
	_, err := real.CreateQueue(ctx, queue, nil)
	must(err)
	for i := 0; i < 3; i++ {
		_, err := real.Send(ctx, queue, []byte(fmt.Sprintf("old-%d", i)), nil)
		must(err)
	}
	old, stop, err := startOldBroker(real)
	must(err)
	defer stop()
	counted := callcount.New()
	client := dial(ctx, old, counted.Option())
	defer client.Close()

	var mu sync.Mutex
	var handled []string
	reported := []string{}
	done := make(chan struct{})
	consumer, err := holdshelf.NewConsumer(client, queue, func(ctx context.Context, d *holdshelf.Delivery) error {
		mu.Lock()
		defer mu.Unlock()
		handled = append(handled, string(d.Message.Body))
		if len(handled) == 3 {
			close(done)
		}
		return nil
	}, holdshelf.ConsumerOptions{Concurrency: 2, WaitTime: holdshelf.Duration(time.Second), OnError: func(err error, _ *holdshelf.Delivery) {
		mu.Lock()
		reported = append(reported, err.Error())
		mu.Unlock()
	}})
	must(err)
	run(ctx, consumer, done)
	mu.Lock()
	defer mu.Unlock()
	sort.Strings(handled)
	emit(map[string]any{"check": "fallback", "handled": handled, "reported": reported, "calls": counted.Snapshot()})
}

// reconnect cuts every connection while a handler holds its message.
func reconnect(ctx context.Context, address, queue string) {
	real := dial(ctx, address)
	defer real.Close()
	_, err := real.CreateQueue(ctx, queue, &holdshelf.QueueConfig{VisibilityTimeout: holdshelf.Duration(5 * time.Second)})
	must(err)
	_, err = real.Send(ctx, queue, []byte("held"), nil)
	must(err)
	link, err := startCutter(address)
	must(err)
	defer link.close()
	counted := callcount.New()
	client := dial(ctx, link.address(), counted.Option())
	defer client.Close()

	var mu sync.Mutex
	var receiveCounts []int32
	var handles []string
	var checkpoint error
	reported := []string{}
	holding := make(chan struct{})
	cut := make(chan struct{})
	done := make(chan struct{})
	consumer, err := holdshelf.NewConsumer(client, queue, func(ctx context.Context, d *holdshelf.Delivery) error {
		mu.Lock()
		receiveCounts = append(receiveCounts, d.Message.ReceiveCount)
		handles = append(handles, d.Message.ReceiptHandle)
		mu.Unlock()
		if d.Message.ReceiveCount == 1 {
			close(holding)
			<-cut
			// Goes on the new stream, once it renewed the lease.
			err := d.Checkpoint(ctx, []byte("after the cut"))
			mu.Lock()
			checkpoint = err
			mu.Unlock()
		}
		close(done)
		return nil
	}, holdshelf.ConsumerOptions{OnError: func(err error, _ *holdshelf.Delivery) {
		mu.Lock()
		reported = append(reported, holdshelf.CodeName(codeOf(err)))
		mu.Unlock()
	}})
	must(err)
	go func() {
		<-holding
		link.cut()
		close(cut)
	}()
	run(ctx, consumer, done)
	// A redelivery, had the lease been lost, would come within the lease.
	left, err := real.Receive(ctx, queue, &holdshelf.ReceiveOptions{WaitTime: holdshelf.Duration(0)})
	must(err)
	mu.Lock()
	defer mu.Unlock()
	checkpointErr := ""
	if checkpoint != nil {
		checkpointErr = checkpoint.Error()
	}
	emit(map[string]any{
		"check": "reconnect", "receiveCounts": receiveCounts, "checkpointError": checkpointErr,
		"left": len(left), "reported": reported, "calls": counted.Snapshot(),
	})
}

func codeOf(err error) codes.Code {
	var e *holdshelf.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return codes.Unknown
}

// run runs consumer until done, then stops it.
func run(ctx context.Context, consumer *holdshelf.Consumer, done <-chan struct{}) {
	go func() {
		select {
		case <-done:
		case <-ctx.Done():
		}
		consumer.Stop()
	}()
	must(consumer.Run(ctx))
	if ctx.Err() != nil {
		must(fmt.Errorf("timed out: %w", ctx.Err()))
	}
}

func dial(ctx context.Context, address string, options ...holdshelf.Option) *holdshelf.Client {
	client, err := holdshelf.Dial(ctx, address, options...)
	must(err)
	return client
}

func emit(event map[string]any) { _ = json.NewEncoder(os.Stdout).Encode(event) }

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
