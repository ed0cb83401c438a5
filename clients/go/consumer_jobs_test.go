package holdshelf

// The Consumer's per-message work on a keeper of fake streams: no broker,
// and so no receive loop; deletes go to a function the test plays.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
)

// jobsTest is a Consumer whose one job the test starts, and what it reported.
type jobsTest struct {
	*keeperTest
	consumer *Consumer
	stream   *fakeStream
	reported chan error
	named    chan struct{} // closed once the job's lease was named
}

func startJobs(t *testing.T, handler Handler) *jobsTest {
	return startJobsWith(t, 30*time.Second, handler)
}

// startJobsWith is startJobs with leases of leaseLength.
func startJobsWith(t *testing.T, leaseLength time.Duration, handler Handler) *jobsTest {
	kt := startKeeperWith(t, time.Minute, leaseLength)
	f := kt.nextStream()
	kt.nextRequest(f)
	answer(f, true, "")
	jt := &jobsTest{keeperTest: kt, stream: f, reported: make(chan error, 10), named: make(chan struct{})}
	jt.consumer = &Consumer{
		// The handler waits for its lease's naming, so that what it sends
		// comes in a request of its own.
		handler: func(ctx context.Context, d *Delivery) error {
			<-jt.named
			return handler(ctx, d)
		},
		options: ConsumerOptions{OnError: func(err error, d *Delivery) {
			if d == nil {
				err = fmt.Errorf("reported without its delivery: %w", err)
			}
			jt.reported <- err
		}},
		slots:  make(chan struct{}, 1),
		jobs:   make(map[*job]struct{}),
		values: context.Background(),
	}
	return jt
}

// startJob starts the handler on a message, as the receive loop would, and
// answers the renewal that names its lease.
func (jt *jobsTest) startJob(handle string) {
	jt.consumer.slots <- struct{}{}
	jt.consumer.start(&Message{ReceiptHandle: handle}, jt.keeper, time.Now(), nil)
	jt.nextRequest(jt.stream)
	answer(jt.stream, true, "", handle)
	close(jt.named)
}

// expectNoReport fails if anything was reported.
func (jt *jobsTest) expectNoReport() {
	jt.t.Helper()
	select {
	case err := <-jt.reported:
		jt.t.Fatalf("reported %v", err)
	default:
	}
}

// stop runs the Consumer's shutdown as the broker would answer it: the
// releases it sends are answered RELEASED and its half-close ends the
// stream. It fails unless the shutdown returns.
func (jt *jobsTest) stop() {
	jt.t.Helper()
	stopped := make(chan struct{})
	go func() {
		jt.consumer.shutdown(jt.keeper)
		close(stopped)
	}()
	for {
		select {
		case request := <-jt.stream.sent:
			var handles []string
			for _, renewal := range request.Leases {
				handles = append(handles, renewal.ReceiptHandle)
			}
			answer(jt.stream, false, ReasonReleased, handles...)
		case <-jt.stream.halfClosed:
			jt.stream.end <- io.EOF
			select {
			case <-stopped:
			case <-time.After(5 * time.Second):
				jt.t.Fatal("the stop did not return after the stream ended")
			}
			return
		case <-time.After(5 * time.Second):
			jt.t.Fatal("the stop neither released nor half-closed")
		}
	}
}

func (jt *jobsTest) nextReport() error {
	jt.t.Helper()
	select {
	case err := <-jt.reported:
		return err
	case <-time.After(5 * time.Second):
		jt.t.Fatal("nothing reported")
		return nil
	}
}

func TestAStopThatGivesBackALeaseLostMeanwhileEnds(t *testing.T) {
	jt := startJobs(t, func(ctx context.Context, d *Delivery) error {
		<-ctx.Done()
		return ctx.Err()
	})
	jt.startJob("h1")
	// The loss reaches the job while the stop is about to lock Consumer.mu,
	// which the test holds until the keeper's goroutine told the job.
	jt.consumer.mu.Lock()
	var j *job
	for j = range jt.consumer.jobs {
	}
	jt.consumer.abandoning = func() {
		answer(jt.stream, false, ReasonLeaseExpired, "h1")
		<-j.ctx.Done()
		jt.consumer.mu.Unlock()
	}
	jt.stop()
}

