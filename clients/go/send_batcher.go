package holdshelf

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/status"

	"github.com/holdshelf/holdshelf/clients/go/holdshelfv1"
)

// sendBatcher gathers a Client's single sends into SendBatch calls, per
// queue (see SendBatching).
type sendBatcher struct {
	rpc      holdshelfv1.QueueServiceClient
	settings SendBatching // resolved

	mu      sync.Mutex
	queues  map[string]*queueBatch
	closed  bool           // sends go unary from now on
	pending sync.WaitGroup // sends taken and not yet answered
	added   int            // sends taken in all, for tests to follow
}

// queueBatch is one queue's sends waiting to go, and the batch in flight.
type queueBatch struct {
	name    string
	waiting []*batchedSend
	bytes   int
	timer   *time.Timer
	timerID int  // tells the live timer from a stopped one that fired anyway
	due     bool // the waiting sends go as soon as nothing is in flight
	sending bool
}

// batchedSend is one caller's send.
type batchedSend struct {
	request *holdshelfv1.SendRequest
	size    int
	ctx     context.Context
	outcome chan sendOutcome // room for one
}

type sendOutcome struct {
	result *SendResult
	err    error
}

func newSendBatcher(rpc holdshelfv1.QueueServiceClient, settings SendBatching) *sendBatcher {
	return &sendBatcher{rpc: rpc, settings: settings.resolved(), queues: make(map[string]*queueBatch)}
}

// send stores one message, in a batch unless batching is off or the client
// closed.
func (b *sendBatcher) send(ctx context.Context, request *holdshelfv1.SendRequest) (*SendResult, error) {
	s := &batchedSend{request: request, size: sendSize(request), ctx: ctx, outcome: make(chan sendOutcome, 1)}
	if *b.settings.Delay == 0 || !b.add(s) {
		return unarySend(ctx, b.rpc, request)
	}
	select {
	case out := <-s.outcome:
		return out.result, out.err
	case <-ctx.Done():
		// Taken back if it has not gone yet; otherwise the batch goes on
		// without this caller, and the message may be stored, as a cancelled
		// unary Send's may.
		b.withdraw(s)
		return nil, FromGRPC(status.FromContextError(ctx.Err()).Err())
	}
}

func (b *sendBatcher) add(s *batchedSend) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return false
	}
	q := b.queues[s.request.Queue]
	if q == nil {
		q = &queueBatch{name: s.request.Queue}
		b.queues[q.name] = q
	}
	b.pending.Add(1)
	b.added++
	q.waiting = append(q.waiting, s)
	q.bytes += s.size
	if len(q.waiting) >= b.settings.MaxMessages || q.bytes >= b.settings.MaxBytes {
		q.due = true
	} else if q.timer == nil && !q.due {
		q.timerID++
		id := q.timerID
		q.timer = time.AfterFunc(*b.settings.Delay, func() { b.expire(q, id) })
	}
	b.kick(q)
	return true
}

// withdraw takes back a send that has not gone yet.
func (b *sendBatcher) withdraw(s *batchedSend) {
	b.mu.Lock()
	defer b.mu.Unlock()
	q := b.queues[s.request.Queue]
	if q == nil {
		return
	}
	for i, waiting := range q.waiting {
		if waiting == s {
			q.waiting = append(q.waiting[:i:i], q.waiting[i+1:]...)
			q.bytes -= s.size
			b.pending.Done()
			b.kick(q)
			return
		}
	}
}

// expire sends a batch whose delay ran out.
func (b *sendBatcher) expire(q *queueBatch, id int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if q.timerID != id || q.timer == nil {
		return
	}
	q.timer = nil
	q.due = true
	b.kick(q)
}

// kick sends the next batch of q if it is due and nothing is in flight, and
// forgets an idle queue. Called with b.mu held.
func (b *sendBatcher) kick(q *queueBatch) {
	if q.sending {
		return
	}
	if len(q.waiting) == 0 {
		if q.timer != nil {
			q.timer.Stop()
			q.timer = nil
		}
		q.due = false
		if b.queues[q.name] == q {
			delete(b.queues, q.name)
		}
		return
	}
	if !q.due {
		return
	}
	if q.timer != nil {
		q.timer.Stop()
		q.timer = nil
	}
	batch := b.take(q)
	// What is left has waited for this batch already: it goes next.
	q.due = len(q.waiting) > 0
	q.sending = true
	go b.flush(q, batch)
}

// take takes the next batch off the front of q: as many sends as fit, or a
// send too large for a batch alone.
func (b *sendBatcher) take(q *queueBatch) []*batchedSend {
	n, bytes := 0, 0
	for n < len(q.waiting) && n < b.settings.MaxMessages {
		size := q.waiting[n].size
		if n > 0 && (bytes+size > b.settings.MaxBytes || size > b.settings.MaxBytes) {
			break
		}
		n++
		bytes += size
	}
	batch := q.waiting[:n:n]
	q.waiting = q.waiting[n:]
	q.bytes -= bytes
	return batch
}

