package holdshelf

import (
	"context"
	"fmt"
	"time"

	"github.com/holdshelf/holdshelf/clients/go/holdshelfv1"
)

// The protocol's limit of renewals per Heartbeat or Subscribe request; the
// rest wait for the next request.
const maxRenewals = 1000

type leaseState int

const (
	leaseHeld leaseState = iota // renewed on schedule
	// leaseRefused: the broker refused a renewal or an ending, so it is no
	// longer renewed, but the lease keeps its deadline and its handle still
	// works until then (for a release or a delete).
	leaseRefused
	leaseReleasing // a release waits to be answered
	leaseGone      // never named again
)

// lease is one held message, owned by the keeper's loop goroutine.
type lease struct {
	handle string
	onLost func(reason string)
	state  leaseState
	endErr error // why it is no longer held: a *LeaseLostError once not leaseHeld
	// due: a renewal belongs in the next request.
	due bool
	// inFlight: named by the request in flight, whose answer decides its fate.
	inFlight   bool
	renewAt    time.Time
	expiresAt  time.Time
	checkpoint *pendingCheckpoint
	release    *pendingRelease
}

type pendingCheckpoint struct {
	bytes   []byte
	waiters []chan error
}

// pendingRelease ends a lease: a plain release that hides the message for
// delay, or a failed delivery (failed) that hides it for delay if set, else
// for the queue's retry backoff.
type pendingRelease struct {
	delay   *time.Duration
	failed  bool
	waiters []chan error
}

// entry is one lease of a request, with what it carried.
type entry struct {
	lease      *lease
	checkpoint *pendingCheckpoint
	release    *pendingRelease
}

// pendingAck is an ack (a delete on the stream) waiting to be sent or
// answered.
type pendingAck struct {
	handle  string
	waiters []chan error
}

type inFlightRequest struct {
	entries []entry
	acks    []*pendingAck
	sentAt  time.Time
	stallAt time.Time
}

// keeperConn is one open stream with its reader and writer goroutines.
type keeperConn struct {
	cancel context.CancelFunc
	// writes carries requests, and nil for the half-close, to the writer:
	// gRPC forbids concurrent sends, and a send must never block the loop.
	writes chan *keeperRequest
}

type streamEvent struct {
	conn *keeperConn
	resp *keeperResponse
	err  error // io.EOF: the server ended the stream with OK
}

// delivered is a message a Subscribe stream delivered, with its lease,
// which the keeper holds from then on.
type delivered struct {
	message *Message
	lease   *heldLease
}

// leaseKeeperOptions say how a leaseKeeper reaches the broker and paces
// its renewals.
type leaseKeeperOptions struct {
	queue string
	// wire is the stream: Heartbeat or Subscribe.
	wire keeperWire
	// flow is a Subscribe stream's credit, sent in each stream's first
	// request; nil on Heartbeat.
	flow *holdshelfv1.FlowControl
	// onDelivery is given a Subscribe stream's deliveries, on the keeper's
	// goroutine: it must neither block nor call the keeper.
	onDelivery func(messages []delivered)
	// onUnimplemented, if set, is called (on the keeper's goroutine) when
	// the broker has no such RPC: the stream ended UNIMPLEMENTED before any
	// response. The keeper then stops reopening it.
	onUnimplemented func()
	// visibility is sent with each renewal; nil lets the broker apply the
	// queue's visibility timeout.
	visibility *time.Duration
	// leaseLength is how long a lease lasts after a receive or renewal.
	leaseLength time.Duration
	// stall is how long a request may go unanswered before the stream is
	// deemed stuck, broken and reopened: stallTimeout(leaseLength).
	stall time.Duration
	// onError is told why a stream broke; the keeper reopens it by itself.
	onError func(error)
}

// leaseKeeper holds many leases on ONE Heartbeat or Subscribe stream opened
// with release_on_disconnect: it renews each before it runs out, carries
// checkpoints, releases and (on Subscribe) acks, tells a lease's holder when
// it is lost, and reopens a broken stream with backoff, renewing there, in
// the first request, every lease still held. On Subscribe it also holds
// each delivery's lease from the moment it arrives. At most one request
// that the broker answers is in flight, which is what tells answers from
// unsolicited LEASE_EXPIRED notices (see answersRequest); what is pending
// meanwhile goes together in the next one. All state belongs to one loop
// goroutine; other goroutines send it closures on cmds.
type leaseKeeper struct {
	options leaseKeeperOptions
	cmds    chan func()
	events  chan streamEvent
	done    chan struct{} // closed when the loop has exited

	// Owned by the loop goroutine.
	leases      map[string]*lease
	acks        []*pendingAck // not sent yet, in the order asked
	late        []string      // delivered after the half-close: see lateDeliveries
	conn        *keeperConn
	inFlight    *inFlightRequest
	attempt     int
	reopenAt    time.Time // zero: no reopen scheduled
	flow        *holdshelfv1.FlowControl
	flowChanged bool // flow goes in the next request
	paused      bool // deliveries are given back as they arrive
	responded   bool // some stream got a response: the RPC exists
	absent      bool // the broker has no such RPC: never reopened
	closing     bool // close began: a clean end is expected
	closed      bool // nothing more is sent
	finished    bool // the loop exits
	idleWaiters []chan struct{}
	endWaiter   chan struct{}
}

