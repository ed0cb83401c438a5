package holdshelf

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/holdshelf/holdshelf/clients/go/holdshelfv1"
)

// fakeCall is a stream the test plays the broker of: it reads what the
// keeper sent and feeds it responses. fakeStream (Heartbeat) and
// fakeSubscribe are it, with their own messages.
type fakeCall[Request, Response any] struct {
	grpc.ClientStream // unused methods
	ctx               context.Context
	sent              chan Request
	responses         chan Response
	end               chan error
	halfClosed        chan struct{}
}

func (f *fakeCall[Request, Response]) Send(request Request) error {
	f.sent <- request
	return nil
}

func (f *fakeCall[Request, Response]) Recv() (Response, error) {
	var none Response
	select {
	case resp := <-f.responses:
		return resp, nil
	case err := <-f.end:
		return none, err
	case <-f.ctx.Done():
		return none, status.Error(codes.Canceled, "cancelled")
	}
}

func (f *fakeCall[Request, Response]) CloseSend() error {
	close(f.halfClosed)
	return nil
}

// fakeStream is a Heartbeat stream the test plays the broker of.
type fakeStream = fakeCall[*holdshelfv1.HeartbeatRequest, *holdshelfv1.HeartbeatResponse]

// keeperTest is a leaseKeeper on fake streams.
type keeperTest struct {
	t       *testing.T
	keeper  *leaseKeeper
	streams chan *fakeStream
	errors  chan error
}

func startKeeper(t *testing.T, stall time.Duration) *keeperTest {
	return startKeeperWith(t, stall, 30*time.Second)
}

// startKeeperWith is startKeeper with leases of leaseLength.
func startKeeperWith(t *testing.T, stall, leaseLength time.Duration) *keeperTest {
	kt := &keeperTest{t: t, streams: make(chan *fakeStream, 10), errors: make(chan error, 10)}
	kt.keeper = newLeaseKeeper(leaseKeeperOptions{
		queue: "q",
		wire: heartbeatWire{queue: "q", openRPC: func(ctx context.Context) (holdshelfv1.QueueService_HeartbeatClient, error) {
			f := &fakeStream{
				ctx: ctx, sent: make(chan *holdshelfv1.HeartbeatRequest, 10), responses: make(chan *holdshelfv1.HeartbeatResponse),
				end: make(chan error, 1), halfClosed: make(chan struct{}),
			}
			kt.streams <- f
			return f, nil
		}},
		visibility:  Duration(leaseLength),
		leaseLength: leaseLength,
		stall:       stall,
		onError:     func(err error) { kt.errors <- err },
	})
	t.Cleanup(func() { kt.keeper.close(100 * time.Millisecond) })
	return kt
}

func (kt *keeperTest) nextStream() *fakeStream {
	kt.t.Helper()
	select {
	case f := <-kt.streams:
		return f
	case <-time.After(5 * time.Second):
		kt.t.Fatal("no stream opened")
		return nil
	}
}

func (kt *keeperTest) nextRequest(f *fakeStream) *holdshelfv1.HeartbeatRequest {
	kt.t.Helper()
	select {
	case request := <-f.sent:
		return request
	case <-time.After(5 * time.Second):
		kt.t.Fatal("no request sent")
		return nil
	}
}

// answer sends one response whose states name handles, each held or not.
func answer(f *fakeStream, held bool, reason string, handles ...string) {
	resp := &holdshelfv1.HeartbeatResponse{}
	for _, handle := range handles {
		resp.Leases = append(resp.Leases, &holdshelfv1.LeaseState{ReceiptHandle: handle, Held: held, Reason: reason})
	}
	f.responses <- resp
}

// openedWith opens the first stream, answers its empty first request and
// holds one lease, returning the stream and where the loss is reported.
func (kt *keeperTest) openedWith(handle string) (*fakeStream, *heldLease, chan string) {
	f := kt.nextStream()
	first := kt.nextRequest(f)
	if !first.ReleaseOnDisconnect || len(first.Leases) != 0 {
		kt.t.Fatalf("first request = %v, want an empty one with release_on_disconnect", first)
	}
	lost := make(chan string, 1)
	lease := kt.keeper.hold(handle, time.Now(), func(reason string) { lost <- reason })
	answer(f, true, "")
	named := kt.nextRequest(f)
	if len(named.Leases) != 1 || named.Leases[0].ReceiptHandle != handle || named.Leases[0].VisibilityTimeout.AsDuration() != kt.keeper.options.leaseLength {
		kt.t.Fatalf("the lease was not named at once: %v", named)
	}
	answer(f, true, "", handle)
	return f, lease, lost
}

