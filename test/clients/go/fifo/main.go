// Command fifo is a test fixture of the Go client (test/clients/go-client
// .test.ts): FIFO queues through holdshelf.Client and holdshelf.Consumer
// against a broker. It prints one JSON line per check with what the library
// returned, for the test to compare with what the broker holds.
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	holdshelf "github.com/holdshelf/holdshelf/clients/go"
)

func main() {
	address := flag.String("address", "", "broker address")
	prefix := flag.String("queue-prefix", "go-fifo", "prefix of the queues this run makes")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client, err := holdshelf.Dial(ctx, *address)
	must(err)
	defer client.Close()
	orders, byBody, standard := *prefix+"-orders.fifo", *prefix+"-by-body.fifo", *prefix+"-standard"

	created, err := client.CreateQueue(ctx, orders, &holdshelf.QueueConfig{FIFO: true, VisibilityTimeout: holdshelf.Duration(30 * time.Second)})
	must(err)
	byBodyQueue, err := client.CreateQueue(ctx, byBody, &holdshelf.QueueConfig{
		FIFO: true, ContentBasedDeduplication: true, DeduplicationScope: holdshelf.DeduplicationScopeMessageGroup,
	})
	must(err)
	standardQueue, err := client.CreateQueue(ctx, standard, nil)
	must(err)
	emit("config", map[string]any{"orders": configJSON(created), "byBody": configJSON(byBodyQueue), "standard": configJSON(standardQueue)})

	// The three FIFO reasons, each naming its field.
	_, err = client.Send(ctx, orders, []byte("x"), &holdshelf.SendOptions{DeduplicationID: "d"})
	emitError("groupRequired", err, holdshelf.ReasonMessageGroupIDRequired)
	_, err = client.SendBatch(ctx, orders, []holdshelf.SendBatchEntry{{Body: []byte("x"), MessageGroupID: "g", DeduplicationID: "d"}, {Body: []byte("y"), MessageGroupID: "g"}})
	emitError("deduplicationRequired", err, holdshelf.ReasonDeduplicationIDRequired)
	_, err = client.Send(ctx, standard, []byte("x"), &holdshelf.SendOptions{MessageGroupID: "g"})
	emitError("notFifo", err, holdshelf.ReasonNotAFIFOQueue)

	// Orders of three customers, interleaved; each customer's are its group.
	customers := []string{"c1", "c2", "c3"}
	var sent []map[string]any
	for i := 1; i <= 4; i++ {
		for _, customer := range customers {
			order := fmt.Sprintf("%s-order-%d", customer, i)
			result, err := client.SendWithResult(ctx, orders, []byte(order), &holdshelf.SendOptions{MessageGroupID: customer, DeduplicationID: order})
			must(err)
			sent = append(sent, map[string]any{"body": order, "id": result.MessageID, "sequenceNumber": result.SequenceNumber})
		}
	}
	// A retried send stores nothing and returns the first send's id and number.
	retried, err := client.SendWithResult(ctx, orders, []byte("c2-order-1, sent again"), &holdshelf.SendOptions{MessageGroupID: "c2", DeduplicationID: "c2-order-1"})
	must(err)
	// In a batch: the repeated entry gets the first entry's id and number.
	batch, err := client.SendBatchWithResults(ctx, orders, []holdshelf.SendBatchEntry{
		{Body: []byte("c1-order-5"), MessageGroupID: "c1", DeduplicationID: "c1-order-5"},
		{Body: []byte("c1-order-5 again"), MessageGroupID: "c1", DeduplicationID: "c1-order-5"},
	})
	must(err)
	sent = append(sent, map[string]any{"body": "c1-order-5", "id": batch[0].MessageID, "sequenceNumber": batch[0].SequenceNumber})
	plain, err := client.SendWithResult(ctx, standard, []byte("plain"), nil)
	must(err)
	emit("send", map[string]any{
		"sent":    sent,
		"retried": map[string]any{"id": retried.MessageID, "sequenceNumber": retried.SequenceNumber},
		"batch":   []any{resultJSON(batch[0]), resultJSON(batch[1])},
		"plain":   resultJSON(*plain),
	})

	// Receives until the queue is empty, deleting each message, in the order
	// they came; a receive holds several of one group only in order.
	var received []map[string]any
	for len(received) < len(sent) {
		messages, err := client.Receive(ctx, orders, &holdshelf.ReceiveOptions{MaxMessages: 5, WaitTime: holdshelf.Duration(5 * time.Second)})
		must(err)
		if len(messages) == 0 {
			crash("received nothing with %d of %d messages left", len(sent)-len(received), len(sent))
		}
		for _, m := range messages {
			received = append(received, map[string]any{
				"body": string(m.Body), "id": m.ID, "group": m.MessageGroupID, "sequenceNumber": m.SequenceNumber, "deduplicationId": m.DeduplicationID,
			})
		}
		handles := make([]string, len(messages))
		for i, m := range messages {
			handles[i] = m.ReceiptHandle
		}
		_, err = client.DeleteBatch(ctx, orders, handles)
		must(err)
	}
	// Nothing more: the duplicates were never stored.
	left, err := client.GetQueue(ctx, orders)
	must(err)
	emit("receive", map[string]any{"received": received, "left": left.Stats.Visible + left.Stats.InFlight + left.Stats.Delayed})

	// Content-based deduplication, per group: the same body is a duplicate in
	// its own group only, and its deduplication id is the body's SHA-256.
	first, err := client.SendWithResult(ctx, byBody, []byte("same"), &holdshelf.SendOptions{MessageGroupID: "a"})
	must(err)
	again, err := client.SendWithResult(ctx, byBody, []byte("same"), &holdshelf.SendOptions{MessageGroupID: "a"})
	must(err)
	other, err := client.SendWithResult(ctx, byBody, []byte("same"), &holdshelf.SendOptions{MessageGroupID: "b"})
	must(err)
	byBodyMessages, err := client.Receive(ctx, byBody, &holdshelf.ReceiveOptions{MaxMessages: 10, WaitTime: holdshelf.Duration(5 * time.Second)})
	must(err)
	digest := sha256.Sum256([]byte("same"))
	deduplicationIDs := []string{}
	for _, m := range byBodyMessages {
		deduplicationIDs = append(deduplicationIDs, m.DeduplicationID)
	}
	emit("contentBased", map[string]any{
		"duplicate": again.MessageID == first.MessageID, "otherGroupStored": other.MessageID != first.MessageID,
		"deduplicationIds": deduplicationIDs, "sha256": hex.EncodeToString(digest[:]),
	})

	emit("consumer", consume(ctx, client, orders, customers))
	emit("consumerFailure", consumeWithFailure(ctx, client, *prefix+"-retry.fifo"))
}