// errGaveUp is a handler's error after its lease was lost or refused.
var errGaveUp = errors.New("gave up")

// stopsOnLoss is a handler that checkpoints, hears of its lease's loss
// through its ctx, and fails; checkpointed yields what Checkpoint returned.
func stopsOnLoss(checkpointed chan<- error) Handler {
	return func(ctx context.Context, d *Delivery) error {
		checkpointed <- d.Checkpoint(ctx, []byte("1"))
		<-ctx.Done()
		return errGaveUp
	}
}

func TestAFailureAfterARefusedRenewalIsReportedAndStillSent(t *testing.T) {
	checkpointed := make(chan error, 1)
	jt := startJobs(t, stopsOnLoss(checkpointed))
	jt.startJob("h1")
	jt.nextRequest(jt.stream) // the checkpoint
	answer(jt.stream, false, ReasonLeaseLimitExceeded, "h1")
	expectLeaseLost(t, <-checkpointed, ReasonLeaseLimitExceeded)
	// The handler's error, and not the refusal, which the handler heard of.
	if err := jt.nextReport(); err != errGaveUp {
		t.Fatalf("reported %v, want the handler's error with its delivery", err)
	}
	request := jt.nextRequest(jt.stream)
	if len(request.Leases) != 1 || !request.Leases[0].Failed {
		t.Fatalf("sent %v, want the failed renewal", request)
	}
	answer(jt.stream, false, ReasonReleased, "h1")
	jt.consumer.work.Wait()
	jt.expectNoReport()
}

func TestAFailureAfterALossIsReportedAndNotSent(t *testing.T) {
	checkpointed := make(chan error, 1)
	jt := startJobs(t, stopsOnLoss(checkpointed))
	jt.startJob("h1")
	jt.nextRequest(jt.stream) // the checkpoint
	answer(jt.stream, false, ReasonLeaseSuperseded, "h1")
	expectLeaseLost(t, <-checkpointed, ReasonLeaseSuperseded)
	if err := jt.nextReport(); err != errGaveUp {
		t.Fatalf("reported %v, want the handler's error with its delivery", err)
	}
	jt.consumer.work.Wait()
	expectNothingSent(t, jt.stream)
	jt.expectNoReport()
}

func TestAFailureTheBrokerRefusesIsReported(t *testing.T) {
	jt := startJobs(t, func(context.Context, *Delivery) error {
		return RetryLater(13 * time.Hour)
	})
	jt.startJob("h1")
	var later *RetryLaterError
	if err := jt.nextReport(); !errors.As(err, &later) {
		t.Fatalf("reported %v, want the handler's error", err)
	}
	request := jt.nextRequest(jt.stream)
	if !request.Leases[0].Failed || request.Leases[0].VisibilityTimeout.AsDuration() != 13*time.Hour {
		t.Fatalf("sent %v", request)
	}
	answer(jt.stream, false, ReasonInvalidArgument, "h1")
	expectLeaseLost(t, jt.nextReport(), ReasonInvalidArgument)
	jt.consumer.work.Wait()
}

