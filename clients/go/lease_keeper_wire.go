package holdshelf

// The leaseKeeper's side of its stream: opening and reopening it, its
// reader and writer goroutines, the requests it sends and how their answers
// are told from notices. Everything here runs on the keeper's loop
// goroutine, except write and read.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/holdshelf/holdshelf/clients/go/holdshelfv1"
)

func (k *leaseKeeper) open() {
	k.reopenAt = time.Time{}
	if k.closed || k.absent {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	stream, err := k.options.wire.open(ctx)
	if err != nil {
		cancel()
		k.options.onError(FromGRPC(err))
		k.scheduleReopen()
		return
	}
	// Room for the request in flight, a change of flow control and the
	// half-close: the loop never waits for the writer.
	conn := &keeperConn{cancel: cancel, writes: make(chan *keeperRequest, 4)}
	k.conn = conn
	go k.write(conn, stream)
	go k.read(conn, stream)
	// A broken stream made the broker release every lease it held (or,
	// after SHUTTING_DOWN, left them); a renewal on the new stream takes each
	// back, unless another consumer received the message meanwhile (then the
	// answer says LEASE_SUPERSEDED). On Subscribe the renewals go in the
	// first request, so that they count against the new stream's credit
	// before it delivers anything.
	for _, l := range k.leases {
		if l.state == leaseHeld {
			l.due = true
		}
	}
	// Sent even when empty: the first request opens a subscription, or on
	// Heartbeat carries release_on_disconnect and its answer proves the
	// stream works (QUEUE_NOT_FOUND otherwise).
	k.pump(true)
}

func (k *leaseKeeper) write(conn *keeperConn, stream keeperStream) {
	for request := range conn.writes {
		if request == nil {
			_ = stream.closeSend()
			return
		}
		// A failed send means the stream is over: the reader learns why.
		if stream.send(request) != nil {
			return
		}
	}
}

func (k *leaseKeeper) read(conn *keeperConn, stream keeperStream) {
	for {
		resp, err := stream.recv()
		select {
		case k.events <- streamEvent{conn: conn, resp: resp, err: err}:
		case <-k.done:
			return
		}
		if err != nil {
			return
		}
	}
}

// pump sends one request with every renewal, checkpoint, release and ack
// due, unless a request the broker answers is in flight; a change of flow
// control goes at once all the same (it is never answered).
func (k *leaseKeeper) pump(first bool) {
	if k.conn == nil || k.closed {
		return
	}
	request := &keeperRequest{first: first}
	if first || k.flowChanged {
		request.flow = k.flow
		k.flowChanged = false
	}
	if k.inFlight == nil {
		entries := k.takeDue()
		acks := k.takeAcks()
		if len(entries) > 0 || len(acks) > 0 || (first && k.options.wire.answersEveryRequest()) {
			now := time.Now()
			k.inFlight = &inFlightRequest{entries: entries, acks: acks, sentAt: now, stallAt: now.Add(k.options.stall)}
		}
		for _, e := range entries {
			request.renewals = append(request.renewals, k.renewal(e))
		}
		for _, a := range acks {
			request.acks = append(request.acks, a.handle)
		}
	}
	if !first && request.flow == nil && len(request.renewals) == 0 && len(request.acks) == 0 {
		k.checkIdle()
		return
	}
	k.conn.writes <- request
}

// takeDue takes every renewal, checkpoint and release due, up to the
// protocol's limit, into flight.
func (k *leaseKeeper) takeDue() []entry {
	var entries []entry
	for _, l := range k.leases {
		if len(entries) == maxRenewals {
			break
		}
		if !l.due && l.checkpoint == nil && l.release == nil {
			continue
		}
		entries = append(entries, entry{lease: l, checkpoint: l.checkpoint, release: l.release})
		l.due, l.checkpoint, l.release, l.inFlight = false, nil, nil, true
	}
	return entries
}

// renewal is what an entry asks of the broker.
func (k *leaseKeeper) renewal(e entry) *holdshelfv1.LeaseRenewal {
	renewal := &holdshelfv1.LeaseRenewal{ReceiptHandle: e.lease.handle, VisibilityTimeout: durationToWire(k.options.visibility)}
	if e.release != nil {
		renewal.VisibilityTimeout = durationToWire(e.release.delay)
		renewal.Failed = e.release.failed
	}
	if e.checkpoint != nil {
		renewal.Checkpoint = e.checkpoint.bytes
	}
	return renewal
}

func (k *leaseKeeper) onResponse(resp *keeperResponse) {
	// A stream that answers works: the next break is retried soon.
	k.responded = true
	k.attempt = 0
	if len(resp.messages) > 0 {
		k.deliver(resp.messages, resp.receivedAt)
	}
	request := k.inFlight
	if request != nil && answersRequest(request, resp) {
		k.inFlight = nil
		applyAcks(request.acks, resp.acks)
		for i, e := range request.entries {
			k.applyAnswer(e, resp.leases[i], request.sentAt)
		}
		k.checkIdle()
		return
	}
	for _, state := range resp.leases {
		l := k.leases[state.ReceiptHandle]
		// A lease in flight is decided by its answer: the renewal may have
		// taken it back after the notice was sent.
		if !state.Held && l != nil && !l.inFlight {
			k.lose(l, state.Reason)
		}
	}
}

// answersRequest tells the answer to the request in flight from an
// unsolicited notice or a response of deliveries alone: the broker answers
// in request order, one AckResult per ack and one state per renewal in the
// request's order, and an empty Heartbeat request gets an empty answer,
// which no notice ever is. (When every lease of a request of renewals alone
// expired just before the broker read it, the notice naming exactly them
// may be taken for the answer: it is right about the leases all the same.)
func answersRequest(request *inFlightRequest, resp *keeperResponse) bool {
	if len(request.entries) != len(resp.leases) || len(request.acks) != len(resp.acks) {
		return false
	}
	if len(request.entries) == 0 && len(request.acks) == 0 && len(resp.messages) > 0 {
		return false
	}
	for i, e := range request.entries {
		if resp.leases[i].ReceiptHandle != e.lease.handle {
			return false
		}
	}
	for i, a := range request.acks {
		if resp.acks[i].ReceiptHandle != a.handle {
			return false
		}
	}
	return true
}

func (k *leaseKeeper) applyAnswer(e entry, state *holdshelfv1.LeaseState, sentAt time.Time) {
	l := e.lease
	l.inFlight = false
	stored := state.Held || (e.release != nil && state.Reason == ReasonReleased)
	var notStored error
	if !stored {
		notStored = &LeaseLostError{ReceiptHandle: l.handle, Reason: state.Reason}
	}
	// Answered before the holder hears of a loss, so that a Checkpoint woken
	// by its cancelled context finds its answer there.
	if e.checkpoint != nil {
		settle(e.checkpoint.waiters, notStored)
	}
	if e.release != nil {
		k.ended(l, e.release, state.Reason, notStored)
		return
	}
	if !state.Held {
		if refusedRenewal(state.Reason) {
			k.refuse(l, state.Reason)
		} else {
			k.lose(l, state.Reason)
		}
	}
	if l.state == leaseHeld {
		k.schedule(l, sentAt)
	}
}

// ended applies the answer to an ending; notStored is nil once the broker
// ended the lease as asked. A refused ending (a retry delay over 12 h, say)
// changed nothing: the lease stays, unrenewed, until its deadline, and an
// ending queued behind it goes next. Any other answer means the lease is no
// longer ours.
func (k *leaseKeeper) ended(l *lease, ending *pendingRelease, reason string, notStored error) {
	if notStored != nil && refusedRenewal(reason) && l.state != leaseGone {
		l.endErr = notStored
		l.state = leaseRefused
		if l.release != nil {
			l.state = leaseReleasing
		}
	} else {
		k.forget(l, released(l.handle))
	}
	// Its holder reports an ending that did not end the message as asked.
	settle(ending.waiters, notStored)
}

func (k *leaseKeeper) onStreamEnd(err error) {
	conn := k.conn
	k.conn = nil
	conn.cancel()
	close(conn.writes)
	k.requeueInFlight()
	clean := errors.Is(err, io.EOF)
	if !clean && !k.responded && k.options.onUnimplemented != nil && status.Code(err) == codes.Unimplemented {
		// Nothing was ever held on such a stream: there is nothing to give back.
		k.absent = true
		k.options.onUnimplemented()
		return
	}
	if !clean {
		failure := FromGRPC(err)
		if IsReason(failure, ReasonQueueNotFound) {
			for _, l := range k.leases {
				k.lose(l, ReasonQueueNotFound)
			}
		}
		if refusesConsumer(failure) {
			// The Consumer stops on such an end, and no stream will carry these
			// acks again: their handlers' slots must not wait for the close.
			for _, a := range k.acks {
				settle(a.waiters, failure)
			}
			k.acks = nil
		}
	}
	now := time.Now()
	for _, l := range k.leases {
		if !now.Before(l.expiresAt) {
			k.lose(l, ReasonLeaseExpired)
		}
	}
	if k.closing && k.endWaiter != nil {
		close(k.endWaiter)
		k.endWaiter = nil
	}
	if clean {
		if k.closing {
			return
		}
		err = fmt.Errorf("holdshelf: the broker ended the %s stream", k.options.wire.name())
	}
	k.options.onError(FromGRPC(err))
	if !k.closing || k.hasPending() {
		k.scheduleReopen()
	}
}

func (k *leaseKeeper) scheduleReopen() {
	if k.closed {
		return
	}
	k.reopenAt = time.Now().Add(reconnectDelay(k.attempt, jitter()))
	k.attempt++
}

func (k *leaseKeeper) breakStream(err error) {
	if k.conn == nil {
		return
	}
	k.onStreamEnd(err)
}

// requeueInFlight puts back what an unanswered request carried: it goes
// again on the next stream.
func (k *leaseKeeper) requeueInFlight() {
	entries, acks := k.takeInFlight()
	// Before the acks asked for since, in the order asked.
	k.acks = append(acks, k.acks...)
	for _, e := range entries {
		l := e.lease
		if l.state == leaseGone {
			settleAll(e.checkpoint, e.release, l.endErr)
			continue
		}
		if e.checkpoint != nil {
			// A newer checkpoint queued meanwhile wins; its answer settles both.
			if l.checkpoint == nil {
				l.checkpoint = e.checkpoint
			} else {
				l.checkpoint.waiters = append(e.checkpoint.waiters, l.checkpoint.waiters...)
			}
		}
		if e.release != nil {
			// The ending in flight was asked for first, and wins (as in end);
			// one queued meanwhile only adds its waiters.
			if l.release != nil {
				e.release.waiters = append(e.release.waiters, l.release.waiters...)
			}
			l.release = e.release
		}
		if l.state == leaseHeld {
			l.due = true
		}
	}
}

// takeInFlight takes the unanswered request out of flight (its answer will
// not come) and returns its entries and acks.
func (k *leaseKeeper) takeInFlight() ([]entry, []*pendingAck) {
	request := k.inFlight
	if request == nil {
		return nil, nil
	}
	k.inFlight = nil
	for _, e := range request.entries {
		e.lease.inFlight = false
	}
	return request.entries, request.acks
}
