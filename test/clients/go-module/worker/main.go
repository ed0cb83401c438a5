// Command worker is docs/clients/go.md's "A worker in 30 lines", written
// from that page alone, in a module of its own as a user writes it:
// test/clients/go-module.test.ts copies it into a new directory outside the
// repository, builds it in module mode and runs it against a broker. It
// differs from the page's only where the test needs it to: the address is a
// flag (the broker listens on a free port), the work is three short steps,
// and it prints one JSON line per message it processed.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"log"
	"os"
	"strconv"
	"sync"
	"time"

	holdshelf "github.com/holdshelf/holdshelf/clients/go"
)

func main() {
	address := flag.String("address", "127.0.0.1:50051", "broker address (host:port)")
	flag.Parse()
	ctx, stop := holdshelf.SignalContext(context.Background()) // SIGTERM or Ctrl-C: a graceful stop
	defer stop()
	client, err := holdshelf.Dial(ctx, *address)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	var printing sync.Mutex // handlers run at once
	out := json.NewEncoder(os.Stdout)
	handler := func(ctx context.Context, d *holdshelf.Delivery) error {
		start, _ := strconv.Atoi(string(d.LastCheckpoint())) // resume where a failed attempt stopped
		for step := start; step < 3; step++ {
			select {
			case <-time.After(10 * time.Millisecond): // the "work"
			case <-ctx.Done(): // the lease is lost: another worker has the message
				return ctx.Err()
			}
			if err := d.Checkpoint(ctx, []byte(strconv.Itoa(step+1))); err != nil {
				return err
			}
		}
		printing.Lock()
		defer printing.Unlock()
		return out.Encode(map[string]string{"processed": d.Message.ID, "body": string(d.Message.Body)})
	}
	consumer, err := holdshelf.NewConsumer(client, "jobs", handler, holdshelf.ConsumerOptions{Concurrency: 4})
	if err != nil {
		log.Fatal(err)
	}
	if err := consumer.Run(ctx); err != nil { // until SIGTERM, then stops gracefully
		log.Fatal(err)
	}
}
