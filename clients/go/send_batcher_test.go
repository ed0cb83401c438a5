package holdshelf

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/holdshelf/holdshelf/clients/go/holdshelfv1"
)

// fakeSender plays the broker's Send and SendBatch: it records each call
// ("send q body" or "batch q body,body"), answers ids "id-<body>", and fails
// as fail says.
type fakeSender struct {
	holdshelfv1.QueueServiceClient // unused methods
	mu                             sync.Mutex
	calls                          []string
	// fail, if set, fails a SendBatch (or Send) of these bodies.
	fail func(bodies []string) error
	// gate, if set, holds each call until it is closed.
	gate    chan struct{}
	entered int // calls begun, held or not
	// traceHeaders are the trace headers of every message sent, in order.
	traceHeaders []string
}

func (f *fakeSender) record(kind, queue string, bodies []string) error {
	f.mu.Lock()
	f.entered++
	f.mu.Unlock()
	if f.gate != nil {
		<-f.gate
	}
	f.mu.Lock()
	f.calls = append(f.calls, fmt.Sprintf("%s %s %s", kind, queue, strings.Join(bodies, ",")))
	fail := f.fail
	f.mu.Unlock()
	if fail != nil {
		return fail(bodies)
	}
	return nil
}

func (f *fakeSender) Send(_ context.Context, r *holdshelfv1.SendRequest, _ ...grpc.CallOption) (*holdshelfv1.SendResponse, error) {
	f.mu.Lock()
	f.traceHeaders = append(f.traceHeaders, r.TraceHeader)
	f.mu.Unlock()
	if err := f.record("send", r.Queue, []string{string(r.Body)}); err != nil {
		return nil, err
	}
	return &holdshelfv1.SendResponse{MessageId: "id-" + string(r.Body), SequenceNumber: "seq-" + string(r.Body)}, nil
}

func (f *fakeSender) SendBatch(_ context.Context, r *holdshelfv1.SendBatchRequest, _ ...grpc.CallOption) (*holdshelfv1.SendBatchResponse, error) {
	var bodies []string
	f.mu.Lock()
	for _, e := range r.Entries {
		bodies = append(bodies, string(e.Body))
		f.traceHeaders = append(f.traceHeaders, e.TraceHeader)
	}
	f.mu.Unlock()
	if err := f.record("batch", r.Queue, bodies); err != nil {
		return nil, err
	}
	resp := &holdshelfv1.SendBatchResponse{}
	for _, b := range bodies {
		resp.MessageIds = append(resp.MessageIds, "id-"+b)
		resp.SequenceNumbers = append(resp.SequenceNumbers, "seq-"+b)
	}
	return resp, nil
}

func (f *fakeSender) recorded() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string{}, f.calls...)
}

// batchedClient is a Client on a fakeSender.
func batchedClient(t *testing.T, f *fakeSender, batching SendBatching) *Client {
	t.Helper()
	var settings dialSettings
	if err := WithSendBatching(batching)(&settings); err != nil {
		t.Fatal(err)
	}
	return &Client{rpc: f, batcher: newSendBatcher(f, settings.batching)}
}

type sent struct {
	result *SendResult
	err    error
}

// sendInTurn starts a send of each body, in order: each is waiting in the
// batcher (or gone) before the next starts.
func sendInTurn(t *testing.T, c *Client, queue string, options *SendOptions, bodies ...string) []chan sent {
	t.Helper()
	outcomes := make([]chan sent, len(bodies))
	for i, body := range bodies {
		outcomes[i] = make(chan sent, 1)
		before := c.batcher.taken()
		go func(body string, out chan sent) {
			result, err := c.SendWithResult(context.Background(), queue, []byte(body), options)
			out <- sent{result, err}
		}(body, outcomes[i])
		waitFor(t, func() bool { return c.batcher.taken() > before })
	}
	return outcomes
}

// taken counts the sends the batcher has taken since it started.
func (b *sendBatcher) taken() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.added
}

func waitFor(t *testing.T, condition func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !condition() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(time.Millisecond)
	}
}

func outcome(t *testing.T, out chan sent) sent {
	t.Helper()
	select {
	case s := <-out:
		return s
	case <-time.After(5 * time.Second):
		t.Fatal("the send was not answered")
		return sent{}
	}
}

func expectCalls(t *testing.T, f *fakeSender, want ...string) {
	t.Helper()
	waitFor(t, func() bool { return len(f.recorded()) >= len(want) })
	if got := f.recorded(); !reflect.DeepEqual(got, want) {
		t.Fatalf("calls = %q, want %q", got, want)
	}
}