// consumeWithFailure has a Consumer of concurrency 10 take a group's four
// messages in one receive, and fail the second once: the two behind it must
// not be handled before it, but given back and handled after its retry.
func consumeWithFailure(ctx context.Context, client *holdshelf.Client, queue string) map[string]any {
	_, err := client.CreateQueue(ctx, queue, &holdshelf.QueueConfig{FIFO: true, VisibilityTimeout: holdshelf.Duration(30 * time.Second)})
	must(err)
	var entries []holdshelf.SendBatchEntry
	for _, body := range []string{"a0", "a1", "a2", "a3", "b0"} {
		entries = append(entries, holdshelf.SendBatchEntry{Body: []byte(body), MessageGroupID: body[:1], DeduplicationID: body})
	}
	_, err = client.SendBatch(ctx, queue, entries)
	must(err)
	var mu sync.Mutex
	calls, reported := []string{}, []string{}
	succeeded := 0
	all := make(chan struct{})
	consumer, err := holdshelf.NewConsumer(client, queue, func(ctx context.Context, d *holdshelf.Delivery) error {
		body := string(d.Message.Body)
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, fmt.Sprintf("%s#%d", body, d.Message.ReceiveCount))
		if body == "a1" && d.Message.ReceiveCount == 1 {
			return errors.New("a1 fails once")
		}
		if succeeded++; succeeded == len(entries) {
			close(all)
		}
		return nil
	}, holdshelf.ConsumerOptions{Concurrency: 10, WaitTime: holdshelf.Duration(time.Second), OnError: func(err error, _ *holdshelf.Delivery) {
		mu.Lock()
		reported = append(reported, err.Error())
		mu.Unlock()
	}})
	must(err)
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- consumer.Run(runCtx) }()
	select {
	case <-all:
	case <-ctx.Done():
		crash("the Consumer of the failing group made the calls %v", calls)
	}
	stop()
	must(<-done)
	mu.Lock()
	defer mu.Unlock()
	return map[string]any{"calls": calls, "errors": reported}
}

