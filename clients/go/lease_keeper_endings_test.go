package holdshelf

// How the lease keeper ends leases: refused renewals and endings, a
// checkpoint on a lease it no longer holds, an ending across a broken
// stream, and close's deadline.

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// expectLeaseLost fails unless err is a *LeaseLostError with reason.
func expectLeaseLost(t *testing.T, err error, reason string) {
	t.Helper()
	var lostErr *LeaseLostError
	if !errors.As(err, &lostErr) || lostErr.Reason != reason {
		t.Fatalf("got %v, want a *LeaseLostError with %s", err, reason)
	}
}

// expectNothingSent fails if the keeper sends a request within a short wait.
func expectNothingSent(t *testing.T, f *fakeStream) {
	t.Helper()
	select {
	case request := <-f.sent:
		t.Fatalf("sent a request naming %d leases", len(request.Leases))
	case <-time.After(50 * time.Millisecond):
	}
}

func TestARefusedRenewalKeepsTheLeaseForItsEndingButFailsCheckpoints(t *testing.T) {
	kt := startKeeper(t, time.Minute)
	f, lease, lost := kt.openedWith("h1")
	saved := lease.checkpoint([]byte("1"))
	kt.nextRequest(f)
	answer(f, false, ReasonLeaseLimitExceeded, "h1")
	expectLost(t, lost, ReasonLeaseLimitExceeded)
	expectLeaseLost(t, <-saved, ReasonLeaseLimitExceeded)
	expectLeaseLost(t, <-lease.checkpoint([]byte("2")), ReasonLeaseLimitExceeded)
	expectNothingSent(t, f)

	// Its handle works until its deadline, so the failure still goes out.
	failed := lease.fail(nil)
	request := kt.nextRequest(f)
	if len(request.Leases) != 1 || !request.Leases[0].Failed {
		t.Fatalf("fail sent %v, want the failed renewal", request)
	}
	answer(f, false, ReasonReleased, "h1")
	if err := <-failed; err != nil {
		t.Fatal(err)
	}
}

func TestARefusedLeaseIsNotRenewedAndIsForgottenAtItsDeadline(t *testing.T) {
	kt := startKeeperWith(t, time.Minute, 600*time.Millisecond)
	f, lease, lost := kt.openedWith("h1")
	renewal := kt.nextRequest(f) // after a third of the lease, less jitter
	if len(renewal.Leases) != 1 || renewal.Leases[0].Failed {
		t.Fatalf("renewal = %v", renewal)
	}
	answer(f, false, ReasonInvalidArgument, "h1")
	expectLost(t, lost, ReasonInvalidArgument)
	kt.waitForgotten(lease)
	expectNothingSent(t, f)
	// Forgotten: its ending answers at once, unsent.
	if err := <-lease.fail(nil); err != nil {
		t.Fatal(err)
	}
	expectNothingSent(t, f)
}

// inLoop runs f on the keeper's loop goroutine and waits for it.
func (kt *keeperTest) inLoop(f func()) {
	ran := make(chan struct{})
	if kt.keeper.do(func() { f(); close(ran) }) {
		<-ran
	}
}

