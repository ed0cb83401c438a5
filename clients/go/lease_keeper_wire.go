package holdshelf

// The leaseKeeper's side of the Heartbeat stream: opening and reopening it,
// its reader and writer goroutines, the requests it sends and how their
// answers are told from notices. Everything here runs on the keeper's loop
// goroutine, except write and read.

import (
	"context"
	"errors"
	"io"
	"time"

	"holdshelf/clients/go/holdshelfv1"
)

func (k *leaseKeeper) open() {
	k.reopenAt = time.Time{}
	if k.closed {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	stream, err := k.options.open(ctx)
	if err != nil {
		cancel()
		k.options.onError(FromGRPC(err))
		k.scheduleReopen()
		return
	}
	conn := &heartbeatConn{cancel: cancel, writes: make(chan *holdshelfv1.HeartbeatRequest, 2)}
	k.conn = conn
	go k.write(conn, stream)
	go k.read(conn, stream)
	// A broken stream made the broker release every lease it tracked (or,
	// after SHUTTING_DOWN, left them); a renewal on the new stream takes each
	// back, unless another consumer received the message meanwhile (then the
	// answer says LEASE_SUPERSEDED).
	for _, l := range k.leases {
		if l.state == leaseHeld {
			l.due = true
		}
	}
	// Sent even when empty: the first request carries release_on_disconnect,
	// and its answer proves the stream works (QUEUE_NOT_FOUND otherwise).
	k.pump(true)
}

func (k *leaseKeeper) write(conn *heartbeatConn, stream holdshelfv1.QueueService_HeartbeatClient) {
	for request := range conn.writes {
		if request == nil {
			_ = stream.CloseSend()
			return
		}
		// A failed send means the stream is over: the reader learns why.
		if stream.Send(request) != nil {
			return
		}
	}
}

func (k *leaseKeeper) read(conn *heartbeatConn, stream holdshelfv1.QueueService_HeartbeatClient) {
	for {
		resp, err := stream.Recv()
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

// pump sends one request with every renewal, checkpoint and release due,
// unless one is in flight.
func (k *leaseKeeper) pump(evenIfEmpty bool) {
	if k.conn == nil || k.inFlight != nil || k.closed {
		return
	}
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
	if len(entries) == 0 && !evenIfEmpty {
		k.checkIdle()
		return
	}
	now := time.Now()
	k.inFlight = &inFlightRequest{entries: entries, sentAt: now, stallAt: now.Add(k.options.stall)}
	request := &holdshelfv1.HeartbeatRequest{Queue: k.options.queue, ReleaseOnDisconnect: true}
	for _, e := range entries {
		renewal := &holdshelfv1.LeaseRenewal{ReceiptHandle: e.lease.handle, VisibilityTimeout: durationToWire(k.options.visibility)}
		if e.release != nil {
			renewal.VisibilityTimeout = durationToWire(e.release.delay)
			renewal.Failed = e.release.failed
		}
		if e.checkpoint != nil {
			renewal.Checkpoint = e.checkpoint.bytes
		}
		request.Leases = append(request.Leases, renewal)
	}
	k.conn.writes <- request
}

func (k *leaseKeeper) onResponse(states []*holdshelfv1.LeaseState) {
	request := k.inFlight
	if request != nil && answersRequest(request.entries, states) {
		k.inFlight = nil
		k.attempt = 0
		for i, e := range request.entries {
			k.applyAnswer(e, states[i], request.sentAt)
		}
		return
	}
	for _, state := range states {
		l := k.leases[state.ReceiptHandle]
		// A lease in flight is decided by its answer: the renewal may have
		// taken it back after the notice was sent.
		if !state.Held && l != nil && !l.inFlight {
			k.lose(l, state.Reason)
		}
	}
}

// answersRequest tells the answer to the request in flight from an
// unsolicited notice: the broker answers in request order, one state per
// renewal in the renewal's order, and an empty request gets an empty answer,
// which no notice ever is. (When every lease of the request expired just
// before the broker read it, the notice naming exactly them may be taken
// for the answer: it is right about the leases all the same.)
func answersRequest(entries []entry, states []*holdshelfv1.LeaseState) bool {
	if len(entries) != len(states) {
		return false
	}
	for i, e := range entries {
		if states[i].ReceiptHandle != e.lease.handle {
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
	if !clean && IsReason(FromGRPC(err), ReasonQueueNotFound) {
		for _, l := range k.leases {
			k.lose(l, ReasonQueueNotFound)
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
		err = errors.New("holdshelf: the broker ended the Heartbeat stream")
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
	for _, e := range k.takeInFlight() {
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
// not come) and returns its entries.
func (k *leaseKeeper) takeInFlight() []entry {
	request := k.inFlight
	if request == nil {
		return nil
	}
	k.inFlight = nil
	for _, e := range request.entries {
		e.lease.inFlight = false
	}
	return request.entries
}