func newLeaseKeeper(options leaseKeeperOptions) *leaseKeeper {
	k := &leaseKeeper{
		options: options,
		cmds:    make(chan func()),
		events:  make(chan streamEvent),
		done:    make(chan struct{}),
		leases:  make(map[string]*lease),
		flow:    options.flow,
	}
	go k.loop()
	k.do(k.open)
	return k
}

// heldLease is a holder's handle on one lease; its methods may be called
// from any goroutine.
type heldLease struct {
	keeper *leaseKeeper
	lease  *lease
}

// hold starts keeping a lease received at since; onLost (nil: set later by
// watch) is called (on the keeper's goroutine: it must neither block nor
// wait for a lock held around a keeper call) if the lease is lost, or a
// renewal refused, before it is settled.
func (k *leaseKeeper) hold(handle string, since time.Time, onLost func(reason string)) *heldLease {
	l := &lease{handle: handle, onLost: onLost}
	k.do(func() {
		k.leases[handle] = l
		k.schedule(l, since)
		// Named on the stream at once, not first at its renewal time: until
		// the broker tracks a lease, a crash of this process leaves it hidden
		// until its timeout instead of releasing it in milliseconds.
		l.due = true
	})
	return &heldLease{keeper: k, lease: l}
}

// watch has onLost called (as hold's) when the lease is lost or a renewal
// refused; at once if that happened already.
func (h *heldLease) watch(onLost func(reason string)) {
	l := h.lease
	h.keeper.do(func() {
		if l.state == leaseHeld {
			l.onLost = onLost
			return
		}
		if lost, ok := l.endErr.(*LeaseLostError); ok {
			onLost(lost.Reason)
		}
	})
}

// checkpoint sends bytes with the next request; the channel yields nil once
// the broker stored it (held=true), or why not.
func (h *heldLease) checkpoint(bytes []byte) <-chan error {
	answer := make(chan error, 1)
	l := h.lease
	if !h.keeper.do(func() {
		if l.state != leaseHeld {
			answer <- l.endErr
			return
		}
		// The newest checkpoint replaces one not sent yet; its answer settles both.
		waiters := []chan error{answer}
		if l.checkpoint != nil {
			waiters = append(l.checkpoint.waiters, answer)
		}
		l.checkpoint = &pendingCheckpoint{bytes: bytes, waiters: waiters}
	}) {
		answer <- released(l.handle)
	}
	return answer
}

// drop stops renewing at once: the holder is deleting the message.
func (h *heldLease) drop() {
	// MESSAGE_NOT_FOUND is what the broker answers a checkpoint sent after
	// the delete.
	h.keeper.do(func() {
		h.keeper.forget(h.lease, &LeaseLostError{ReceiptHandle: h.lease.handle, Reason: ReasonMessageNotFound})
	})
}

// release stops renewing and hides the message for delay from now (0: makes
// it visible at once); the channel yields once the broker answered, the
// lease was lost anyway, or the keeper closed: nil, a *LeaseLostError if the
// broker refused the release (see end), or an error if close never sent it.
func (h *heldLease) release(delay time.Duration) <-chan error {
	return h.end(pendingRelease{delay: &delay})
}

// fail stops renewing and ends the lease as a failed delivery: the message
// comes back after delay, or after the queue's retry backoff when delay is
// nil (or goes to the dead-letter queue once its receives are spent). The
// channel yields as release's does (a delay over 12 h is refused).
func (h *heldLease) fail(delay *time.Duration) <-chan error {
	return h.end(pendingRelease{delay: delay, failed: true})
}

// end's channel is always answered once the loop took the command: by the
// broker's answer, by the lease's loss, or at the latest by close, which
// forgets every lease.
func (h *heldLease) end(ending pendingRelease) <-chan error {
	waiter := make(chan error, 1)
	l := h.lease
	if !h.keeper.do(func() {
		if l.state == leaseGone {
			waiter <- nil
			return
		}
		if l.release != nil {
			// The first ending asked for wins; later callers wait for its answer.
			l.release.waiters = append(l.release.waiters, waiter)
			return
		}
		ending.waiters = []chan error{waiter}
		l.release = &ending
		// Renewals stop now; the expiry stays, so that a release the broker
		// never hears of still ends when the lease would.
		if l.state == leaseHeld {
			l.endErr = released(l.handle)
		}
		l.state = leaseReleasing
		l.due = false
	}) {
		waiter <- nil // closed: every lease was forgotten
	}
	return waiter
}

