package holdshelf

// The leaseKeeper on fake Subscribe streams: what it sends, how it tells
// answers from deliveries and notices, its reconnects and its fallback.

import (
	"context"
	"errors"
	"io"
	"reflect"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/holdshelf/holdshelf/clients/go/holdshelfv1"
)

// fakeSubscribe is a Subscribe stream the test plays the broker of.
type fakeSubscribe = fakeCall[*holdshelfv1.SubscribeRequest, *holdshelfv1.SubscribeResponse]

// subscribeTest is a leaseKeeper on fake Subscribe streams.
type subscribeTest struct {
	t          *testing.T
	keeper     *leaseKeeper
	streams    chan *fakeSubscribe
	errors     chan error
	deliveries chan delivered
	absent     chan struct{}
}

func startSubscribeKeeper(t *testing.T) *subscribeTest {
	st := &subscribeTest{
		t: t, streams: make(chan *fakeSubscribe, 10), errors: make(chan error, 10),
		deliveries: make(chan delivered, 100), absent: make(chan struct{}),
	}
	st.keeper = newLeaseKeeper(leaseKeeperOptions{
		queue: "q",
		wire: subscribeWire{queue: "q", visibility: Duration(30 * time.Second), openRPC: func(ctx context.Context) (holdshelfv1.QueueService_SubscribeClient, error) {
			f := &fakeSubscribe{
				ctx: ctx, sent: make(chan *holdshelfv1.SubscribeRequest, 10), responses: make(chan *holdshelfv1.SubscribeResponse),
				end: make(chan error, 1), halfClosed: make(chan struct{}),
			}
			st.streams <- f
			return f, nil
		}},
		flow:        flowControl(4, 0),
		visibility:  Duration(30 * time.Second),
		leaseLength: 30 * time.Second,
		stall:       time.Minute,
		onError:     func(err error) { st.errors <- err },
		onDelivery: func(messages []delivered) {
			for _, d := range messages {
				st.deliveries <- d
			}
		},
		onUnimplemented: func() { close(st.absent) },
	})
	t.Cleanup(func() { st.keeper.close(100 * time.Millisecond) })
	return st
}

func (st *subscribeTest) nextStream() *fakeSubscribe {
	st.t.Helper()
	select {
	case f := <-st.streams:
		return f
	case <-time.After(5 * time.Second):
		st.t.Fatal("no stream opened")
		return nil
	}
}

func (st *subscribeTest) nextRequest(f *fakeSubscribe) *holdshelfv1.SubscribeRequest {
	st.t.Helper()
	select {
	case request := <-f.sent:
		return request
	case <-time.After(5 * time.Second):
		st.t.Fatal("no request sent")
		return nil
	}
}

// opened opens the first stream and checks its first request.
func (st *subscribeTest) opened() *fakeSubscribe {
	st.t.Helper()
	f := st.nextStream()
	first := st.nextRequest(f)
	if first.Queue != "q" || first.VisibilityTimeout.AsDuration() != 30*time.Second || !first.ReleaseOnDisconnect ||
		first.FlowControl.GetMaxOutstandingMessages() != 4 || first.FlowControl.GetMaxOutstandingBytes() != 0 ||
		len(first.Leases) != 0 || len(first.AckReceiptHandles) != 0 {
		st.t.Fatalf("first request = %v", first)
	}
	return f
}

// deliver pushes messages of these handles in one response and returns
// what the keeper handed over.
func (st *subscribeTest) deliver(f *fakeSubscribe, handles ...string) []delivered {
	st.t.Helper()
	resp := &holdshelfv1.SubscribeResponse{}
	for _, handle := range handles {
		resp.Messages = append(resp.Messages, &holdshelfv1.ReceivedMessage{MessageId: "id-" + handle, ReceiptHandle: handle})
	}
	f.responses <- resp
	var handed []delivered
	for range handles {
		select {
		case d := <-st.deliveries:
			handed = append(handed, d)
		case <-time.After(5 * time.Second):
			st.t.Fatal("the delivery was not handed over")
		}
	}
	return handed
}

func answerAcks(f *fakeSubscribe, reasons map[string]string, handles ...string) {
	resp := &holdshelfv1.SubscribeResponse{}
	for _, handle := range handles {
		resp.Acks = append(resp.Acks, &holdshelfv1.AckResult{ReceiptHandle: handle, Reason: reasons[handle]})
	}
	f.responses <- resp
}

func waitAnswer(t *testing.T, answer <-chan error) error {
	t.Helper()
	select {
	case err := <-answer:
		return err
	case <-time.After(5 * time.Second):
		t.Fatal("no answer")
		return nil
	}
}