func TestADeleteNoBrokerAnswersIsTriedAgainWhileTheLeaseIsHeld(t *testing.T) {
	// Renewed every 400 to 500 ms.
	jt := startJobsWith(t, 1500*time.Millisecond, func(context.Context, *Delivery) error { return nil })
	unavailable := &Error{Code: codes.Unavailable, Reason: "QUEUE_MOVING", Message: "moving"}
	attempts := make(chan time.Duration, 10) // each attempt's time to its deadline
	renewed := make(chan struct{})
	calls := 0
	jt.consumer.deleteMessage = func(ctx context.Context, _, _ string) (DeleteOutcome, error) {
		calls++
		deadline, _ := ctx.Deadline()
		attempts <- time.Until(deadline)
		if calls == 1 {
			return DeleteOutcomeUnspecified, unavailable
		}
		<-renewed
		return DeleteOutcomeDeleted, nil
	}
	nextAttempt := func() {
		t.Helper()
		select {
		case left := <-attempts:
			if left <= 0 || left > deleteTimeout {
				t.Fatalf("a delete attempt had %v to its deadline, want its own %v", left, deleteTimeout)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no delete attempt")
		}
	}
	jt.startJob("h1")
	nextAttempt()
	nextAttempt()
	// At most one request is in flight, and this test answers each once it
	// read it: the second renewal was sent after the first failed attempt.
	for i := 0; i < 2; i++ {
		request := jt.nextRequest(jt.stream)
		if len(request.Leases) != 1 || request.Leases[0].ReceiptHandle != "h1" || request.Leases[0].Failed {
			t.Fatalf("sent %v, want a renewal of h1", request)
		}
		answer(jt.stream, true, "", "h1")
	}
	close(renewed)
	jt.consumer.work.Wait()
	if err := jt.nextReport(); !errors.Is(err, unavailable) {
		t.Fatalf("reported %v, want the failed delete", err)
	}
	jt.expectNoReport()
}

func TestAStopCancelsTheDeleteUnderWay(t *testing.T) {
	jt := startJobs(t, func(context.Context, *Delivery) error { return nil })
	deleting := make(chan struct{})
	returned := make(chan struct{})
	jt.consumer.deleteMessage = func(ctx context.Context, _, _ string) (DeleteOutcome, error) {
		close(deleting)
		<-ctx.Done()
		close(returned)
		return DeleteOutcomeUnspecified, FromGRPC(ctx.Err())
	}
	jt.startJob("h1")
	<-deleting
	jt.stop()
	select {
	case <-returned:
	default:
		t.Fatal("the stop returned with the delete still under way")
	}
	jt.expectNoReport()
}

func TestADeleteTheBrokerRefusesIsNotTriedAgain(t *testing.T) {
	jt := startJobs(t, func(context.Context, *Delivery) error { return nil })
	superseded := &Error{Code: codes.FailedPrecondition, Reason: ReasonLeaseSuperseded, Message: "received again"}
	calls := 0
	jt.consumer.deleteMessage = func(context.Context, string, string) (DeleteOutcome, error) {
		calls++
		return DeleteOutcomeUnspecified, superseded
	}
	jt.startJob("h1")
	jt.consumer.work.Wait()
	if err := jt.nextReport(); !errors.Is(err, superseded) || calls != 1 {
		t.Fatalf("reported %v after %d deletes, want the refusal after one", err, calls)
	}
}

func TestADeleteThatCameAfterADeadLetterMoveIsReportedAsALostLease(t *testing.T) {
	for _, outcome := range []DeleteOutcome{DeleteOutcomeDeadLettered, DeleteOutcomeReceivedAgain} {
		jt := startJobs(t, func(context.Context, *Delivery) error { return nil })
		jt.consumer.deleteMessage = func(context.Context, string, string) (DeleteOutcome, error) {
			return outcome, nil
		}
		jt.startJob("h1")
		jt.consumer.work.Wait()
		var lost *LeaseLostError
		if err := jt.nextReport(); !errors.As(err, &lost) || lost.Reason != outcome.String() || lost.ReceiptHandle != "h1" {
			t.Fatalf("reported %v, want a lost lease %s", err, outcome)
		}
		jt.expectNoReport()
	}
}

func TestADeleteOfAMessageNoLongerHeldForAnUnknownReasonIsNotReported(t *testing.T) {
	jt := startJobs(t, func(context.Context, *Delivery) error { return nil })
	jt.consumer.deleteMessage = func(context.Context, string, string) (DeleteOutcome, error) {
		return DeleteOutcomeNoLongerHeld, nil
	}
	jt.startJob("h1")
	jt.consumer.work.Wait()
	jt.expectNoReport()
}
