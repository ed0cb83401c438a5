package holdshelf

// The Consumer against a fake broker served over real gRPC in the test: on
// Subscribe, on its fallback to Receive, and with Subscribe turned off.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/holdshelf/holdshelf/clients/go/holdshelfv1"
)

// fakeBroker serves one queue "q" holding two messages of FIFO group "g",
// m1 then m2: by Subscribe (unless noSubscribe), each in a response of its
// own, or by Receive, both at once. It records what the consumer sent.
type fakeBroker struct {
	holdshelfv1.UnimplementedQueueServiceServer
	noSubscribe bool
	// noGroup sends the messages without a group; ackGate, if set, holds
	// the answer to each ack until it is closed.
	noGroup bool
	ackGate chan struct{}
	// pushAtHalfClose pushes m9 as the consumer half-closes.
	pushAtHalfClose bool

	subscribes int32
	mu         sync.Mutex
	received   bool
	requests   []*holdshelfv1.SubscribeRequest
	acks       []string
	deletes    []string
	changed    []string // handles ChangeVisibilityBatch released
	halfClosed bool
}

func (b *fakeBroker) ChangeVisibilityBatch(_ context.Context, r *holdshelfv1.ChangeVisibilityBatchRequest) (*holdshelfv1.ChangeVisibilityBatchResponse, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	resp := &holdshelfv1.ChangeVisibilityBatchResponse{}
	for _, handle := range r.ReceiptHandles {
		b.changed = append(b.changed, handle)
		resp.Results = append(resp.Results, &holdshelfv1.EntryResult{ReceiptHandle: handle})
	}
	return resp, nil
}

func (b *fakeBroker) message(handle string) *holdshelfv1.ReceivedMessage {
	m := &holdshelfv1.ReceivedMessage{
		MessageId: handle, ReceiptHandle: handle, Body: []byte(handle), ReceiveCount: 1,
		MessageGroupId: "g", SequenceNumber: "0000000000000000000" + handle[1:],
	}
	if b.noGroup {
		m.MessageGroupId, m.SequenceNumber = "", ""
	}
	return m
}

func (b *fakeBroker) GetQueue(context.Context, *holdshelfv1.GetQueueRequest) (*holdshelfv1.GetQueueResponse, error) {
	return &holdshelfv1.GetQueueResponse{Queue: &holdshelfv1.Queue{Name: "q", Config: &holdshelfv1.QueueConfig{VisibilityTimeout: durationpb.New(30 * time.Second)}}}, nil
}

func (b *fakeBroker) Receive(ctx context.Context, _ *holdshelfv1.ReceiveRequest) (*holdshelfv1.ReceiveResponse, error) {
	b.mu.Lock()
	first := !b.received
	b.received = true
	b.mu.Unlock()
	if first {
		return &holdshelfv1.ReceiveResponse{Messages: []*holdshelfv1.ReceivedMessage{b.message("m1"), b.message("m2")}}, nil
	}
	select {
	case <-ctx.Done():
	case <-time.After(50 * time.Millisecond):
	}
	return &holdshelfv1.ReceiveResponse{}, nil
}

func (b *fakeBroker) Delete(_ context.Context, r *holdshelfv1.DeleteRequest) (*holdshelfv1.DeleteResponse, error) {
	b.mu.Lock()
	b.deletes = append(b.deletes, r.ReceiptHandle)
	b.mu.Unlock()
	return &holdshelfv1.DeleteResponse{}, nil
}

func (b *fakeBroker) Heartbeat(stream holdshelfv1.QueueService_HeartbeatServer) error {
	for {
		request, err := stream.Recv()
		if err != nil {
			return nil
		}
		resp := &holdshelfv1.HeartbeatResponse{}
		for _, renewal := range request.Leases {
			resp.Leases = append(resp.Leases, stateOf(renewal))
		}
		if err := stream.Send(resp); err != nil {
			return err
		}
	}
}

// stateOf answers a renewal: held, or RELEASED for an ending.
func stateOf(renewal *holdshelfv1.LeaseRenewal) *holdshelfv1.LeaseState {
	if renewal.Failed || (renewal.VisibilityTimeout != nil && renewal.VisibilityTimeout.AsDuration() == 0) {
		return &holdshelfv1.LeaseState{ReceiptHandle: renewal.ReceiptHandle, Reason: ReasonReleased}
	}
	return &holdshelfv1.LeaseState{ReceiptHandle: renewal.ReceiptHandle, Held: true}
}

