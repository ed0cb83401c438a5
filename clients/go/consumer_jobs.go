package holdshelf

// The Consumer's work on each message: running the handler, settling the
// message by its outcome, and giving messages back when it stops.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
)

// job is one delivery being worked on.
type job struct {
	delivery *Delivery
	// ctx is the handler's: done once the lease is lost or stop gave the message back.
	ctx       context.Context
	cancel    context.CancelFunc
	abandoned bool // stop gave the message back: the outcome is ignored (guarded by Consumer.mu)
	deleting  bool // settle began the delete (guarded by Consumer.mu)
	// stopDelete cancels deleteCtx, and with it the delete under way, when
	// stop gives the message back; deleted is closed once deleteHandled
	// returned.
	deleteCtx  context.Context
	stopDelete context.CancelFunc
	deleted    chan struct{}
	// freeSlot gives the job's slot back, once: when its goroutine ends, or
	// as soon as its ack is on its way (see ack).
	freeSlot func()
	// lost is why the lease was lost, nil while held. Atomic rather than
	// under Consumer.mu: the keeper's goroutine sets it, and a goroutine
	// holding Consumer.mu while waiting for the keeper would deadlock.
	lost atomic.Pointer[LeaseLostError]
}

// start runs the handler on one message, in a goroutine of its own, and
// returns a channel that yields once, when it is settled: whether it was
// deleted. previous is that channel of the message received before it in the
// same receive and FIFO group, nil for the first of its group and on a
// standard queue: the message waits for it (see takeTurn).
func (c *Consumer) start(m *Message, keeper *leaseKeeper, receivedAt time.Time, previous <-chan bool) <-chan bool {
	outcome := make(chan bool, 1)
	c.startHeld(m, keeper.hold(m.ReceiptHandle, receivedAt, nil), previous, outcome)
	return outcome
}

// startHeld is start with the lease already held, and the channel that
// yields the outcome made by the caller.
func (c *Consumer) startHeld(m *Message, lease *heldLease, previous <-chan bool, outcome chan bool) {
	// Run's values, but not its cancellation: a stop lets the handler finish
	// within the grace period, and cancels it only when it gives the message back.
	ctx, cancel := context.WithCancel(c.values)
	j := &job{delivery: &Delivery{Message: *m, last: m.Checkpoint, lease: lease}, ctx: ctx, cancel: cancel, deleted: make(chan struct{})}
	j.deleteCtx, j.stopDelete = context.WithCancel(context.Background())
	var freed sync.Once
	j.freeSlot = func() { freed.Do(func() { c.giveSlots(1) }) }
	lease.watch(func(reason string) {
		j.lost.Store(&LeaseLostError{ReceiptHandle: m.ReceiptHandle, Reason: reason})
		cancel()
	})
	c.mu.Lock()
	c.jobs[j] = struct{}{}
	c.mu.Unlock()
	c.work.Add(1)
	go func() {
		defer c.work.Done()
		defer j.freeSlot()
		defer func() {
			c.mu.Lock()
			delete(c.jobs, j)
			if m.MessageGroupID != "" {
				c.settled(m.MessageGroupID, outcome)
			}
			c.mu.Unlock()
			cancel()
			j.stopDelete()
		}()
		deleted := false
		if c.takeTurn(j, previous) {
			deleted = c.settle(j, c.runHandler(ctx, j.delivery))
		}
		outcome <- deleted
	}()
}

