package holdshelf

// The handler's context: Run's values without Run's cancellation.

import (
	"context"
	"reflect"
	"testing"
	"time"
)

type traceKey struct{}

func TestAHandlerGetsRunsValuesAndFinishesAfterRunsContextIsCancelled(t *testing.T) {
	b := &fakeBroker{noGroup: true}
	started := make(chan context.Context, 2)
	finish := make(chan struct{})
	consumer, err := NewConsumer(serve(t, b), "q", func(ctx context.Context, d *Delivery) error {
		if d.Message.ID != "m1" {
			return nil
		}
		started <- ctx
		<-finish
		return ctx.Err() // nil: the stop did not cancel it
	}, ConsumerOptions{OnError: func(err error, _ *Delivery) { t.Errorf("reported %v", err) }})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithTimeout(context.WithValue(context.Background(), traceKey{}, "span-1"), time.Minute)
	ran := make(chan error, 1)
	go func() { ran <- consumer.Run(runCtx) }()
	var handlerCtx context.Context
	select {
	case handlerCtx = <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the handler did not start")
	}
	if got := handlerCtx.Value(traceKey{}); got != "span-1" {
		t.Errorf("the handler's context carries %v, want Run's value", got)
	}
	if _, ok := handlerCtx.Deadline(); ok {
		t.Error("the handler's context has Run's deadline")
	}
	cancel()
	select {
	case <-handlerCtx.Done():
		t.Fatal("cancelling Run's context cancelled the running handler")
	case <-time.After(100 * time.Millisecond):
	}
	close(finish)
	select {
	case err := <-ran:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return once the handler finished")
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !reflect.DeepEqual(b.acks, []string{"m1"}) {
		t.Errorf("acks = %v, want the finished handler's message deleted", b.acks)
	}
}