// consume sends five more orders per customer, then handles them with a
// Consumer of concurrency 4 and reports each customer's handling order and
// whether two of one customer's orders were ever handled at once.
func consume(ctx context.Context, client *holdshelf.Client, queue string, customers []string) map[string]any {
	const perCustomer = 5
	var entries []holdshelf.SendBatchEntry
	for i := 1; i <= perCustomer; i++ {
		for _, customer := range customers {
			order := fmt.Sprintf("%s-later-%d", customer, i)
			entries = append(entries, holdshelf.SendBatchEntry{Body: []byte(order), MessageGroupID: customer, DeduplicationID: order})
		}
	}
	_, err := client.SendBatch(ctx, queue, entries)
	must(err)

	var mu sync.Mutex
	handled := map[string][]string{}
	running := map[string]int{}
	overlaps, total := 0, 0
	errs := []string{}
	all := make(chan struct{})
	consumer, err := holdshelf.NewConsumer(client, queue, func(ctx context.Context, d *holdshelf.Delivery) error {
		group := d.Message.MessageGroupID
		mu.Lock()
		running[group]++
		if running[group] > 1 {
			overlaps++
		}
		mu.Unlock()
		// A little work, for another handler of the group to show if one ran beside it.
		for i := 0; i < 100; i++ {
			runtime.Gosched()
		}
		mu.Lock()
		defer mu.Unlock()
		running[group]--
		handled[group] = append(handled[group], strings.TrimPrefix(string(d.Message.Body), group+"-"))
		if total++; total == perCustomer*len(customers) {
			close(all)
		}
		return nil
	}, holdshelf.ConsumerOptions{Concurrency: 4, WaitTime: holdshelf.Duration(time.Second), OnError: func(err error, _ *holdshelf.Delivery) {
		mu.Lock()
		errs = append(errs, err.Error())
		mu.Unlock()
	}})
	must(err)
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- consumer.Run(runCtx) }()
	select {
	case <-all:
	case <-ctx.Done():
		crash("the Consumer handled %d of %d orders", total, perCustomer*len(customers))
	}
	stop()
	must(<-done)
	mu.Lock()
	defer mu.Unlock()
	return map[string]any{"handled": handled, "overlaps": overlaps, "errors": errs}
}

func configJSON(q *holdshelf.Queue) map[string]any {
	return map[string]any{
		"fifo": q.Config.FIFO, "contentBasedDeduplication": q.Config.ContentBasedDeduplication,
		"deduplicationScope": q.Config.DeduplicationScope.String(),
	}
}

func resultJSON(r holdshelf.SendResult) map[string]any {
	return map[string]any{"id": r.MessageID, "sequenceNumber": r.SequenceNumber}
}

// emitError prints the error's code, reason and fields, and whether
// IsReason finds the reason constant the library names it by.
func emitError(check string, err error, reason string) {
	var e *holdshelf.Error
	if !errors.As(err, &e) {
		crash("%s: not a *holdshelf.Error: %v", check, err)
	}
	emit(check, map[string]any{"code": holdshelf.CodeName(e.Code), "reason": e.Reason, "fields": e.Fields(), "isReason": holdshelf.IsReason(err, reason)})
}

func emit(check string, fields map[string]any) {
	fields["check"] = check
	_ = json.NewEncoder(os.Stdout).Encode(fields)
}

func must(err error) {
	if err != nil {
		crash("%v", err)
	}
}

func crash(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "fifo: "+format+"\n", args...)
	os.Exit(1)
}