// takeTurn waits until the message received before this one in its FIFO
// group (previous; nil for none) is settled, and tells whether this one may
// be handled now. One Receive may lease several messages of a group, in
// order, and the Consumer's slots would run them side by side: instead each
// waits for the one before it. If that one was not deleted (its handler
// failed, its lease was lost, a stop gave it back), it is still in the queue,
// and this one, handled now, would overtake it: it is released instead, to
// come again behind it.
func (c *Consumer) takeTurn(j *job, previous <-chan bool) bool {
	if previous == nil {
		return true
	}
	var deleted bool
	select {
	case deleted = <-previous:
	case <-j.ctx.Done():
		// Lost, or given back by a stop, while it waited: there is nothing to do.
		return false
	}
	c.mu.Lock()
	abandoned := j.abandoned
	c.mu.Unlock()
	if abandoned || j.ctx.Err() != nil {
		return false // lost or given back meanwhile: someone else may have it now
	}
	if deleted {
		return true
	}
	if err := <-j.delivery.lease.release(0); err != nil {
		c.report(fmt.Errorf("holdshelf: the message behind a failed one of its group was not given back: %w", err), j.delivery)
	}
	return false
}

// runHandler calls the handler, turning a panic into an error so that the
// message is released rather than the process brought down.
func (c *Consumer) runHandler(ctx context.Context, d *Delivery) (err error) {
	defer func() {
		if recovered := recover(); recovered != nil {
			err = fmt.Errorf("holdshelf: handler panicked: %v", recovered)
		}
	}()
	return c.handler(ctx, d)
}

// settle deletes a handled message, or ends a failed one's lease as a failed
// delivery, and tells whether the message was deleted. The handler's error
// is always reported, also after a loss or refusal of the lease, which
// itself is not: the handler heard of it through its ctx. A message stop
// gave back is neither settled nor reported.
func (c *Consumer) settle(j *job, handlerErr error) bool {
	c.mu.Lock()
	abandoned := j.abandoned
	j.deleting = !abandoned && handlerErr == nil
	c.mu.Unlock()
	if abandoned {
		return false // stop released it already, and its outcome is ignored
	}
	d := j.delivery
	if handlerErr != nil {
		c.report(handlerErr, d)
	}
	if handlerErr == nil {
		return c.deleteHandled(j)
	}
	// A refused lease's handle works until its deadline, so the failure
	// still goes out; after a loss another delivery may be under way, and
	// there is nothing to end.
	if lost := j.lost.Load(); lost != nil && !refusedRenewal(lost.Reason) {
		return false
	}
	if err := <-d.lease.fail(retryDelay(handlerErr)); err != nil {
		c.report(fmt.Errorf("holdshelf: the failed delivery was not recorded: %w", err), d)
	}
	return false
}

// deleteTimeout is how long one delete attempt may take.
const deleteTimeout = 30 * time.Second

// deleteHandled deletes a handled message. A delete that fails for want of a
// broker (one restarting, a queue moving between brokers, a lost connection)
// is tried again with backoff while the lease is still held and renewed,
// since giving up would have the finished work done again; it stops once the
// lease is lost. Each attempt has its own deadline, and stop cancels the one
// under way when it gives the message back, so that Run never returns while
// the Consumer's own goroutine is still in a delete. It tells whether the
// delete succeeded.
func (c *Consumer) deleteHandled(j *job) bool {
	defer close(j.deleted)
	if j.delivery.lease.keeper.options.wire.carriesAcks() {
		return c.ack(j)
	}
	deleted := c.tryDeletes(j)
	// Renewals stop only now, so that the lease is kept while a delete is
	// tried again; a message stop gave back is ended by its release.
	if j.deleteCtx.Err() == nil {
		j.delivery.lease.drop()
	}
	return deleted
}

// ack deletes a handled message on the Subscribe stream, which sends the
// ack again on a new stream after a break until the broker answers; true if
// the message was deleted.
func (c *Consumer) ack(j *job) bool {
	answer := j.delivery.lease.ack()
	// The handler is done, and the broker counts the lease against the
	// stream's credit until it reads the ack: the slot may take the next
	// delivery while the ack becomes durable.
	j.freeSlot()
	err := <-answer
	if err == nil {
		return true
	}
	// Only a stop releases a message being deleted: not a failure.
	var lost *LeaseLostError
	if !errors.As(err, &lost) || lost.Reason != ReasonReleased {
		c.report(err, j.delivery)
	}
	return false
}

