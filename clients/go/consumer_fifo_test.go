package holdshelf

// The Consumer on a FIFO queue, on a keeper of fake streams: one receive may
// lease several messages of a group, in order, and they must be handled one
// at a time, in that order, while other groups run beside them.

import (
	"context"
	"errors"
	"io"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/holdshelf/holdshelf/clients/go/holdshelfv1"
)

// fifoTest is a Consumer whose jobs the test starts as one receive would,
// with a broker that answers every Heartbeat request at once.
type fifoTest struct {
	t        *testing.T
	keeper   *leaseKeeper
	consumer *Consumer

	mu       sync.Mutex
	deleted  []string
	endings  map[string]string // handle: "failed" or "released"
	reported []error
}

func startFIFO(t *testing.T, handler Handler) *fifoTest {
	kt := startKeeper(t, time.Minute)
	ft := &fifoTest{t: t, keeper: kt.keeper, endings: make(map[string]string)}
	go ft.playBroker(kt.nextStream())
	ft.consumer = &Consumer{
		handler: handler,
		options: ConsumerOptions{OnError: func(err error, _ *Delivery) {
			ft.mu.Lock()
			ft.reported = append(ft.reported, err)
			ft.mu.Unlock()
		}},
		deleteMessage: func(_ context.Context, _, handle string) (DeleteOutcome, error) {
			ft.mu.Lock()
			ft.deleted = append(ft.deleted, handle)
			ft.mu.Unlock()
			return DeleteOutcomeDeleted, nil
		},
		slots:  make(chan struct{}, 10),
		jobs:   make(map[*job]struct{}),
		values: context.Background(),
	}
	return ft
}

// playBroker answers each request, in one response with a state per renewal
// in order: renewals held, endings not (RELEASED), which it records. It ends
// the stream when the keeper half-closes it.
func (ft *fifoTest) playBroker(f *fakeStream) {
	for {
		select {
		case request := <-f.sent:
			resp := &holdshelfv1.HeartbeatResponse{}
			for _, renewal := range request.Leases {
				state := &holdshelfv1.LeaseState{ReceiptHandle: renewal.ReceiptHandle, Held: true}
				switch {
				case renewal.Failed:
					ft.ending(renewal.ReceiptHandle, "failed")
				case renewal.VisibilityTimeout != nil && renewal.VisibilityTimeout.AsDuration() == 0:
					ft.ending(renewal.ReceiptHandle, "released")
				default:
					resp.Leases = append(resp.Leases, state)
					continue
				}
				state.Held, state.Reason = false, ReasonReleased
				resp.Leases = append(resp.Leases, state)
			}
			f.responses <- resp
		case <-f.halfClosed:
			f.end <- io.EOF
			return
		}
	}
}

func (ft *fifoTest) ending(handle, how string) {
	ft.mu.Lock()
	ft.endings[handle] = how
	ft.mu.Unlock()
}

// receive starts jobs for messages as one receive's answer, chaining each
// group's as the receive loop does.
func (ft *fifoTest) receive(messages ...*Message) {
	lastOfGroup := make(map[string]<-chan bool)
	for _, m := range messages {
		ft.consumer.slots <- struct{}{}
		lastOfGroup[m.MessageGroupID] = ft.consumer.start(m, ft.keeper, time.Now(), lastOfGroup[m.MessageGroupID])
	}
}

func fifoMessage(handle, group string) *Message {
	return &Message{ReceiptHandle: handle, MessageGroupID: group}
}

func TestAGroupsMessagesAreHandledOneAtATimeInOrderBesideOtherGroups(t *testing.T) {
	var mu sync.Mutex
	var handled []string
	running := make(map[string]int)
	bDone := make(chan struct{})
	ft := startFIFO(t, func(ctx context.Context, d *Delivery) error {
		group := d.Message.MessageGroupID
		mu.Lock()
		running[group]++
		overlap := running[group] > 1
		mu.Unlock()
		if overlap {
			t.Errorf("%s ran beside another message of group %s", d.Message.ReceiptHandle, group)
		}
		if d.Message.ReceiptHandle == "a0" {
			// Group b runs while group a's first message is still in its handler.
			select {
			case <-bDone:
			case <-time.After(5 * time.Second):
				t.Error("group b did not run while group a was busy")
			}
		}
		mu.Lock()
		running[group]--
		handled = append(handled, d.Message.ReceiptHandle)
		mu.Unlock()
		if d.Message.ReceiptHandle == "b0" {
			close(bDone)
		}
		return nil
	})
	ft.receive(fifoMessage("a0", "a"), fifoMessage("a1", "a"), fifoMessage("b0", "b"), fifoMessage("a2", "a"))
	ft.consumer.work.Wait()
	mu.Lock()
	defer mu.Unlock()
	ft.mu.Lock()
	defer ft.mu.Unlock()
	var groupA []string
	for _, handle := range handled {
		if handle != "b0" {
			groupA = append(groupA, handle)
		}
	}
	if want := []string{"a0", "a1", "a2"}; !reflect.DeepEqual(groupA, want) {
		t.Fatalf("group a handled as %v, want %v", groupA, want)
	}
	if len(ft.deleted) != 4 || len(ft.endings) != 0 || len(ft.reported) != 0 {
		t.Fatalf("deleted %v, ended %v, reported %v; want four deletes only", ft.deleted, ft.endings, ft.reported)
	}
}

func TestTheMessagesBehindAFailedOneAreGivenBackUnhandled(t *testing.T) {
	failure := errors.New("a1 fails")
	var mu sync.Mutex
	var handled []string
	ft := startFIFO(t, func(ctx context.Context, d *Delivery) error {
		mu.Lock()
		handled = append(handled, d.Message.ReceiptHandle)
		mu.Unlock()
		if d.Message.ReceiptHandle == "a1" {
			return failure
		}
		return nil
	})
	ft.receive(fifoMessage("a0", "a"), fifoMessage("a1", "a"), fifoMessage("a2", "a"), fifoMessage("a3", "a"), fifoMessage("b0", "b"))
	ft.consumer.work.Wait()
	mu.Lock()
	defer mu.Unlock()
	ft.mu.Lock()
	defer ft.mu.Unlock()
	for _, handle := range handled {
		if handle == "a2" || handle == "a3" {
			t.Fatalf("handled %v: a2 and a3 would have overtaken the failed a1", handled)
		}
	}
	// a1 failed (its retry backoff applies); a2 and a3 were released at once, to come back behind it.
	if want := map[string]string{"a1": "failed", "a2": "released", "a3": "released"}; !reflect.DeepEqual(ft.endings, want) {
		t.Fatalf("ended %v, want %v", ft.endings, want)
	}
	if len(ft.deleted) != 2 || len(ft.reported) != 1 || !errors.Is(ft.reported[0], failure) {
		t.Fatalf("deleted %v, reported %v; want a0 and b0 deleted and the failure reported", ft.deleted, ft.reported)
	}
}