func (b *fakeBroker) Subscribe(stream holdshelfv1.QueueService_SubscribeServer) error {
	atomic.AddInt32(&b.subscribes, 1)
	if b.noSubscribe {
		return status.Error(codes.Unimplemented, "method Subscribe not implemented")
	}
	for i := 0; ; i++ {
		request, err := stream.Recv()
		if err == io.EOF {
			b.mu.Lock()
			b.halfClosed = true
			b.mu.Unlock()
			if b.pushAtHalfClose {
				return stream.Send(&holdshelfv1.SubscribeResponse{Messages: []*holdshelfv1.ReceivedMessage{b.message("m9")}})
			}
			return nil
		}
		if err != nil {
			return err
		}
		b.mu.Lock()
		b.requests = append(b.requests, request)
		b.acks = append(b.acks, request.AckReceiptHandles...)
		b.mu.Unlock()
		resp := &holdshelfv1.SubscribeResponse{}
		if i == 0 {
			// m2 comes later than m1, in a response of its own.
			if err := stream.Send(&holdshelfv1.SubscribeResponse{Messages: []*holdshelfv1.ReceivedMessage{b.message("m1")}}); err != nil {
				return err
			}
			resp.Messages = []*holdshelfv1.ReceivedMessage{b.message("m2")}
		}
		if b.ackGate != nil && len(request.AckReceiptHandles) > 0 {
			<-b.ackGate
		}
		for _, handle := range request.AckReceiptHandles {
			resp.Acks = append(resp.Acks, &holdshelfv1.AckResult{ReceiptHandle: handle})
		}
		for _, renewal := range request.Leases {
			resp.Leases = append(resp.Leases, stateOf(renewal))
		}
		if len(resp.Messages)+len(resp.Acks)+len(resp.Leases) > 0 {
			if err := stream.Send(resp); err != nil {
				return err
			}
		}
	}
}