func TestSendsGoInOneBatchOnceItIsFullEachWithItsOwnResult(t *testing.T) {
	f := &fakeSender{}
	c := batchedClient(t, f, SendBatching{MaxMessages: 3, Delay: Duration(time.Hour)})
	outs := sendInTurn(t, c, "q", nil, "a", "b", "c")
	for i, body := range []string{"a", "b", "c"} {
		got := outcome(t, outs[i])
		if got.err != nil || got.result.MessageID != "id-"+body || got.result.SequenceNumber != "seq-"+body {
			t.Errorf("%s: %+v %v", body, got.result, got.err)
		}
	}
	expectCalls(t, f, "batch q a,b,c")
}

func TestASendsTraceHeaderGoesWithItBatchedOrAlone(t *testing.T) {
	f := &fakeSender{}
	c := batchedClient(t, f, SendBatching{MaxMessages: 2, Delay: Duration(time.Hour)})
	outs := sendInTurn(t, c, "q", &SendOptions{TraceHeader: "Root=1-a"}, "a", "b")
	outcome(t, outs[0])
	outcome(t, outs[1])
	if _, err := c.SendBatch(context.Background(), "q", []SendBatchEntry{{Body: []byte("c"), TraceHeader: "Root=1-c"}}); err != nil {
		t.Fatal(err)
	}
	expectCalls(t, f, "batch q a,b", "batch q c")
	if want := []string{"Root=1-a", "Root=1-a", "Root=1-c"}; !reflect.DeepEqual(f.traceHeaders, want) {
		t.Fatalf("trace headers sent: %v, want %v", f.traceHeaders, want)
	}
}

func TestABatchGoesAfterItsDelayAndALoneSendAsUnary(t *testing.T) {
	f := &fakeSender{}
	c := batchedClient(t, f, SendBatching{Delay: Duration(20 * time.Millisecond)})
	outs := sendInTurn(t, c, "q", nil, "a", "b")
	outcome(t, outs[0])
	outcome(t, outs[1])
	if _, err := c.Send(context.Background(), "q", []byte("c"), nil); err != nil {
		t.Fatal(err)
	}
	expectCalls(t, f, "batch q a,b", "send q c")
}

func TestADelayOfZeroSendsEachAsUnary(t *testing.T) {
	f := &fakeSender{}
	c := batchedClient(t, f, SendBatching{Delay: Duration(0)})
	for _, body := range []string{"a", "b"} {
		if id, err := c.Send(context.Background(), "q", []byte(body), nil); err != nil || id != "id-"+body {
			t.Fatalf("%s: %s %v", body, id, err)
		}
	}
	if c.batcher.taken() != 0 {
		t.Error("the batcher took sends")
	}
	expectCalls(t, f, "send q a", "send q b")
}

func TestBatchesStayUnderMaxBytesAndALargerSendGoesAloneInItsTurn(t *testing.T) {
	f := &fakeSender{}
	c := batchedClient(t, f, SendBatching{MaxBytes: 10, Delay: Duration(time.Hour)})
	// "aaaa" and "bbbb" fit; "cccc" would pass 10 bytes; the 12-byte send
	// goes alone, after what came before it and before what came after.
	outs := sendInTurn(t, c, "q", nil, "aaaa", "bbbb", "cccc", "large-123456", "dd")
	for _, out := range outs[:4] {
		if got := outcome(t, out); got.err != nil {
			t.Fatal(got.err)
		}
	}
	expectCalls(t, f, "batch q aaaa,bbbb", "send q cccc", "send q large-123456")
	// "dd" waits for its delay: Close sends it.
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if got := outcome(t, outs[4]); got.err != nil || got.result.MessageID != "id-dd" {
		t.Fatalf("dd: %+v", got)
	}
	expectCalls(t, f, "batch q aaaa,bbbb", "send q cccc", "send q large-123456", "send q dd")
}

func TestCloseFlushesEveryQueueAndLaterSendsGoUnary(t *testing.T) {
	f := &fakeSender{}
	c := batchedClient(t, f, SendBatching{Delay: Duration(time.Hour)})
	one := sendInTurn(t, c, "q1", nil, "a", "b")
	two := sendInTurn(t, c, "q2", nil, "c")
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	for _, out := range append(one, two...) {
		if got := outcome(t, out); got.err != nil {
			t.Fatal(got.err)
		}
	}
	if _, err := c.Send(context.Background(), "q1", []byte("d"), nil); err != nil {
		t.Fatal(err)
	}
	calls := f.recorded()
	want := map[string]bool{"batch q1 a,b": true, "send q2 c": true, "send q1 d": true}
	if len(calls) != 3 || !want[calls[0]] || !want[calls[1]] || calls[2] != "send q1 d" {
		t.Fatalf("calls = %q", calls)
	}
}

