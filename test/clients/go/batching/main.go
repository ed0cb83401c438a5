// Command batching is a test fixture of the Go client (test/clients/go-client
// .test.ts): single sends gathered into SendBatch calls on a real broker,
// counting the RPCs. It prints one JSON line per check, then exits 0:
//   - batched: 40 concurrent sends with the default settings;
//   - entryError: 5 concurrent sends to a FIFO queue in one batch, one
//     without its group;
//   - flush: 3 sends waiting for a 1 h delay, sent by Close;
//   - unbatched: 5 concurrent sends with a delay of 0.
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
	"holdshelf/test/clients/go/callcount"
)

func main() {
	address := flag.String("address", "", "broker address")
	prefix := flag.String("queue-prefix", "go-batching", "prefix of the queues it makes")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	admin, err := holdshelf.Dial(ctx, *address)
	must(err)
	defer admin.Close()
	for _, queue := range []string{"-batched", "-flush", "-unbatched"} {
		_, err := admin.CreateQueue(ctx, *prefix+queue, nil)
		must(err)
	}
	_, err = admin.CreateQueue(ctx, *prefix+"-groups.fifo", &holdshelf.QueueConfig{FIFO: true, ContentBasedDeduplication: true})
	must(err)

	batched(ctx, *address, *prefix+"-batched")
	entryError(ctx, *address, *prefix+"-groups.fifo")
	flush(ctx, *address, *prefix+"-flush")
	unbatched(ctx, *address, *prefix+"-unbatched")
}

// outcome is one send's result or error, as JSON.
type outcome struct {
	Body           string   `json:"body"`
	ID             string   `json:"id,omitempty"`
	SequenceNumber string   `json:"sequenceNumber,omitempty"`
	Reason         string   `json:"reason,omitempty"`
	Fields         []string `json:"fields,omitempty"`
}

// sendAll sends each body from a goroutine of its own, all at once.
func sendAll(ctx context.Context, client *holdshelf.Client, queue string, bodies []string, options func(body string) *holdshelf.SendOptions) []outcome {
	outcomes := make([]outcome, len(bodies))
	var wg sync.WaitGroup
	for i, body := range bodies {
		wg.Add(1)
		go func(i int, body string) {
			defer wg.Done()
			result, err := client.SendWithResult(ctx, queue, []byte(body), options(body))
			outcomes[i] = outcome{Body: body}
			var e *holdshelf.Error
			switch {
			case errors.As(err, &e):
				outcomes[i].Reason, outcomes[i].Fields = e.Reason, e.Fields()
			case err != nil:
				must(err)
			default:
				outcomes[i].ID, outcomes[i].SequenceNumber = result.MessageID, result.SequenceNumber
			}
		}(i, body)
	}
	wg.Wait()
	return outcomes
}

func bodies(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%d", prefix, i)
	}
	return out
}

func none(string) *holdshelf.SendOptions { return nil }

func batched(ctx context.Context, address, queue string) {
	counted := callcount.New()
	client := dial(ctx, address, counted.Option())
	outcomes := sendAll(ctx, client, queue, bodies("b", 40), none)
	must(client.Close())
	emit(map[string]any{"check": "batched", "outcomes": outcomes, "calls": counted.Snapshot()})
}

func entryError(ctx context.Context, address, queue string) {
	counted := callcount.New()
	// A delay long enough for the five to meet in one batch.
	client := dial(ctx, address, counted.Option(), holdshelf.WithSendBatching(holdshelf.SendBatching{Delay: holdshelf.Duration(300 * time.Millisecond)}))
	outcomes := sendAll(ctx, client, queue, bodies("g", 5), func(body string) *holdshelf.SendOptions {
		if body == "g-2" {
			return nil // no group: refused
		}
		return &holdshelf.SendOptions{MessageGroupID: "group"}
	})
	must(client.Close())
	emit(map[string]any{"check": "entryError", "outcomes": outcomes, "calls": counted.Snapshot()})
}

func flush(ctx context.Context, address, queue string) {
	counted := callcount.New()
	client := dial(ctx, address, counted.Option(), holdshelf.WithSendBatching(holdshelf.SendBatching{Delay: holdshelf.Duration(time.Hour)}))
	sent := make(chan []outcome, 1)
	go func() { sent <- sendAll(ctx, client, queue, bodies("f", 3), none) }()
	// Real time: the sends must be waiting in the batch (nothing can send
	// them but Close) before Close begins.
	time.Sleep(300 * time.Millisecond)
	before := counted.Snapshot()
	must(client.Close())
	emit(map[string]any{"check": "flush", "outcomes": <-sent, "callsBeforeClose": before, "calls": counted.Snapshot()})
}

func unbatched(ctx context.Context, address, queue string) {
	counted := callcount.New()
	client := dial(ctx, address, counted.Option(), holdshelf.WithSendBatching(holdshelf.SendBatching{Delay: holdshelf.Duration(0)}))
	outcomes := sendAll(ctx, client, queue, bodies("u", 5), none)
	must(client.Close())
	emit(map[string]any{"check": "unbatched", "outcomes": outcomes, "calls": counted.Snapshot()})
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
