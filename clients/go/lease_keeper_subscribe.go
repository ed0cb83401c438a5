package holdshelf

// The leaseKeeper's part that only a Subscribe stream has: deliveries, whose
// leases it holds as they arrive; acks; and the pause of deliveries when
// the Consumer stops. Runs on the keeper's loop goroutine, except the
// methods that send it commands.

import (
	"errors"
	"fmt"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/holdshelf/holdshelf/clients/go/holdshelfv1"
)

// ack deletes the message on the stream: the ack goes in the next request,
// again on a new stream after a break, until the broker answers it. The
// channel yields nil once the message is deleted (or was already gone), an
// *Error with the AckResult's reason if the broker refused it, a
// *LeaseLostError (DEAD_LETTERED, RECEIVED_AGAIN) if it came too late, the lease's
// RELEASED *LeaseLostError if a stop gave the message back first, or an
// error if the keeper closed before the answer. Renewals stop at once; an
// ack is sent even after the lease was lost, since the message is deleted
// all the same if nobody received it since.
func (h *heldLease) ack() <-chan error {
	waiter := make(chan error, 1)
	k, l := h.keeper, h.lease
	if !k.do(func() {
		var lost *LeaseLostError
		if l.state == leaseReleasing || (errors.As(l.endErr, &lost) && lost.Reason == ReasonReleased) {
			waiter <- l.endErr
			return
		}
		k.acks = append(k.acks, &pendingAck{handle: l.handle, waiters: []chan error{waiter}})
		// MESSAGE_NOT_FOUND is what the broker answers a checkpoint sent after
		// the ack.
		k.forget(l, &LeaseLostError{ReceiptHandle: l.handle, Reason: ReasonMessageNotFound})
	}) {
		waiter <- fmt.Errorf("holdshelf: the lease keeper closed before the ack of %s was sent", l.handle)
	}
	return waiter
}

// pause asks the broker for no more deliveries (max_outstanding_messages 0)
// and gives back, from now on, any that still arrive: the Consumer is
// stopping.
func (k *leaseKeeper) pause() {
	k.do(func() {
		k.paused = true
		if k.flow != nil {
			k.flow = &holdshelfv1.FlowControl{MaxOutstandingMessages: 0, MaxOutstandingBytes: k.flow.MaxOutstandingBytes}
			k.flowChanged = true
		}
	})
}

// deliver holds the leases of a response's deliveries, which the stream
// already holds (so they are not named at once, only renewed in time), and
// hands them to the Consumer; after a pause it releases them instead.
func (k *leaseKeeper) deliver(messages []*holdshelfv1.ReceivedMessage, at time.Time) {
	var handed []delivered
	for _, wire := range messages {
		if k.closed {
			// Pushed before the broker read the half-close: the stream can no
			// longer carry its release.
			k.late = append(k.late, wire.ReceiptHandle)
			continue
		}
		l := &lease{handle: wire.ReceiptHandle}
		k.leases[l.handle] = l
		k.schedule(l, at)
		if k.paused {
			l.state = leaseReleasing
			l.endErr = released(l.handle)
			l.release = &pendingRelease{delay: Duration(0)}
			continue
		}
		handed = append(handed, delivered{message: messageFromWire(wire), lease: &heldLease{keeper: k, lease: l}})
	}
	if len(handed) > 0 && k.options.onDelivery != nil {
		k.options.onDelivery(handed)
	}
}

// lateDeliveries are the receipt handles of the deliveries that came after
// a pause and whose release the stream never carried (they came after close
// half-closed it, or just before), for the caller to release otherwise;
// read once close has returned.
func (k *leaseKeeper) lateDeliveries() []string {
	<-k.done
	return k.late
}

// takeAcks takes up to maxAcks pending acks for a request.
func (k *leaseKeeper) takeAcks() []*pendingAck {
	n := len(k.acks)
	if n > maxAcks {
		n = maxAcks
	}
	taken := k.acks[:n:n]
	k.acks = k.acks[n:]
	return taken
}

// applyAcks settles each ack of an answered request with its AckResult: an
// ack that came after the message was dead-lettered or received again
// settles with a *LeaseLostError.
func applyAcks(acks []*pendingAck, results []*holdshelfv1.AckResult) {
	for i, a := range acks {
		err := lostBeforeDelete(a.handle, deleteOutcomeFromWire(results[i].DeleteOutcome))
		if reason := results[i].Reason; reason != "" {
			err = ackRefused(reason)
		}
		settle(a.waiters, err)
	}
}

// ackRefused is a refused ack as the unary Delete would have failed.
func ackRefused(reason string) error {
	code := codes.FailedPrecondition // LEASE_SUPERSEDED
	if reason == ReasonReceiptHandleInvalid {
		code = codes.InvalidArgument
	}
	return &Error{Code: code, Reason: reason, Message: "the broker refused the ack"}
}