// serve serves b on a loopback port and returns a Client of it.
func serve(t *testing.T, b holdshelfv1.QueueServiceServer) *Client {
	t.Helper()
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	server := grpc.NewServer()
	holdshelfv1.RegisterQueueServiceServer(server, b)
	go server.Serve(listener)
	t.Cleanup(server.Stop)
	client, err := Dial(context.Background(), listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	return client
}

// consumeBoth runs a Consumer of concurrency 2 until it handled m1 and m2,
// then stops it, and returns the order of its handlers' starts and ends.
func consumeBoth(t *testing.T, client *Client, options ConsumerOptions) []string {
	t.Helper()
	var mu sync.Mutex
	var order []string
	handled := make(chan struct{}, 2)
	options.Concurrency = 2
	options.OnError = func(err error, _ *Delivery) { t.Errorf("reported %v", err) }
	consumer, err := NewConsumer(client, "q", func(ctx context.Context, d *Delivery) error {
		mu.Lock()
		order = append(order, "start "+d.Message.ID)
		mu.Unlock()
		// m2 would start meanwhile if it did not wait for m1.
		time.Sleep(30 * time.Millisecond)
		mu.Lock()
		order = append(order, "end "+d.Message.ID)
		mu.Unlock()
		handled <- struct{}{}
		return nil
	}, options)
	if err != nil {
		t.Fatal(err)
	}
	ran := make(chan error, 1)
	go func() { ran <- consumer.Run(context.Background()) }()
	for i := 0; i < 2; i++ {
		select {
		case <-handled:
		case <-time.After(10 * time.Second):
			t.Fatal("the messages were not handled")
		}
	}
	consumer.Stop()
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	return order
}

var inGroupOrder = []string{"start m1", "end m1", "start m2", "end m2"}

func TestTheConsumerSubscribesAcksOnTheStreamKeepsGroupOrderAndPausesToStop(t *testing.T) {
	b := &fakeBroker{}
	order := consumeBoth(t, serve(t, b), ConsumerOptions{MaxOutstandingBytes: 4096})
	if !reflect.DeepEqual(order, inGroupOrder) {
		t.Errorf("order = %v", order)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.deletes) != 0 || b.received {
		t.Errorf("used Receive (%v) or Delete (%v)", b.received, b.deletes)
	}
	if !reflect.DeepEqual(b.acks, []string{"m1", "m2"}) {
		t.Errorf("acks = %v", b.acks)
	}
	if flow := b.requests[0].FlowControl; flow.GetMaxOutstandingMessages() != 2 || flow.GetMaxOutstandingBytes() != 4096 {
		t.Errorf("flow control = %v", flow)
	}
	paused := false
	for _, request := range b.requests[1:] {
		paused = paused || (request.FlowControl != nil && request.FlowControl.MaxOutstandingMessages == 0)
	}
	if !paused || !b.halfClosed {
		t.Errorf("the stop paused deliveries: %v; half-closed: %v", paused, b.halfClosed)
	}
}

func TestTheConsumerFallsBackToReceiveOnABrokerWithoutSubscribe(t *testing.T) {
	b := &fakeBroker{noSubscribe: true}
	order := consumeBoth(t, serve(t, b), ConsumerOptions{})
	if !reflect.DeepEqual(order, inGroupOrder) {
		t.Errorf("order = %v", order)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if atomic.LoadInt32(&b.subscribes) != 1 || !reflect.DeepEqual(b.deletes, []string{"m1", "m2"}) {
		t.Errorf("subscribes = %d, deletes = %v", b.subscribes, b.deletes)
	}
}

func TestTheConsumerWithSubscribeOffNeverSubscribes(t *testing.T) {
	b := &fakeBroker{}
	consumeBoth(t, serve(t, b), ConsumerOptions{Subscribe: Bool(false)})
	b.mu.Lock()
	defer b.mu.Unlock()
	if atomic.LoadInt32(&b.subscribes) != 0 || !reflect.DeepEqual(b.deletes, []string{"m1", "m2"}) {
		t.Errorf("subscribes = %d, deletes = %v", b.subscribes, b.deletes)
	}
}

func TestASlotTakesTheNextDeliveryWhileTheAckOfItsLastBecomesDurable(t *testing.T) {
	b := &fakeBroker{noGroup: true, ackGate: make(chan struct{})}
	started := make(chan string, 2)
	consumer, err := NewConsumer(serve(t, b), "q", func(_ context.Context, d *Delivery) error {
		started <- d.Message.ID
		return nil
	}, ConsumerOptions{Concurrency: 1, OnError: func(err error, _ *Delivery) { t.Errorf("reported %v", err) }})
	if err != nil {
		t.Fatal(err)
	}
	ran := make(chan error, 1)
	go func() { ran <- consumer.Run(context.Background()) }()
	for _, want := range []string{"m1", "m2"} {
		select {
		case id := <-started:
			if id != want {
				t.Fatalf("started %s, want %s", id, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s did not start while the ack of m1 was unanswered", want)
		}
	}
	close(b.ackGate)
	consumer.Stop()
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !reflect.DeepEqual(b.acks, []string{"m1", "m2"}) {
		t.Errorf("acks = %v", b.acks)
	}
}

func TestAStopGivesBackTheRunningMessageAndThoseWaitingForASlot(t *testing.T) {
	b := &fakeBroker{noGroup: true}
	started := make(chan string, 2)
	consumer, err := NewConsumer(serve(t, b), "q", func(ctx context.Context, d *Delivery) error {
		started <- d.Message.ID
		<-ctx.Done() // until the stop gives the message back
		return ctx.Err()
	}, ConsumerOptions{Concurrency: 1, StopGrace: Duration(0), OnError: func(err error, _ *Delivery) { t.Errorf("reported %v", err) }})
	if err != nil {
		t.Fatal(err)
	}
	ran := make(chan error, 1)
	go func() { ran <- consumer.Run(context.Background()) }()
	if id := <-started; id != "m1" {
		t.Fatalf("started %s", id)
	}
	// m2 came too, and waits for m1's slot.
	waitFor(t, func() bool {
		consumer.mu.Lock()
		defer consumer.mu.Unlock()
		return len(consumer.queued) == 1
	})
	consumer.Stop()
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	select {
	case id := <-started:
		t.Fatalf("%s started during the stop", id)
	default:
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	released := map[string]bool{}
	for _, request := range b.requests {
		for _, renewal := range request.Leases {
			if renewal.VisibilityTimeout != nil && renewal.VisibilityTimeout.AsDuration() == 0 && !renewal.Failed {
				released[renewal.ReceiptHandle] = true
			}
		}
	}
	if !released["m1"] || !released["m2"] || len(b.acks) != 0 || !b.halfClosed {
		t.Errorf("released %v, acked %v, half-closed %v", released, b.acks, b.halfClosed)
	}
}

// redeliveringBroker delivers m1 and m2 of group g at once, and delivers
// again at once each message whose lease the consumer ends: as a broker
// does when a stream that still holds m2 fails m1 (no retry policy). With
// m3, it delivers m3 too with the first delivery again (the stream holds m2
// still, so the group's next may come).
type redeliveringBroker struct {
	fakeBroker
	m3 bool
}

func (b *redeliveringBroker) Subscribe(stream holdshelfv1.QueueService_SubscribeServer) error {
	if _, err := stream.Recv(); err != nil {
		return err
	}
	counts := map[string]int32{"m1": 1, "m2": 1, "m3": 1}
	m3 := b.m3
	delivery := func(id string) *holdshelfv1.ReceivedMessage {
		m := b.message(id)
		m.ReceiveCount = counts[id]
		m.ReceiptHandle = fmt.Sprintf("%s#%d", id, counts[id])
		return m
	}
	if err := stream.Send(&holdshelfv1.SubscribeResponse{Messages: []*holdshelfv1.ReceivedMessage{delivery("m1"), delivery("m2")}}); err != nil {
		return err
	}
	for {
		request, err := stream.Recv()
		if err != nil {
			return nil
		}
		resp := &holdshelfv1.SubscribeResponse{}
		var again []*holdshelfv1.ReceivedMessage
		for _, handle := range request.AckReceiptHandles {
			resp.Acks = append(resp.Acks, &holdshelfv1.AckResult{ReceiptHandle: handle})
			b.mu.Lock()
			b.acks = append(b.acks, handle)
			b.mu.Unlock()
		}
		for _, renewal := range request.Leases {
			state := stateOf(renewal)
			resp.Leases = append(resp.Leases, state)
			if !state.Held {
				id := renewal.ReceiptHandle[:2]
				counts[id]++
				again = append(again, delivery(id))
				if m3 {
					again = append(again, delivery("m3"))
					m3 = false
				}
			}
		}
		if len(resp.Acks)+len(resp.Leases) > 0 {
			if err := stream.Send(resp); err != nil {
				return err
			}
		}
		if len(again) > 0 {
			if err := stream.Send(&holdshelfv1.SubscribeResponse{Messages: again}); err != nil {
				return err
			}
		}
	}
}

// handleRedeliveries runs a Consumer of concurrency 3 on b until the
// handler took last, and returns the receipt handles it handled, in order;
// m1's first delivery fails.
func handleRedeliveries(t *testing.T, b *redeliveringBroker, last string) []string {
	t.Helper()
	var mu sync.Mutex
	var calls []string
	done := make(chan struct{})
	consumer, err := NewConsumer(serve(t, b), "q", func(_ context.Context, d *Delivery) error {
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, d.Message.ReceiptHandle)
		if d.Message.ReceiptHandle == "m1#1" {
			return errors.New("fails once")
		}
		if d.Message.ReceiptHandle == last {
			close(done)
		}
		return nil
	}, ConsumerOptions{Concurrency: 3, OnError: func(error, *Delivery) {}})
	if err != nil {
		t.Fatal(err)
	}
	ran := make(chan error, 1)
	go func() { ran <- consumer.Run(context.Background()) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		mu.Lock()
		t.Errorf("handled %v, never %s", calls, last)
		mu.Unlock()
	}
	consumer.Stop()
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	return calls
}

func TestAFailedMessageDeliveredAgainBeforeThoseBehindItAreGivenBackGoesFirst(t *testing.T) {
	// m2#1 goes back unhandled behind the failed m1#1; m1#2 is not held
	// back behind it.
	if calls := handleRedeliveries(t, &redeliveringBroker{}, "m2#2"); !reflect.DeepEqual(calls, []string{"m1#1", "m1#2", "m2#2"}) {
		t.Errorf("handled %v", calls)
	}
}

func TestAGroupsNextMessageWaitsBehindOneBeingGivenBack(t *testing.T) {
	// m3#1 came after m1#2 while m2#1 was being given back: it waits for
	// m2#1, so goes back too instead of overtaking it.
	if calls := handleRedeliveries(t, &redeliveringBroker{m3: true}, "m3#2"); !reflect.DeepEqual(calls, []string{"m1#1", "m1#2", "m2#2", "m3#2"}) {
		t.Errorf("handled %v", calls)
	}
}

func TestAMessagePushedAsTheStreamHalfClosesIsGivenBackWithAUnaryCall(t *testing.T) {
	b := &fakeBroker{noGroup: true, pushAtHalfClose: true}
	consumeBoth(t, serve(t, b), ConsumerOptions{})
	b.mu.Lock()
	defer b.mu.Unlock()
	if !reflect.DeepEqual(b.changed, []string{"m9"}) {
		t.Errorf("released with ChangeVisibilityBatch: %v", b.changed)
	}
}