// released is why a lease the holder gave back is no longer held.
func released(handle string) error {
	return &LeaseLostError{ReceiptHandle: handle, Reason: ReasonReleased}
}

// close sends what is pending and waits for its answers, then half-closes
// the stream and waits for the broker to end it, all within timeout; then
// forgets every lease (those still held run to their deadlines). An ending
// it never sent is answered with an error saying so.
func (k *leaseKeeper) close(timeout time.Duration) {
	// One deadline for both waits: a timer's channel fires once, so a second
	// wait on it would last until the stall timeout broke the stream.
	deadline, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	idle := make(chan struct{})
	k.do(func() {
		k.closing = true
		k.idleWaiters = append(k.idleWaiters, idle)
		k.checkIdle()
	})
	select {
	case <-idle:
	case <-deadline.Done():
	case <-k.done:
	}
	ended := make(chan struct{})
	k.do(func() {
		k.closed = true
		k.reopenAt = time.Time{}
		if k.conn == nil {
			close(ended)
			return
		}
		k.endWaiter = ended
		k.conn.writes <- nil
	})
	select {
	case <-ended:
	case <-deadline.Done():
	case <-k.done:
	}
	k.do(func() {
		if k.conn != nil {
			k.conn.cancel()
			close(k.conn.writes)
			k.conn = nil
		}
		// The Consumer stops only after giving back every message still worked on.
		entries, acks := k.takeInFlight()
		for _, e := range entries {
			settleAll(e.checkpoint, e.release, released(e.lease.handle))
		}
		for _, a := range append(acks, k.acks...) {
			settle(a.waiters, fmt.Errorf("holdshelf: the lease keeper closed before the ack of %s was answered", a.handle))
		}
		k.acks = nil
		for _, l := range k.leases {
			if l.release != nil && len(l.release.waiters) == 0 {
				// A delivery the keeper gave back itself after a pause: the
				// caller releases it otherwise (see lateDeliveries).
				k.late = append(k.late, l.handle)
			} else if l.release != nil {
				settle(l.release.waiters, fmt.Errorf("holdshelf: the lease keeper closed before the release of %s was sent", l.handle))
			}
			l.release = nil
			k.forget(l, released(l.handle))
		}
		k.finished = true
	})
	<-k.done
}

// do runs f on the loop goroutine; false if the loop has exited.
func (k *leaseKeeper) do(f func()) bool {
	select {
	case k.cmds <- f:
		return true
	case <-k.done:
		return false
	}
}

func (k *leaseKeeper) loop() {
	defer close(k.done)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for !k.finished {
		k.pump(false)
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(time.Until(k.nextWake()))
		select {
		case f := <-k.cmds:
			f()
			k.drainCommands()
		case event := <-k.events:
			if event.conn != k.conn {
				continue // from a stream already given up
			}
			if event.err != nil {
				k.onStreamEnd(event.err)
			} else {
				k.onResponse(event.resp)
			}
		case <-timer.C:
			k.onTimer(time.Now())
		}
	}
}

// maxDrained bounds how many queued commands run before the next request
// goes out.
const maxDrained = 1000

// drainCommands runs the commands already waiting, so that what handlers
// finishing at the same moment ask for goes out in one request.
func (k *leaseKeeper) drainCommands() {
	for i := 0; i < maxDrained && !k.finished; i++ {
		select {
		case f := <-k.cmds:
			f()
		default:
			return
		}
	}
}

// nextWake is the earliest time a timer of the keeper is due.
func (k *leaseKeeper) nextWake() time.Time {
	next := time.Now().Add(time.Hour)
	earlier := func(t time.Time) {
		if !t.IsZero() && t.Before(next) {
			next = t
		}
	}
	for _, l := range k.leases {
		if l.inFlight {
			continue // its answer, or the stall timeout, decides
		}
		if l.state == leaseHeld && !l.due {
			earlier(l.renewAt)
		}
		earlier(l.expiresAt)
	}
	if k.inFlight != nil {
		earlier(k.inFlight.stallAt)
	}
	earlier(k.reopenAt)
	return next
}

func (k *leaseKeeper) onTimer(now time.Time) {
	if k.inFlight != nil && !now.Before(k.inFlight.stallAt) {
		k.breakStream(fmt.Errorf("holdshelf: no %s answer within %v", k.options.wire.name(), k.options.stall))
	}
	for _, l := range k.leases {
		if l.inFlight {
			continue
		}
		// Without an answer by its deadline (the stream is down, say) a
		// lease must be presumed lost.
		if !now.Before(l.expiresAt) {
			k.lose(l, ReasonLeaseExpired)
			continue
		}
		if l.state == leaseHeld && !now.Before(l.renewAt) {
			l.due = true
		}
	}
	if k.conn == nil && !k.reopenAt.IsZero() && !now.Before(k.reopenAt) {
		k.open()
	}
}