func TestAcksOfOneMomentGoInOneRequestAndEachGetsItsResult(t *testing.T) {
	st := startSubscribeKeeper(t)
	f := st.opened()
	handed := st.deliver(f, "h1", "h2", "h3")
	if handed[0].message.ID != "id-h1" || handed[2].lease.lease.handle != "h3" {
		t.Fatalf("handed over %+v", handed)
	}
	// The first ack goes alone (the first request awaits no answer); the two
	// asked for while it is in flight go together in the next.
	first := handed[0].lease.ack()
	if acks := st.nextRequest(f).AckReceiptHandles; !reflect.DeepEqual(acks, []string{"h1"}) {
		t.Fatalf("acks = %v", acks)
	}
	second, third := handed[1].lease.ack(), handed[2].lease.ack()
	answerAcks(f, nil, "h1")
	if err := waitAnswer(t, first); err != nil {
		t.Fatal(err)
	}
	if acks := st.nextRequest(f).AckReceiptHandles; !reflect.DeepEqual(acks, []string{"h2", "h3"}) {
		t.Fatalf("acks = %v", acks)
	}
	answerAcks(f, map[string]string{"h3": ReasonLeaseSuperseded}, "h2", "h3")
	if err := waitAnswer(t, second); err != nil {
		t.Fatal(err)
	}
	var e *Error
	if err := waitAnswer(t, third); !errors.As(err, &e) || e.Reason != ReasonLeaseSuperseded || e.Code != codes.FailedPrecondition {
		t.Fatalf("the refused ack got %v", err)
	}
}

func TestDeliveredLeasesAreRenewedAndCheckpointedOnTheStream(t *testing.T) {
	st := startSubscribeKeeper(t)
	f := st.opened()
	handed := st.deliver(f, "h1")
	stored := handed[0].lease.checkpoint([]byte("7"))
	renewal := st.nextRequest(f).Leases
	if len(renewal) != 1 || renewal[0].ReceiptHandle != "h1" || string(renewal[0].Checkpoint) != "7" || renewal[0].VisibilityTimeout.AsDuration() != 30*time.Second {
		t.Fatalf("renewal = %v", renewal)
	}
	// A delivery in the same response as the answer does not hide it.
	f.responses <- &holdshelfv1.SubscribeResponse{
		Messages: []*holdshelfv1.ReceivedMessage{{ReceiptHandle: "h2"}},
		Leases:   []*holdshelfv1.LeaseState{{ReceiptHandle: "h1", Held: true}},
	}
	if err := waitAnswer(t, stored); err != nil {
		t.Fatal(err)
	}
	if d := <-st.deliveries; d.lease.lease.handle != "h2" {
		t.Fatalf("delivered %s", d.lease.lease.handle)
	}
}

func TestALeaseExpiredNoticeLosesADeliveredLeaseWatchedLaterToo(t *testing.T) {
	st := startSubscribeKeeper(t)
	f := st.opened()
	handed := st.deliver(f, "h1", "h2")
	lost := make(chan string, 2)
	handed[0].lease.watch(func(reason string) { lost <- reason })
	f.responses <- &holdshelfv1.SubscribeResponse{Leases: []*holdshelfv1.LeaseState{
		{ReceiptHandle: "h1", Reason: ReasonLeaseExpired}, {ReceiptHandle: "h2", Reason: ReasonLeaseExpired},
	}}
	expectLost(t, lost, ReasonLeaseExpired)
	// h2 was lost before anyone watched it: its watcher hears at once.
	handed[1].lease.watch(func(reason string) { lost <- reason })
	expectLost(t, lost, ReasonLeaseExpired)
}

func TestAReconnectRenewsHeldLeasesAndSendsUnansweredAcksInItsFirstRequest(t *testing.T) {
	st := startSubscribeKeeper(t)
	f := st.opened()
	handed := st.deliver(f, "h1", "h2")
	acked := handed[1].lease.ack()
	st.nextRequest(f)
	f.end <- status.Error(codes.Unavailable, "SHUTTING_DOWN")
	if err := <-st.errors; status.Code(err) != codes.Unavailable {
		t.Fatalf("reported %v", err)
	}
	again := st.nextStream()
	first := st.nextRequest(again)
	if first.Queue != "q" || first.FlowControl.GetMaxOutstandingMessages() != 4 || !first.ReleaseOnDisconnect {
		t.Fatalf("first request = %v", first)
	}
	if len(first.Leases) != 1 || first.Leases[0].ReceiptHandle != "h1" || !reflect.DeepEqual(first.AckReceiptHandles, []string{"h2"}) {
		t.Fatalf("the first request renews %v and acks %v, want h1 and h2", first.Leases, first.AckReceiptHandles)
	}
	again.responses <- &holdshelfv1.SubscribeResponse{
		Acks:   []*holdshelfv1.AckResult{{ReceiptHandle: "h2"}},
		Leases: []*holdshelfv1.LeaseState{{ReceiptHandle: "h1", Held: true}},
	}
	if err := waitAnswer(t, acked); err != nil {
		t.Fatal(err)
	}
	// The lease is held on the new stream, and renewed there.
	stored := handed[0].lease.checkpoint([]byte("x"))
	if renewal := st.nextRequest(again).Leases; len(renewal) != 1 || renewal[0].ReceiptHandle != "h1" {
		t.Fatalf("renewal = %v", renewal)
	}
	again.responses <- &holdshelfv1.SubscribeResponse{Leases: []*holdshelfv1.LeaseState{{ReceiptHandle: "h1", Held: true}}}
	if err := waitAnswer(t, stored); err != nil {
		t.Fatal(err)
	}
}

