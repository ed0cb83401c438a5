package holdshelf

// Run against a fake broker whose GetQueue fails: a refusal for good ends
// Run at once, a transient failure is retried.

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/holdshelf/holdshelf/clients/go/holdshelfv1"
)

// failingQueueBroker is fakeBroker whose GetQueue fails with failures, one
// per call, before it answers.
type failingQueueBroker struct {
	fakeBroker
	failures []error
}

func (b *failingQueueBroker) GetQueue(ctx context.Context, r *holdshelfv1.GetQueueRequest) (*holdshelfv1.GetQueueResponse, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.failures) > 0 {
		err := b.failures[0]
		b.failures = b.failures[1:]
		return nil, err
	}
	return b.fakeBroker.GetQueue(ctx, r)
}

func TestRunReturnsARefusalForGoodAtOnceWithoutReportingIt(t *testing.T) {
	for _, refused := range []struct {
		code   codes.Code
		reason string
	}{
		{codes.NotFound, ReasonQueueNotFound},
		{codes.PermissionDenied, ReasonPermissionDenied},
		{codes.Unauthenticated, ReasonTokenInvalid},
	} {
		b := &failingQueueBroker{failures: []error{refusal(refused.code, refused.reason)}}
		consumer, err := NewConsumer(serve(t, b), "q", ignore, ConsumerOptions{
			OnError: func(err error, _ *Delivery) { t.Errorf("reported %v", err) },
		})
		if err != nil {
			t.Fatal(err)
		}
		ran := make(chan error, 1)
		go func() { ran <- consumer.Run(context.Background()) }()
		select {
		case err := <-ran:
			if !IsReason(err, refused.reason) {
				t.Errorf("Run returned %v, want %s", err, refused.reason)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("Run did not return on %s", refused.reason)
		}
	}
}

func TestRunRetriesAQueueMovingAndConsumesOnceItIsThere(t *testing.T) {
	b := &failingQueueBroker{fakeBroker: fakeBroker{noGroup: true}, failures: []error{
		refusal(codes.Unavailable, ReasonQueueMoving),
		refusal(codes.Unavailable, ReasonQueueMoving),
	}}
	reported := make(chan error, 10)
	handled := make(chan string, 2)
	consumer, err := NewConsumer(serve(t, b), "q", func(_ context.Context, d *Delivery) error {
		handled <- d.Message.ID
		return nil
	}, ConsumerOptions{OnError: func(err error, _ *Delivery) { reported <- err }})
	if err != nil {
		t.Fatal(err)
	}
	ran := make(chan error, 1)
	go func() { ran <- consumer.Run(context.Background()) }()
	for i := 0; i < 2; i++ {
		select {
		case <-handled:
		case <-time.After(10 * time.Second):
			t.Fatal("the messages were not handled after the queue moved")
		}
	}
	consumer.Stop()
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	close(reported)
	var moving int
	for err := range reported {
		if !IsReason(err, ReasonQueueMoving) {
			t.Errorf("reported %v", err)
		}
		moving++
	}
	if moving != 2 {
		t.Errorf("reported %d QUEUE_MOVING failures, want 2", moving)
	}
}
