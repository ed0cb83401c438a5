package holdshelf

// The Consumer's per-message work on a keeper of fake streams: no broker,
// and so no receive loop; deletes go to a function the test plays.

import (
	"context"
	"errors"
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
	kt := startKeeper(t, time.Minute)
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
		options: ConsumerOptions{OnError: func(err error, _ *Delivery) { jt.reported <- err }},
		slots:   make(chan struct{}, 1),
		jobs:    make(map[*job]struct{}),
	}
	return jt
}

// startJob starts the handler on a message, as the receive loop would, and
// answers the renewal that names its lease.
func (jt *jobsTest) startJob(handle string) {
	jt.consumer.slots <- struct{}{}
	jt.consumer.start(&Message{ReceiptHandle: handle}, jt.keeper, time.Now())
	jt.nextRequest(jt.stream)
	answer(jt.stream, true, "", handle)
	close(jt.named)
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
	// The stop waits for Consumer.mu while the keeper's goroutine tells the
	// job of its loss; the stop gets the lock first, as it asked first.
	jt.consumer.mu.Lock()
	stopped := make(chan struct{})
	go func() {
		jt.consumer.shutdown(jt.keeper)
		close(stopped)
	}()
	time.Sleep(20 * time.Millisecond)
	answer(jt.stream, false, ReasonLeaseExpired, "h1")
	time.Sleep(20 * time.Millisecond)
	jt.consumer.mu.Unlock()
	go func() {
		<-jt.stream.halfClosed
		jt.stream.end <- io.EOF
	}()
	select {
	case <-stopped:
	case <-time.After(3 * time.Second):
		t.Fatal("the stop deadlocked with the loss")
	}
}

func TestAFailureAfterARefusedRenewalIsReportedAndStillSent(t *testing.T) {
	jt := startJobs(t, func(ctx context.Context, d *Delivery) error {
		err := d.Checkpoint(ctx, []byte("1"))
		<-ctx.Done()
		return err
	})
	jt.startJob("h1")
	jt.nextRequest(jt.stream) // the checkpoint
	answer(jt.stream, false, ReasonLeaseLimitExceeded, "h1")
	expectLeaseLost(t, jt.nextReport(), ReasonLeaseLimitExceeded)
	request := jt.nextRequest(jt.stream)
	if len(request.Leases) != 1 || !request.Leases[0].Failed {
		t.Fatalf("sent %v, want the failed renewal", request)
	}
	answer(jt.stream, false, ReasonReleased, "h1")
	jt.consumer.work.Wait()
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
	jt := startJobs(t, func(context.Context, *Delivery) error { return nil })
	unavailable := &Error{Code: codes.Unavailable, Reason: "QUEUE_MOVING", Message: "moving"}
	attempts := make(chan int, 10)
	calls := 0
	jt.consumer.deleteMessage = func(context.Context, string, string) error {
		calls++
		attempts <- calls
		if calls <= 2 {
			return unavailable
		}
		return nil
	}
	jt.startJob("h1")
	for want := 1; want <= 3; want++ {
		select {
		case got := <-attempts:
			if got != want {
				t.Fatalf("attempt %d, want %d", got, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no delete attempt %d", want)
		}
	}
	jt.consumer.work.Wait()
	for i := 0; i < 2; i++ {
		if err := jt.nextReport(); !errors.Is(err, unavailable) {
			t.Fatalf("reported %v, want the failed delete", err)
		}
	}
}

func TestADeleteTheBrokerRefusesIsNotTriedAgain(t *testing.T) {
	jt := startJobs(t, func(context.Context, *Delivery) error { return nil })
	superseded := &Error{Code: codes.FailedPrecondition, Reason: ReasonLeaseSuperseded, Message: "received again"}
	calls := 0
	jt.consumer.deleteMessage = func(context.Context, string, string) error {
		calls++
		return superseded
	}
	jt.startJob("h1")
	jt.consumer.work.Wait()
	if err := jt.nextReport(); !errors.Is(err, superseded) || calls != 1 {
		t.Fatalf("reported %v after %d deletes, want the refusal after one", err, calls)
	}
}
