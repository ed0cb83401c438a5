// Command calls is a test fixture of the Go client (test/clients/go-client
// .test.ts): it makes every RPC through holdshelf.Client against a broker and
// prints one JSON line per check, with what the library returned converted
// to plain values (durations in milliseconds), so that the test can compare
// them with what the broker holds.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"google.golang.org/grpc/status"

	holdshelf "github.com/holdshelf/holdshelf/clients/go"
	"github.com/holdshelf/holdshelf/clients/go/holdshelfv1"
)

func main() {
	address := flag.String("address", "", "broker address")
	prefix := flag.String("queue-prefix", "calls", "prefix of the queues this run makes")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client, err := holdshelf.Dial(ctx, *address)
	must(err)
	defer client.Close()
	q, dlq := *prefix+"-q", *prefix+"-dlq"

	_, err = client.CreateQueue(ctx, dlq, nil)
	must(err)
	created, err := client.CreateQueue(ctx, q, &holdshelf.QueueConfig{
		VisibilityTimeout: holdshelf.Duration(5 * time.Second),
		Delay:             holdshelf.Duration(0),
		Retention:         holdshelf.Duration(time.Hour),
		MaxMessageBytes:   2048,
		MaxInFlight:       10,
		MaxLeaseDuration:  holdshelf.Duration(2 * time.Hour),
		RedrivePolicy:     &holdshelf.RedrivePolicy{DeadLetterQueue: dlq, MaxReceiveCount: 3},
		RetryPolicy:       &holdshelf.RetryPolicy{MinBackoff: 100 * time.Millisecond, MaxBackoff: time.Second},
	})
	must(err)
	emit("createQueue", queueJSON(created))
	got, err := client.GetQueue(ctx, dlq)
	must(err)
	emit("getQueue", queueJSON(got))
	page, err := client.ListQueues(ctx, holdshelf.ListQueuesOptions{Prefix: *prefix, PageSize: 1})
	must(err)
	emit("listQueues", map[string]any{"names": names(page.Queues), "hasNext": page.NextPageToken != ""})
	updated, err := client.UpdateQueue(ctx, q, &holdshelf.QueueConfig{
		VisibilityTimeout: holdshelf.Duration(7 * time.Second),
		RetryPolicy:       &holdshelf.RetryPolicy{MinBackoff: 100 * time.Millisecond, MaxBackoff: time.Second},
	})
	must(err)
	emit("updateQueue", queueJSON(updated))
	partial, err := client.UpdateQueue(ctx, q, &holdshelf.QueueConfig{
		VisibilityTimeout: holdshelf.Duration(time.Minute),
		MaxInFlight:       42,
	}, holdshelf.Fields(holdshelf.FieldMaxInFlight))
	must(err)
	emit("updateQueueFields", queueJSON(partial))

	id, err := client.Send(ctx, q, []byte("one"), &holdshelf.SendOptions{Attributes: map[string]string{"kind": "single"}, Delay: holdshelf.Duration(0)})
	must(err)
	ids, err := client.SendBatch(ctx, q, []holdshelf.SendBatchEntry{{Body: []byte("two")}, {Body: []byte("three"), Attributes: map[string]string{"n": "3"}}})
	must(err)
	emit("send", map[string]any{"id": id, "batchIds": ids})
	messages, err := client.Receive(ctx, q, &holdshelf.ReceiveOptions{MaxMessages: 3, VisibilityTimeout: holdshelf.Duration(30 * time.Second), WaitTime: holdshelf.Duration(5 * time.Second)})
	must(err)
	received := []any{}
	for _, m := range messages {
		received = append(received, map[string]any{
			"id": m.ID, "body": string(m.Body), "attributes": m.Attributes, "receiveCount": m.ReceiveCount,
			"checkpoint": m.Checkpoint, "sendTime": m.SendTime.UnixMilli(), "firstReceiveTime": m.FirstReceiveTime.UnixMilli(),
			"leaseDeadline": m.LeaseDeadline.UnixMilli(),
		})
	}
	emit("receive", map[string]any{"messages": received, "now": time.Now().UnixMilli()})
	if len(messages) != 3 {
		crash("received %d messages, want 3", len(messages))
	}
	h := []string{messages[0].ReceiptHandle, messages[1].ReceiptHandle, messages[2].ReceiptHandle}

	deadline, err := client.ChangeVisibility(ctx, q, h[0], 10*time.Second)
	must(err)
	emit("changeVisibility", map[string]any{"leaseDeadline": deadline.UnixMilli(), "now": time.Now().UnixMilli()})
	results, err := client.ChangeVisibilityBatch(ctx, q, []string{h[1], "not-a-handle"}, 20*time.Second)
	must(err)
	emit("changeVisibilityBatch", map[string]any{"results": entries(results)})

	// A raw Heartbeat renewal with a checkpoint, then a release on the same stream.
	stream, err := client.Heartbeat(ctx)
	must(err)
	checkpoint := []byte("cp-1")
	must(stream.Send(&holdshelfv1.HeartbeatRequest{Queue: q, Leases: []*holdshelfv1.LeaseRenewal{{ReceiptHandle: h[2], Checkpoint: checkpoint}}}))
	answer, err := stream.Recv()
	must(err)
	must(stream.CloseSend())
	emit("heartbeat", map[string]any{"held": answer.Leases[0].Held, "handle": answer.Leases[0].ReceiptHandle == h[2]})

	deleted, err := client.DeleteWithOutcome(ctx, q, h[0])
	must(err)
	again, err := client.DeleteWithOutcome(ctx, q, h[0])
	must(err)
	emit("deleteOutcome", map[string]any{"first": deleted.String(), "again": again.String(), "lost": again.LeaseLost()})
	results, err = client.DeleteBatch(ctx, q, []string{h[1], "forged"})
	must(err)
	emit("deleteBatch", map[string]any{"results": entries(results)})

	moved, err := client.RedriveMessages(ctx, holdshelf.RedriveOptions{DeadLetterQueue: dlq, DestinationQueue: q})
	must(err)
	purged, err := client.PurgeQueue(ctx, q)
	must(err)
	emit("counts", map[string]any{"moved": moved, "purged": purged})

	// Errors: an unknown queue, a bad argument naming its field, a stale handle.
	_, err = client.GetQueue(ctx, *prefix+"-missing")
	emitError("queueNotFound", err)
	_, err = client.CreateQueue(ctx, *prefix+"-bad", &holdshelf.QueueConfig{Retention: holdshelf.Duration(time.Second)})
	emitError("invalidArgument", err)
	_, err = client.Send(ctx, q, []byte("stale"), nil)
	must(err)
	first, err := client.Receive(ctx, q, &holdshelf.ReceiveOptions{VisibilityTimeout: holdshelf.Duration(0), WaitTime: holdshelf.Duration(5 * time.Second)})
	must(err)
	second, err := client.Receive(ctx, q, &holdshelf.ReceiveOptions{WaitTime: holdshelf.Duration(5 * time.Second)})
	must(err)
	if len(first) != 1 || len(second) != 1 {
		crash("stale-handle setup received %d and %d messages", len(first), len(second))
	}
	emitError("leaseSuperseded", client.Delete(ctx, q, first[0].ReceiptHandle))
	// Once the later lease deleted it, the old handle's Delete succeeds, saying it came too late.
	must(client.Delete(ctx, q, second[0].ReceiptHandle))
	late, err := client.DeleteWithOutcome(ctx, q, first[0].ReceiptHandle)
	must(err)
	emit("receivedAgain", map[string]any{"outcome": late.String(), "lost": late.LeaseLost()})

	must(client.DeleteQueue(ctx, q))
	_, err = client.GetQueue(ctx, q)
	emitError("deletedQueue", err)
}