// refusal is a status as the broker fails a call, with its reason and the
// fields at fault.
func refusal(code codes.Code, reason string, fields ...string) error {
	bad := &errdetails.BadRequest{}
	for _, field := range fields {
		bad.FieldViolations = append(bad.FieldViolations, &errdetails.BadRequest_FieldViolation{Field: field, Description: "bad"})
	}
	st, err := status.New(code, "refused").WithDetails(&errdetails.ErrorInfo{Reason: reason}, bad)
	if err != nil {
		panic(err)
	}
	return st.Err()
}

func TestAnEntryTheBrokerRefusesFailsItsOwnSendAndTheOthersGoAgainInOrder(t *testing.T) {
	f := &fakeSender{fail: func(bodies []string) error {
		for i, body := range bodies {
			if body == "bad" {
				return refusal(codes.InvalidArgument, ReasonMessageGroupIDRequired, fmt.Sprintf("entries[%d].message_group_id", i))
			}
		}
		return nil
	}}
	c := batchedClient(t, f, SendBatching{MaxMessages: 3, Delay: Duration(time.Hour)})
	outs := sendInTurn(t, c, "q", nil, "a", "bad", "c")
	bad := outcome(t, outs[1])
	var e *Error
	if !errors.As(bad.err, &e) || e.Code != codes.InvalidArgument || e.Reason != ReasonMessageGroupIDRequired || !reflect.DeepEqual(e.Fields(), []string{"message_group_id"}) {
		t.Fatalf("the refused send got %v", bad.err)
	}
	for i, body := range []string{"a", "c"} {
		if got := outcome(t, outs[i*2]); got.err != nil || got.result.MessageID != "id-"+body {
			t.Fatalf("%s: %+v", body, got)
		}
	}
	expectCalls(t, f, "batch q a,bad,c", "batch q a,c")
}

func TestAFailedBatchFailsEachOfItsSends(t *testing.T) {
	f := &fakeSender{fail: func([]string) error { return refusal(codes.NotFound, ReasonQueueNotFound) }}
	c := batchedClient(t, f, SendBatching{MaxMessages: 2, Delay: Duration(time.Hour)})
	for _, out := range sendInTurn(t, c, "q", nil, "a", "b") {
		if got := outcome(t, out); !IsReason(got.err, ReasonQueueNotFound) {
			t.Fatalf("got %v", got.err)
		}
	}
	expectCalls(t, f, "batch q a,b")
}

func TestOneBatchIsInFlightPerQueueAndWhatWaitsGoesNextInOrder(t *testing.T) {
	f := &fakeSender{gate: make(chan struct{})}
	c := batchedClient(t, f, SendBatching{MaxMessages: 2, Delay: Duration(time.Hour)})
	first := sendInTurn(t, c, "q", &SendOptions{MessageGroupID: "g"}, "a", "b")
	// The first batch is held by the broker: these wait behind it, the full
	// batch goes once it is answered, and what is left (having waited too)
	// right after.
	second := sendInTurn(t, c, "q", &SendOptions{MessageGroupID: "g"}, "c", "d", "e")
	time.Sleep(20 * time.Millisecond) // a second batch, if any, would have begun
	f.mu.Lock()
	entered := f.entered
	f.mu.Unlock()
	if entered != 1 {
		t.Fatalf("%d calls began while the first batch was held", entered)
	}
	close(f.gate)
	for _, out := range append(first, second...) {
		if got := outcome(t, out); got.err != nil {
			t.Fatal(got.err)
		}
	}
	expectCalls(t, f, "batch q a,b", "batch q c,d", "send q e")
}

func TestASendWhoseContextEndsWhileWaitingIsTakenBack(t *testing.T) {
	f := &fakeSender{}
	c := batchedClient(t, f, SendBatching{Delay: Duration(time.Hour)})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := c.Send(ctx, "q", []byte("gone"), nil)
		done <- err
	}()
	waitFor(t, func() bool { return c.batcher.taken() == 1 })
	cancel()
	var e *Error
	if err := <-done; !errors.As(err, &e) || e.Code != codes.Canceled {
		t.Fatalf("got %v, want CANCELLED", err)
	}
	outs := sendInTurn(t, c, "q", nil, "kept")
	c.Close()
	outcome(t, outs[0])
	expectCalls(t, f, "send q kept")
}

func TestWithSendBatchingRefusesSettingsOutOfRange(t *testing.T) {
	for field, batching := range map[string]SendBatching{
		"MaxMessages": {MaxMessages: 101},
		"MaxBytes":    {MaxBytes: 4<<20 + 1},
		"Delay":       {Delay: Duration(-time.Millisecond)},
	} {
		var settings dialSettings
		if err := WithSendBatching(batching)(&settings); err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: err = %v", field, err)
		}
	}
}
