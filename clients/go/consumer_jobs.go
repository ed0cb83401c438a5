package holdshelf

// The Consumer's work on each message: running the handler, settling the
// message by its outcome, and giving messages back when it stops.

import (
	"context"
	"fmt"
	"time"
)

// job is one delivery being worked on.
type job struct {
	delivery  *Delivery
	cancel    context.CancelFunc
	abandoned bool // stop gave the message back: the outcome is ignored (guarded by Consumer.mu)
	lost      bool // the lease was lost (guarded by Consumer.mu)
}

// start runs the handler on one message, in a goroutine of its own.
func (c *Consumer) start(m *Message, keeper *leaseKeeper, receivedAt time.Time) {
	ctx, cancel := context.WithCancel(context.Background())
	j := &job{delivery: &Delivery{Message: *m, last: m.Checkpoint}, cancel: cancel}
	j.delivery.lease = keeper.hold(m.ReceiptHandle, receivedAt, func(string) {
		c.mu.Lock()
		j.lost = true
		c.mu.Unlock()
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
	abandoned, lost := j.abandoned, j.lost
	c.mu.Unlock()
	if abandoned {
		return // stop released it already
	}
	d := j.delivery
	if handlerErr == nil {
		d.lease.drop()
		// Tried even after the lease was lost: if nobody received the
		// message since, the finished work is not done again.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := c.client.Delete(ctx, c.queue, d.Message.ReceiptHandle); err != nil {
			c.report(err, d)
		}
		return
	}
	if lost {
		return // another delivery may be under way: nothing to release
	}
	c.report(handlerErr, d)
	<-d.lease.fail(retryDelay(handlerErr))
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
	c.mu.Lock()
	for j := range c.jobs {
		if j.abandoned {
			continue
		}
		j.abandoned = true
		// Released before the cancel, so that the release goes out before
		// whatever the handler does next; keeper.close waits for its answer.
		j.delivery.lease.release(0)
		j.cancel()
	}
	c.mu.Unlock()
	keeper.close(closeTimeout)
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