// waitForgotten polls the keeper until it forgot the lease, and fails if
// that was before the lease's deadline or not within 5 s.
func (kt *keeperTest) waitForgotten(lease *heldLease) {
	kt.t.Helper()
	var expiresAt time.Time
	kt.inLoop(func() { expiresAt = lease.lease.expiresAt })
	give := time.Now().Add(5 * time.Second)
	for {
		var gone bool
		kt.inLoop(func() { gone = lease.lease.state == leaseGone })
		if gone {
			if now := time.Now(); now.Before(expiresAt) {
				kt.t.Fatalf("forgotten %v before its deadline", expiresAt.Sub(now))
			}
			return
		}
		if time.Now().After(give) {
			kt.t.Fatal("the lease was never forgotten")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestACheckpointIsAnsweredBeforeItsHolderHearsOfTheLoss(t *testing.T) {
	for _, reason := range []string{ReasonLeaseLimitExceeded, ReasonLeaseSuperseded} {
		t.Run(reason, func(t *testing.T) {
			kt := startKeeper(t, time.Minute)
			f, _, _ := kt.openedWith("h0") // only to open the stream
			var sent, queued <-chan error
			answered := make(chan int, 1)
			lease := kt.keeper.hold("h1", time.Now(), func(string) { answered <- len(sent) + len(queued) })
			kt.nextRequest(f)
			answer(f, true, "", "h1")
			sent = lease.checkpoint([]byte("1"))
			kt.nextRequest(f)
			queued = lease.checkpoint([]byte("2")) // behind the one in flight
			answer(f, false, reason, "h1")
			if n := <-answered; n != 2 {
				t.Fatalf("%d of 2 checkpoints were answered when the holder heard of the loss", n)
			}
			expectLeaseLost(t, <-sent, reason)
			// Never sent: it would renew a lease its holder was told is lost.
			select {
			case err := <-queued:
				expectLeaseLost(t, err, reason)
			case <-time.After(5 * time.Second):
				t.Fatal("the checkpoint queued behind the refused renewal was not answered")
			}
			expectNothingSent(t, f)
		})
	}
}

func TestCheckpointReturnsTheLossThatCancelledItsContext(t *testing.T) {
	kt := startKeeper(t, time.Minute)
	f, _, _ := kt.openedWith("h0") // only to open the stream
	// Without the order the answer and ctx are both ready, and Checkpoint
	// would pick one at random: tried 20 times.
	for i := 0; i < 20; i++ {
		handle := fmt.Sprintf("h%d", i+1)
		ctx, cancel := context.WithCancel(context.Background())
		d := &Delivery{lease: kt.keeper.hold(handle, time.Now(), func(string) { cancel() })}
		kt.nextRequest(f)
		answer(f, true, "", handle)
		saved := make(chan error, 1)
		go func() { saved <- d.Checkpoint(ctx, []byte("1")) }()
		kt.nextRequest(f)
		answer(f, false, ReasonLeaseLimitExceeded, handle)
		expectLeaseLost(t, <-saved, ReasonLeaseLimitExceeded)
	}
}

func TestARefusedEndingKeepsTheLeaseAndSendsTheEndingQueuedBehindIt(t *testing.T) {
	kt := startKeeper(t, time.Minute)
	f, lease, _ := kt.openedWith("h1")
	failed := lease.fail(Duration(13 * time.Hour))
	kt.nextRequest(f)
	released := lease.release(0) // behind the failure in flight
	answer(f, false, ReasonInvalidArgument, "h1")
	expectLeaseLost(t, <-failed, ReasonInvalidArgument)
	request := kt.nextRequest(f)
	if len(request.Leases) != 1 || request.Leases[0].Failed || request.Leases[0].VisibilityTimeout.AsDuration() != 0 {
		t.Fatalf("sent %v, want the release", request)
	}
	answer(f, false, ReasonReleased, "h1")
	if err := <-released; err != nil {
		t.Fatal(err)
	}
}

func TestARefusedEndingLeavesTheLeaseUnrenewedUntilItsDeadline(t *testing.T) {
	kt := startKeeperWith(t, time.Minute, 600*time.Millisecond)
	f, lease, _ := kt.openedWith("h1")
	failed := lease.fail(Duration(13 * time.Hour))
	kt.nextRequest(f)
	answer(f, false, ReasonLeaseLimitExceeded, "h1")
	expectLeaseLost(t, <-failed, ReasonLeaseLimitExceeded)
	expectLeaseLost(t, <-lease.checkpoint([]byte("1")), ReasonLeaseLimitExceeded)
	var state leaseState
	kt.inLoop(func() { state = lease.lease.state })
	if state != leaseRefused {
		t.Fatalf("state %v after a refused ending, want leaseRefused", state)
	}
	kt.waitForgotten(lease)
	expectNothingSent(t, f)
}

func TestCloseFailsAReleaseItNeverSent(t *testing.T) {
	kt := startKeeper(t, time.Minute)
	f, lease, _ := kt.openedWith("h1")
	lease.checkpoint([]byte("1"))
	kt.nextRequest(f) // never answered
	released := lease.release(0)
	kt.keeper.close(50 * time.Millisecond)
	var lostErr *LeaseLostError
	if err := <-released; err == nil || errors.As(err, &lostErr) {
		t.Fatalf("returned %v, want an error saying it was never sent", err)
	}
}

func TestARefusedFailureIsReturned(t *testing.T) {
	kt := startKeeper(t, time.Minute)
	f, lease, _ := kt.openedWith("h1")
	failed := lease.fail(Duration(13 * time.Hour))
	kt.nextRequest(f)
	answer(f, false, ReasonInvalidArgument, "h1")
	expectLeaseLost(t, <-failed, ReasonInvalidArgument)
}

func TestACheckpointOfALeaseBeingReleasedIsLostWithReleased(t *testing.T) {
	kt := startKeeper(t, time.Minute)
	f, lease, _ := kt.openedWith("h1")
	lease.release(0)
	kt.nextRequest(f) // not answered yet
	expectLeaseLost(t, <-lease.checkpoint([]byte("1")), ReasonReleased)
}

func TestACheckpointAfterTheKeeperClosedIsLostWithReleased(t *testing.T) {
	kt := startKeeper(t, time.Minute)
	_, lease, _ := kt.openedWith("h1")
	kt.keeper.close(50 * time.Millisecond)
	expectLeaseLost(t, <-lease.checkpoint([]byte("1")), ReasonReleased)
	if err := <-lease.release(0); err != nil {
		t.Fatalf("a release after close returned %v", err)
	}
}

func TestACheckpointAfterTheDeleteBeganIsLost(t *testing.T) {
	kt := startKeeper(t, time.Minute)
	_, lease, _ := kt.openedWith("h1")
	lease.drop()
	expectLeaseLost(t, <-lease.checkpoint([]byte("1")), ReasonMessageNotFound)
}

func TestACheckpointOver64KiBIsRefusedBeforeSending(t *testing.T) {
	kt := startKeeper(t, time.Minute)
	f, lease, _ := kt.openedWith("h1")
	d := &Delivery{lease: lease}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err := d.Checkpoint(ctx, make([]byte, 65537))
	var lostErr *LeaseLostError
	if err == nil || errors.As(err, &lostErr) {
		t.Fatalf("returned %v, want a plain error", err)
	}
	expectNothingSent(t, f)

	saved := make(chan error, 1)
	go func() { saved <- d.Checkpoint(context.Background(), make([]byte, 65536)) }()
	if request := kt.nextRequest(f); len(request.Leases[0].Checkpoint) != 65536 {
		t.Fatalf("the largest allowed checkpoint was not sent whole: %d bytes", len(request.Leases[0].Checkpoint))
	}
	answer(f, true, "", "h1")
	if err := <-saved; err != nil {
		t.Fatal(err)
	}
}

func TestABrokenStreamKeepsTheEndingInFlightOverANewerOne(t *testing.T) {
	kt := startKeeper(t, time.Minute)
	f, lease, _ := kt.openedWith("h1")
	failed := lease.fail(Duration(2 * time.Second))
	kt.nextRequest(f) // never answered
	released := lease.release(0)
	f.end <- status.Error(codes.Unavailable, "connection reset")
	<-kt.errors
	reopened := kt.nextStream()
	request := kt.nextRequest(reopened)
	if len(request.Leases) != 1 || !request.Leases[0].Failed || request.Leases[0].VisibilityTimeout.AsDuration() != 2*time.Second {
		t.Fatalf("sent again: %v, want the failure with its 2s delay", request)
	}
	answer(reopened, false, ReasonReleased, "h1")
	if err := <-failed; err != nil {
		t.Fatal(err)
	}
	if err := <-released; err != nil {
		t.Fatal(err)
	}
}

func TestCloseWaitsNoLongerThanItsTimeoutInAll(t *testing.T) {
	kt := startKeeper(t, time.Minute)
	f, lease, _ := kt.openedWith("h1")
	lease.checkpoint([]byte("1"))
	kt.nextRequest(f) // never answered, nor is the half-close
	closed := make(chan struct{})
	go func() {
		kt.keeper.close(200 * time.Millisecond)
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(2 * time.Second):
		t.Fatal("close outlasted its timeout")
	}
}