// flush sends one batch and answers each of its sends; a send the broker
// refused fails alone, and the others go again, in order, in front of what
// waits.
func (b *sendBatcher) flush(q *queueBatch, batch []*batchedSend) {
	again := b.sendBatch(batch)
	b.mu.Lock()
	defer b.mu.Unlock()
	q.sending = false
	if len(again) > 0 {
		q.waiting = append(again, q.waiting...)
		for _, s := range again {
			q.bytes += s.size
		}
		q.due = true
	}
	b.kick(q)
}

// sendBatch sends batch and answers its sends, but for those to send again.
func (b *sendBatcher) sendBatch(batch []*batchedSend) (again []*batchedSend) {
	ctx, cancel := batchContext(batch)
	defer cancel()
	if len(batch) == 1 {
		result, err := unarySend(ctx, b.rpc, batch[0].request)
		b.answer(batch[0], result, err)
		return nil
	}
	entries := make([]*holdshelfv1.SendBatchEntry, len(batch))
	for i, s := range batch {
		r := s.request
		entries[i] = &holdshelfv1.SendBatchEntry{
			Body: r.Body, Attributes: r.Attributes, TypedAttributes: r.TypedAttributes, Delay: r.Delay,
			MessageGroupId: r.MessageGroupId, DeduplicationId: r.DeduplicationId, TraceHeader: r.TraceHeader,
		}
	}
	resp, err := b.rpc.SendBatch(ctx, &holdshelfv1.SendBatchRequest{Queue: batch[0].request.Queue, Entries: entries})
	if err == nil && len(resp.MessageIds) != len(batch) {
		err = fmt.Errorf("holdshelf: SendBatch answered %d ids for %d entries", len(resp.MessageIds), len(batch))
	}
	if err == nil {
		results := sendResults(resp.MessageIds, resp.SequenceNumbers)
		for i, s := range batch {
			result := results[i]
			b.answer(s, &result, nil)
		}
		return nil
	}
	err = FromGRPC(err)
	// The call is atomic: the entry it names failed it, and the others were
	// not stored.
	if i, entryErr := failedEntry(err); i >= 0 && i < len(batch) {
		b.answer(batch[i], nil, entryErr)
		return append(batch[:i:i], batch[i+1:]...)
	}
	for _, s := range batch {
		b.answer(s, nil, err)
	}
	return nil
}

func (b *sendBatcher) answer(s *batchedSend, result *SendResult, err error) {
	s.outcome <- sendOutcome{result: result, err: err}
	b.pending.Done()
}

// close sends what waits at once and returns when every send is answered;
// later sends go unary.
func (b *sendBatcher) close() {
	b.mu.Lock()
	b.closed = true
	for _, q := range b.queues {
		q.due = true
		b.kick(q)
	}
	b.mu.Unlock()
	b.pending.Wait()
}

// batchContext bounds a batch by its callers' deadlines: the latest, unless
// one of them has none.
func batchContext(batch []*batchedSend) (context.Context, context.CancelFunc) {
	var latest time.Time
	for _, s := range batch {
		deadline, ok := s.ctx.Deadline()
		if !ok {
			return context.WithCancel(context.Background())
		}
		if deadline.After(latest) {
			latest = deadline
		}
	}
	return context.WithDeadline(context.Background(), latest)
}

// entryField is a batch entry's field path: "entries[2].delay".
var entryField = regexp.MustCompile(`^entries\[(\d+)\]\.?`)

// failedEntry finds the entry a failed SendBatch names, and returns its
// index and the error a unary Send of it would have returned (its fields
// without the "entries[i]." prefix); -1 if none is named.
func failedEntry(err error) (int, error) {
	var e *Error
	if !errors.As(err, &e) {
		return -1, nil
	}
	for _, violation := range e.Violations {
		match := entryField.FindStringSubmatch(violation.Field)
		if match == nil {
			continue
		}
		index, _ := strconv.Atoi(match[1])
		prefix := match[0]
		entryErr := &Error{Code: e.Code, Reason: e.Reason, Message: e.Message}
		for _, v := range e.Violations {
			if strings.HasPrefix(v.Field, prefix) {
				entryErr.Violations = append(entryErr.Violations, FieldViolation{Field: strings.TrimPrefix(v.Field, prefix), Description: v.Description})
			}
		}
		return index, entryErr
	}
	return -1, nil
}

// sendSize is what a send adds to a batch, as the broker counts a batch's
// bytes, with its group and deduplication ids.
func sendSize(r *holdshelfv1.SendRequest) int {
	size := len(r.Body) + len(r.MessageGroupId) + len(r.DeduplicationId) + typedAttributesSize(r.TypedAttributes)
	for key, value := range r.Attributes {
		size += len(key) + len(value)
	}
	return size
}

// unarySend is one Send call.
func unarySend(ctx context.Context, rpc holdshelfv1.QueueServiceClient, request *holdshelfv1.SendRequest) (*SendResult, error) {
	resp, err := rpc.Send(ctx, request)
	if err != nil {
		return nil, FromGRPC(err)
	}
	return &SendResult{MessageID: resp.MessageId, SequenceNumber: resp.SequenceNumber}, nil
}
