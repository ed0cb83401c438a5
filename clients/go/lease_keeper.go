package holdshelf

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"holdshelf/clients/go/holdshelfv1"
)

// The protocol's limit of renewals per Heartbeat request; the rest wait for
// the next request.
const maxRenewals = 1000

// errSettled ends a lease whose message the consumer is deleting.
var errSettled = errors.New("holdshelf: the message was settled before this checkpoint was sent")

// errKeeperClosed answers what is still pending when the keeper closes.
var errKeeperClosed = errors.New("holdshelf: the consumer stopped")

type leaseState int

const (
	leaseHeld      leaseState = iota // renewed on schedule
	leaseReleasing                   // a release waits to be answered
	leaseGone                        // never named again
)

// lease is one held message, owned by the keeper's loop goroutine.
type lease struct {
	handle string
	onLost func(reason string)
	state  leaseState
	endErr error // why it is gone
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

type inFlightRequest struct {
	entries []entry
	sentAt  time.Time
	stallAt time.Time
}

// heartbeatConn is one open Heartbeat stream with its reader and writer
// goroutines.
type heartbeatConn struct {
	cancel context.CancelFunc
	// writes carries requests, and nil for the half-close, to the writer:
	// gRPC forbids concurrent sends, and a send must never block the loop.
	writes chan *holdshelfv1.HeartbeatRequest
}

type streamEvent struct {
	conn *heartbeatConn
	resp *holdshelfv1.HeartbeatResponse
	err  error // io.EOF: the server ended the stream with OK
}

// leaseKeeperOptions say how a leaseKeeper reaches the broker and paces
// its renewals.
type leaseKeeperOptions struct {
	queue string
	// open opens a fresh Heartbeat stream; called again after each break.
	open func(ctx context.Context) (holdshelfv1.QueueService_HeartbeatClient, error)
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

// leaseKeeper holds many leases on ONE Heartbeat stream opened with
// release_on_disconnect: it renews each before it runs out, carries
// checkpoints and releases, tells a lease's holder when it is lost, and
// reopens a broken stream with backoff, renewing there every lease still
// held. At most one request is in flight, which is what tells answers from
// unsolicited LEASE_EXPIRED notices (see answersRequest). All state belongs
// to one loop goroutine; other goroutines send it closures on cmds.
type leaseKeeper struct {
	options leaseKeeperOptions
	cmds    chan func()
	events  chan streamEvent
	done    chan struct{} // closed when the loop has exited

	// Owned by the loop goroutine.
	leases      map[string]*lease
	conn        *heartbeatConn
	inFlight    *inFlightRequest
	attempt     int
	reopenAt    time.Time // zero: no reopen scheduled
	closing     bool      // close began: a clean end is expected
	closed      bool      // nothing more is sent
	finished    bool      // the loop exits
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

// hold starts keeping a lease received at since; onLost is called (on the
// keeper's goroutine: it must not block) if the lease is lost before it is
// settled.
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
		answer <- errKeeperClosed
	}
	return answer
}

// drop stops renewing at once: the holder is deleting the message.
func (h *heldLease) drop() {
	h.keeper.do(func() { h.keeper.forget(h.lease, errSettled) })
}

// release stops renewing and hides the message for delay from now (0: makes
// it visible at once); the channel is closed once the broker answered, the
// lease was lost anyway, or the keeper closed.
func (h *heldLease) release(delay time.Duration) <-chan struct{} {
	return h.end(pendingRelease{delay: &delay})
}

// fail stops renewing and ends the lease as a failed delivery: the message
// comes back after delay, or after the queue's retry backoff when delay is
// nil (or goes to the dead-letter queue once its receives are spent). The
// channel is closed as release's is.
func (h *heldLease) fail(delay *time.Duration) <-chan struct{} {
	return h.end(pendingRelease{delay: delay, failed: true})
}

func (h *heldLease) end(ending pendingRelease) <-chan struct{} {
	released := make(chan struct{})
	waiter := make(chan error, 1)
	go func() {
		select {
		case <-waiter:
		case <-h.keeper.done:
		}
		close(released)
	}()
	l := h.lease
	h.keeper.do(func() {
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
		l.state = leaseReleasing
		l.due = false
	})
	return released
}

// close sends what is pending and waits for its answers, then half-closes
// the stream and waits for the broker to end it, all within timeout; then
// forgets every lease (those still held run to their deadlines).
func (k *leaseKeeper) close(timeout time.Duration) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	idle := make(chan struct{})
	k.do(func() {
		k.closing = true
		k.idleWaiters = append(k.idleWaiters, idle)
		k.checkIdle()
	})
	select {
	case <-idle:
	case <-deadline.C:
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
	case <-deadline.C:
	case <-k.done:
	}
	k.do(func() {
		if k.conn != nil {
			k.conn.cancel()
			close(k.conn.writes)
			k.conn = nil
		}
		for _, e := range k.takeInFlight() {
			settleAll(e.checkpoint, e.release, errKeeperClosed)
		}
		for _, l := range k.leases {
			k.forget(l, errKeeperClosed)
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
		case event := <-k.events:
			if event.conn != k.conn {
				continue // from a stream already given up
			}
			if event.err != nil {
				k.onStreamEnd(event.err)
			} else {
				k.onResponse(event.resp.Leases)
			}
		case <-timer.C:
			k.onTimer(time.Now())
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
		k.breakStream(fmt.Errorf("holdshelf: no Heartbeat answer within %v", k.options.stall))
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
	if e.release == nil && !state.Held {
		// First, so that the handler's context is cancelled by the time its
		// Checkpoint returns the loss.
		k.lose(l, state.Reason)
	}
	stored := state.Held || (e.release != nil && state.Reason == ReasonReleased)
	if e.checkpoint != nil {
		var err error
		if !stored {
			err = &LeaseLostError{ReceiptHandle: l.handle, Reason: state.Reason}
		}
		settle(e.checkpoint.waiters, err)
	}
	if e.release != nil {
		// Released, or lost already: either way no longer ours.
		k.forget(l, errors.New("holdshelf: the message was released"))
		settle(e.release.waiters, nil)
		return
	}
	if l.state == leaseHeld {
		k.schedule(l, sentAt)
	}
}

// schedule sets a lease's renewal and expiry, counted from when its receive
// or last renewal was sent.
func (k *leaseKeeper) schedule(l *lease, from time.Time) {
	l.renewAt = from.Add(renewalDelay(k.options.leaseLength, jitter()))
	l.expiresAt = from.Add(k.options.leaseLength)
}

func (k *leaseKeeper) lose(l *lease, reason string) {
	if l.state == leaseGone {
		return
	}
	// The holder hears first, so that its context is cancelled by the time
	// a waiting Checkpoint returns the loss.
	if l.state == leaseHeld {
		l.onLost(reason)
	}
	k.forget(l, &LeaseLostError{ReceiptHandle: l.handle, Reason: reason})
}

// forget never names the lease again, and settles whoever waits on what was
// not sent.
func (k *leaseKeeper) forget(l *lease, err error) {
	if l.state == leaseGone {
		return
	}
	l.state = leaseGone
	l.endErr = err
	delete(k.leases, l.handle)
	settleAll(l.checkpoint, l.release, err)
	l.checkpoint, l.release = nil, nil
	k.checkIdle()
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
			if l.release == nil {
				l.release = e.release
			} else {
				l.release.waiters = append(e.release.waiters, l.release.waiters...)
			}
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

func (k *leaseKeeper) hasPending() bool {
	if k.inFlight != nil {
		return true
	}
	for _, l := range k.leases {
		if l.checkpoint != nil || l.release != nil {
			return true
		}
	}
	return false
}

func (k *leaseKeeper) checkIdle() {
	if len(k.idleWaiters) == 0 || k.hasPending() {
		return
	}
	for _, idle := range k.idleWaiters {
		close(idle)
	}
	k.idleWaiters = nil
}

// settleAll answers a checkpoint's waiters with err and a release's with nil
// (the message is no longer ours either way).
func settleAll(checkpoint *pendingCheckpoint, release *pendingRelease, err error) {
	if checkpoint != nil {
		settle(checkpoint.waiters, err)
	}
	if release != nil {
		settle(release.waiters, nil)
	}
}

func settle(waiters []chan error, err error) {
	for _, waiter := range waiters {
		waiter <- err // each has room for one answer
	}
}
