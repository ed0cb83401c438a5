// Command producer creates the queue "jobs" and sends --count messages to
// it, "job-0" onwards, printing one JSON line per message sent: the
// producer beside docs/clients/go.md's worker, written from that page
// alone (Dial, CreateQueue, Send) in the same module of its own.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"time"

	holdshelf "github.com/holdshelf/holdshelf/clients/go"
)

func main() {
	address := flag.String("address", "127.0.0.1:50051", "broker address (host:port)")
	count := flag.Int("count", 10, "how many messages to send")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client, err := holdshelf.Dial(ctx, *address)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	if _, err := client.CreateQueue(ctx, "jobs", nil); err != nil {
		log.Fatal(err)
	}
	out := json.NewEncoder(os.Stdout)
	for i := 0; i < *count; i++ {
		id, err := client.Send(ctx, "jobs", []byte(fmt.Sprintf("job-%d", i)), nil)
		if err != nil {
			log.Fatal(err)
		}
		if err := out.Encode(map[string]string{"sent": id}); err != nil {
			log.Fatal(err)
		}
	}
}
