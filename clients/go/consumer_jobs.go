package holdshelf

// The Consumer's work on each message: running the handler, settling the
// message by its outcome, and giving messages back when it stops.

import (
	"context"
	"errors"
	"fmt"
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
	// lost is why the lease was lost, nil while held. Atomic rather than
	// under Consumer.mu: the keeper's goroutine sets it, and a goroutine
	// holding Consumer.mu while waiting for the keeper would deadlock.
	lost atomic.Pointer[LeaseLostError]
}

// start runs the handler on one message, in a goroutine of its own.
func (c *Consumer) start(m *Message, keeper *leaseKeeper, receivedAt time.Time) {
	ctx, cancel := context.WithCancel(context.Background())
	j := &job{delivery: &Delivery{Message: *m, last: m.Checkpoint}, ctx: ctx, cancel: cancel}
	j.delivery.lease = keeper.hold(m.ReceiptHandle, receivedAt, func(reason string) {
		j.lost.Store(&LeaseLostError{ReceiptHandle: m.ReceiptHandle, Reason: reason})
		cancel()
	})
	c.mu.Lock()
	c.jobs[j] = struct{}{}
	c.mu.Unlock()
	c.work.Add(1)
	go func() {
		defer c.work.Done()
		defer c.giveSlots(1)
		defer func() {
			c.mu.Lock()
			delete(c.jobs, j)
			c.mu.Unlock()
			cancel()
		}()
		c.settle(j, c.runHandler(ctx, j.delivery))
	}()
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
// delivery.
func (c *Consumer) settle(j *job, handlerErr error) {
	c.mu.Lock()
	abandoned := j.abandoned
	c.mu.Unlock()
	if abandoned {
		return // stop released it already
	}
	d := j.delivery
	lost := j.lost.Load()
	if handlerErr == nil {
		c.deleteHandled(j)
		return
	}
	switch {
	case lost == nil:
		c.report(handlerErr, d)
	case refusedRenewal(lost.Reason):
		// The refused lease's handle works until its deadline, so the
		// failure still goes out before the slot is freed. Reported, as only
		// a change of the consumer's options or the queue's stops it recurring.
		c.report(lost, d)
	default:
		return // another delivery may be under way: nothing to release
	}
	if err := <-d.lease.fail(retryDelay(handlerErr)); err != nil {
		c.report(fmt.Errorf("holdshelf: the failed delivery was not recorded: %w", err), d)
	}
}

// deleteHandled deletes a handled message. A delete that fails for want of a
// broker (one restarting, a queue moving between brokers, a lost connection)
// is tried again with backoff while the lease is still held and renewed,
// since giving up would have the finished work done again; it stops once the
// lease is lost or stop gives the message back.
func (c *Consumer) deleteHandled(j *job) {
	d := j.delivery
	defer d.lease.drop()
	for failures := 0; ; failures++ {
		// Tried even after the lease was lost: if nobody received the
		// message since, the finished work is not done again.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := c.deleteMessage(ctx, c.queue, d.Message.ReceiptHandle)
		cancel()
		if err == nil {
			return
		}
		c.report(err, d)
		if !noBrokerAnswered(err) {
			return
		}
		wait := time.NewTimer(reconnectDelay(failures, jitter()))
		select {
		case <-wait.C:
		case <-j.ctx.Done():
			wait.Stop()
			return
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
	var abandoned []*job
	c.mu.Lock()
	for j := range c.jobs {
		if !j.abandoned {
			j.abandoned = true
			abandoned = append(abandoned, j)
		}
	}
	c.mu.Unlock()
	releases := make([]<-chan error, len(abandoned))
	for i, j := range abandoned {
		// Released before the cancel, so that the release goes out before
		// whatever the handler does next; keeper.close waits for its answer.
		releases[i] = j.delivery.lease.release(0)
		j.cancel()
	}
	keeper.close(closeTimeout)
	// Every release is answered by now: close forgets what is left.
	for i, released := range releases {
		if err := <-released; err != nil {
			c.report(fmt.Errorf("holdshelf: the message was not given back: %w", err), abandoned[i].delivery)
		}
	}
}

// giveBack releases messages received after the stop began; never held by
// the keeper, so no renewal can race the release.
func (c *Consumer) giveBack(messages []*Message) {
	if len(messages) == 0 {
		return
	}
	handles := make([]string, len(messages))
	for i, m := range messages {
		handles[i] = m.ReceiptHandle
	}
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	results, err := c.client.ChangeVisibilityBatch(ctx, c.queue, handles, 0)
	if err != nil {
		c.report(err, nil)
		return
	}
	for _, result := range results {
		if result.Err != nil {
			c.report(result.Err, nil)
		}
	}
}