func TestUnimplementedBeforeAnyResponseMeansNoSubscribe(t *testing.T) {
	st := startSubscribeKeeper(t)
	f := st.opened()
	f.end <- status.Error(codes.Unimplemented, "method Subscribe not implemented")
	select {
	case <-st.absent:
	case <-time.After(5 * time.Second):
		t.Fatal("the fallback was not signalled")
	}
	select {
	case err := <-st.errors:
		t.Fatalf("reported %v", err)
	case <-st.streams:
		t.Fatal("reopened")
	case <-time.After(300 * time.Millisecond):
	}
}

func TestUnimplementedAfterAResponseIsRetriedAsAnyError(t *testing.T) {
	st := startSubscribeKeeper(t)
	f := st.opened()
	st.deliver(f, "h1")
	f.end <- status.Error(codes.Unimplemented, "gone")
	if err := <-st.errors; status.Code(err) != codes.Unimplemented {
		t.Fatalf("reported %v", err)
	}
	st.nextStream()
	select {
	case <-st.absent:
		t.Fatal("fell back after Subscribe had worked")
	default:
	}
}

func TestAPauseAsksForNothingMoreAndGivesBackWhatStillArrives(t *testing.T) {
	st := startSubscribeKeeper(t)
	f := st.opened()
	st.keeper.pause()
	paused := st.nextRequest(f)
	if paused.FlowControl == nil || paused.FlowControl.MaxOutstandingMessages != 0 || paused.Queue != "" {
		t.Fatalf("pause request = %v", paused)
	}
	f.responses <- &holdshelfv1.SubscribeResponse{Messages: []*holdshelfv1.ReceivedMessage{{ReceiptHandle: "late"}}}
	release := st.nextRequest(f).Leases
	if len(release) != 1 || release[0].ReceiptHandle != "late" || release[0].VisibilityTimeout.AsDuration() != 0 || release[0].Failed {
		t.Fatalf("release = %v", release)
	}
	select {
	case d := <-st.deliveries:
		t.Fatalf("handed over %s after the pause", d.lease.lease.handle)
	default:
	}
}

func TestARefusedStreamIsReportedAndOpenedAgainAndAGoneQueueLosesItsLeases(t *testing.T) {
	st := startSubscribeKeeper(t)
	f := st.opened()
	handed := st.deliver(f, "h1")
	lost := make(chan string, 1)
	handed[0].lease.watch(func(reason string) { lost <- reason })
	f.end <- refusal(codes.ResourceExhausted, ReasonTooManySubscribers)
	if err := <-st.errors; !IsReason(err, ReasonTooManySubscribers) {
		t.Fatalf("reported %v", err)
	}
	// Opened again, with the lease still held: renewed in its first request.
	again := st.nextStream()
	if first := st.nextRequest(again); len(first.Leases) != 1 || first.Leases[0].ReceiptHandle != "h1" {
		t.Fatalf("first request = %v", first)
	}
	again.end <- refusal(codes.NotFound, ReasonQueueNotFound)
	if err := <-st.errors; !IsReason(err, ReasonQueueNotFound) {
		t.Fatalf("reported %v", err)
	}
	expectLost(t, lost, ReasonQueueNotFound)
	st.nextStream()
}

func TestDeliveriesTheStreamCouldNotGiveBackAreLeftToTheCaller(t *testing.T) {
	st := startSubscribeKeeper(t)
	f := st.opened()
	st.keeper.pause()
	st.nextRequest(f)
	closed := make(chan struct{})
	go func() {
		st.keeper.close(5 * time.Second)
		close(closed)
	}()
	<-f.halfClosed
	// Pushed before the broker read the half-close.
	f.responses <- &holdshelfv1.SubscribeResponse{Messages: []*holdshelfv1.ReceivedMessage{{ReceiptHandle: "late"}}}
	f.end <- io.EOF
	<-closed
	if late := st.keeper.lateDeliveries(); !reflect.DeepEqual(late, []string{"late"}) {
		t.Fatalf("late deliveries = %v", late)
	}
	select {
	case request := <-f.sent:
		t.Fatalf("sent %v after the half-close", request)
	default:
	}
}