func expectLost(t *testing.T, lost chan string, reason string) {
	t.Helper()
	select {
	case got := <-lost:
		if got != reason {
			t.Fatalf("lost with %s, want %s", got, reason)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the loss was not reported")
	}
}

func TestAnExpiryNoticeBetweenAnswersLosesTheLease(t *testing.T) {
	kt := startKeeper(t, time.Minute)
	f, _, lost := kt.openedWith("h1")
	answer(f, false, ReasonLeaseExpired, "h1")
	expectLost(t, lost, ReasonLeaseExpired)
}

func TestAnAnswerWithHeldFalseLosesTheLeaseAndFailsItsCheckpoint(t *testing.T) {
	kt := startKeeper(t, time.Minute)
	f, lease, lost := kt.openedWith("h1")
	saved := lease.checkpoint([]byte("3"))
	request := kt.nextRequest(f)
	if string(request.Leases[0].Checkpoint) != "3" {
		t.Fatalf("checkpoint request = %v", request)
	}
	answer(f, false, ReasonLeaseSuperseded, "h1")
	expectLost(t, lost, ReasonLeaseSuperseded)
	var lostErr *LeaseLostError
	if err := <-saved; !errors.As(err, &lostErr) || lostErr.Reason != ReasonLeaseSuperseded {
		t.Fatalf("checkpoint returned %v", err)
	}
	if err := <-lease.checkpoint([]byte("4")); !errors.As(err, &lostErr) {
		t.Fatalf("a checkpoint after the loss returned %v", err)
	}
}

func TestACheckpointReturnsOnceAnsweredHeld(t *testing.T) {
	kt := startKeeper(t, time.Minute)
	f, lease, _ := kt.openedWith("h1")
	saved := lease.checkpoint([]byte("1"))
	kt.nextRequest(f)
	select {
	case err := <-saved:
		t.Fatalf("returned %v before the answer", err)
	case <-time.After(50 * time.Millisecond):
	}
	answer(f, true, "", "h1")
	if err := <-saved; err != nil {
		t.Fatal(err)
	}
}

func TestAFailedDeliveryIsSentWithFailedAndTheRetryDelay(t *testing.T) {
	kt := startKeeper(t, time.Minute)
	f, lease, _ := kt.openedWith("h1")
	done := lease.fail(nil)
	request := kt.nextRequest(f)
	if !request.Leases[0].Failed || request.Leases[0].VisibilityTimeout != nil {
		t.Fatalf("fail(nil) sent %v, want failed without a visibility timeout (the queue's backoff)", request)
	}
	answer(f, false, ReasonReleased, "h1")
	<-done

	lost := make(chan string, 1)
	second := kt.keeper.hold("h2", time.Now(), func(reason string) { lost <- reason })
	kt.nextRequest(f)
	answer(f, true, "", "h2")
	done = second.fail(Duration(2 * time.Second))
	request = kt.nextRequest(f)
	if !request.Leases[0].Failed || request.Leases[0].VisibilityTimeout.AsDuration() != 2*time.Second {
		t.Fatalf("fail(2s) sent %v", request)
	}
	answer(f, false, ReasonReleased, "h2")
	<-done
	select {
	case reason := <-lost:
		t.Fatalf("its own release was taken for a loss (%s)", reason)
	default:
	}
}

func TestABrokenStreamIsReopenedAndItsLeasesRenewedThere(t *testing.T) {
	kt := startKeeper(t, time.Minute)
	f, _, lost := kt.openedWith("h1")
	f.end <- status.Error(codes.Unavailable, "the broker is shutting down")
	if err := <-kt.errors; status.Code(err) != codes.Unavailable {
		t.Fatalf("reported %v", err)
	}
	reopened := kt.nextStream()
	renewal := kt.nextRequest(reopened)
	if !renewal.ReleaseOnDisconnect || len(renewal.Leases) != 1 || renewal.Leases[0].ReceiptHandle != "h1" {
		t.Fatalf("first request on the new stream = %v, want h1's renewal", renewal)
	}
	answer(reopened, true, "", "h1")
	select {
	case reason := <-lost:
		t.Fatalf("lost (%s) across the reopen", reason)
	case <-time.After(50 * time.Millisecond):
	}
}

func TestAStreamWithoutAnAnswerIsBrokenAndReopened(t *testing.T) {
	kt := startKeeper(t, 200*time.Millisecond)
	f, lease, _ := kt.openedWith("h1")
	saved := lease.checkpoint([]byte("1"))
	kt.nextRequest(f) // never answered
	if err := <-kt.errors; err == nil {
		t.Fatal("no error reported")
	}
	reopened := kt.nextStream()
	request := kt.nextRequest(reopened)
	if len(request.Leases) != 1 || string(request.Leases[0].Checkpoint) != "1" {
		t.Fatalf("the unanswered checkpoint was not sent again: %v", request)
	}
	answer(reopened, true, "", "h1")
	if err := <-saved; err != nil {
		t.Fatal(err)
	}
}

func TestCloseHalfClosesAfterThePendingAnswers(t *testing.T) {
	kt := startKeeper(t, time.Minute)
	f, lease, _ := kt.openedWith("h1")
	released := lease.release(0)
	closed := make(chan struct{})
	go func() {
		kt.keeper.close(5 * time.Second)
		close(closed)
	}()
	request := kt.nextRequest(f)
	if request.Leases[0].VisibilityTimeout.AsDuration() != 0 || request.Leases[0].Failed {
		t.Fatalf("release request = %v", request)
	}
	select {
	case <-f.halfClosed:
		t.Fatal("half-closed before the release was answered")
	case <-time.After(50 * time.Millisecond):
	}
	answer(f, false, ReasonReleased, "h1")
	<-released
	<-f.halfClosed
	f.end <- io.EOF
	<-closed
}