// emitError prints what the library's error type says of err.
func emitError(check string, err error) {
	var e *holdshelf.Error
	if !errors.As(err, &e) {
		crash("%s: not a *holdshelf.Error: %v", check, err)
	}
	emit(check, map[string]any{
		"code": holdshelf.CodeName(e.Code), "reason": e.Reason, "fields": e.Fields(), "message": e.Message,
		"isReason":   holdshelf.IsReason(fmt.Errorf("wrapped: %w", err), e.Reason),
		"statusCode": holdshelf.CodeName(status.Code(err)), "text": err.Error(),
	})
}

func queueJSON(q *holdshelf.Queue) map[string]any {
	c := q.Config
	out := map[string]any{
		"name": q.Name, "visibilityTimeoutMs": ms(c.VisibilityTimeout), "delayMs": ms(c.Delay), "retentionMs": ms(c.Retention),
		"maxMessageBytes": c.MaxMessageBytes, "receiveWaitTimeMs": ms(c.ReceiveWaitTime), "maxInFlight": c.MaxInFlight,
		"maxLeaseDurationMs": ms(c.MaxLeaseDuration), "createTime": q.CreateTime.UnixMilli(),
		"deadLetterSourceQueues": q.DeadLetterSourceQueues,
		"stats":                  map[string]any{"visible": q.Stats.Visible, "inFlight": q.Stats.InFlight, "delayed": q.Stats.Delayed},
		"redrivePolicy":          nil, "retryPolicy": nil,
	}
	if r := c.RedrivePolicy; r != nil {
		out["redrivePolicy"] = map[string]any{"deadLetterQueue": r.DeadLetterQueue, "maxReceiveCount": r.MaxReceiveCount}
	}
	if r := c.RetryPolicy; r != nil {
		out["retryPolicy"] = map[string]any{"minBackoffMs": r.MinBackoff.Milliseconds(), "maxBackoffMs": r.MaxBackoff.Milliseconds()}
	}
	return out
}

func entries(results []holdshelf.EntryResult) []any {
	out := []any{}
	for _, r := range results {
		entry := map[string]any{"ok": r.Err == nil, "leaseDeadline": r.LeaseDeadline.UnixMilli(), "deleteOutcome": r.DeleteOutcome.String()}
		var e *holdshelf.Error
		if errors.As(r.Err, &e) {
			entry["code"], entry["reason"] = holdshelf.CodeName(e.Code), e.Reason
		}
		out = append(out, entry)
	}
	return out
}

func names(queues []*holdshelf.Queue) []string {
	out := []string{}
	for _, q := range queues {
		out = append(out, q.Name)
	}
	return out
}

func ms(d *time.Duration) any {
	if d == nil {
		return nil
	}
	return d.Milliseconds()
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
	fmt.Fprintf(os.Stderr, "calls: "+format+"\n", args...)
	os.Exit(1)
}