// tryDeletes tries the delete until it is answered, the lease is lost, or
// stop gives the message back; true if the delete succeeded.
func (c *Consumer) tryDeletes(j *job) bool {
	d := j.delivery
	for failures := 0; ; failures++ {
		// Tried even after the lease was lost: if nobody received the
		// message since, the finished work is not done again.
		ctx, cancel := context.WithTimeout(j.deleteCtx, deleteTimeout)
		outcome, err := c.deleteMessage(ctx, c.queue, d.Message.ReceiptHandle)
		cancel()
		if err == nil {
			if lost := lostBeforeDelete(d.Message.ReceiptHandle, outcome); lost != nil {
				c.report(lost, d)
				return false
			}
			return true
		}
		if j.deleteCtx.Err() != nil {
			return false
		}
		c.report(err, d)
		if !noBrokerAnswered(err) {
			return false
		}
		wait := time.NewTimer(reconnectDelay(failures, jitter()))
		select {
		case <-wait.C:
		case <-j.ctx.Done():
			wait.Stop()
			return false
		}
	}
}

// noBrokerAnswered tells a call that may well succeed if tried again soon:
// no broker answered it (UNAVAILABLE: one restarting, a queue moving, a lost
// connection) or it ran out of time.
func noBrokerAnswered(err error) bool {
	var e *Error
	return errors.As(err, &e) && (e.Code == codes.Unavailable || e.Code == codes.DeadlineExceeded)
}

// shutdown waits up to the grace period for running handlers, then releases
// the messages of those still running and closes the stream.
func (c *Consumer) shutdown(keeper *leaseKeeper) {
	finished := make(chan struct{})
	go func() {
		c.work.Wait()
		close(finished)
	}()
	grace := time.NewTimer(c.grace)
	select {
	case <-finished:
	case <-grace.C:
	}
	grace.Stop()
	// Released only after c.mu is unlocked: a release waits for the
	// keeper's goroutine, which must never wait for c.mu.
	if c.abandoning != nil {
		c.abandoning()
	}
	var abandoned, deleting []*job
	c.mu.Lock()
	for j := range c.jobs {
		if !j.abandoned {
			j.abandoned = true
			abandoned = append(abandoned, j)
			if j.deleting {
				deleting = append(deleting, j)
			}
		}
	}
	c.mu.Unlock()
	releases := make([]<-chan error, len(abandoned))
	for i, j := range abandoned {
		// Released before the cancel, so that the release goes out before
		// whatever the handler does next; keeper.close waits for its answer.
		releases[i] = j.delivery.lease.release(0)
		// Before the cancel, which a delete's backoff also waits for: a delete
		// given up must not drop the lease whose release is pending.
		j.stopDelete()
		j.cancel()
	}
	keeper.close(closeTimeout)
	// Every release is answered by now, or failed as never sent.
	for i, released := range releases {
		if err := <-released; err != nil {
			c.report(fmt.Errorf("holdshelf: the message was not given back: %w", err), abandoned[i].delivery)
		}
	}
	// A cancelled delete returns at once.
	for _, j := range deleting {
		<-j.deleted
	}
}

// giveBack releases messages received after the stop began; never held by
// the keeper, so no renewal can race the release.
func (c *Consumer) giveBack(messages []*Message) {
	handles := make([]string, len(messages))
	for i, m := range messages {
		handles[i] = m.ReceiptHandle
	}
	c.giveBackHandles(handles)
}

// giveBackHandles releases these receipt handles' messages with unary
// calls, 100 at a time (ChangeVisibilityBatch's limit).
func (c *Consumer) giveBackHandles(handles []string) {
	if len(handles) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	for len(handles) > 0 {
		n := len(handles)
		if n > maxReceiveMessages {
			n = maxReceiveMessages
		}
		results, err := c.client.ChangeVisibilityBatch(ctx, c.queue, handles[:n], 0)
		handles = handles[n:]
		if err != nil {
			c.report(err, nil)
			continue
		}
		for _, result := range results {
			if result.Err != nil {
				c.report(result.Err, nil)
			}
		}
	}
}
