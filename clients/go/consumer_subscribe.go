package holdshelf

// The Consumer's Subscribe path: one stream whose credit is the
// Consumer's concurrency; the broker pushes deliveries, and each waits for
// a free slot (briefly: the broker frees a failed delivery's credit as it
// reads the failure, and the handler's slot is free once it is answered).

import "context"

// queuedDelivery is a delivery waiting for a slot. previous and outcome
// order a FIFO group's messages as start's do.
type queuedDelivery struct {
	delivered
	previous <-chan bool
	outcome  chan bool
}

// groupTail is a FIFO group's delivery still worked on: its outcome, and
// its sequence number.
type groupTail struct {
	outcome  chan bool
	sequence string
}

// subscribe consumes on a Subscribe stream until ctx ends, then stops as
// Run says, and returns true; false at once if the broker has no
// Subscribe, having held nothing.
func (c *Consumer) subscribe(ctx context.Context, options leaseKeeperOptions) bool {
	absent := make(chan struct{})
	options.wire = subscribeWire{queue: c.queue, visibility: options.visibility, openRPC: c.client.Subscribe}
	options.flow = flowControl(c.options.Concurrency, c.options.MaxOutstandingBytes)
	options.onDelivery = c.enqueue
	options.onUnimplemented = func() { close(absent) }
	keeper := newLeaseKeeper(options)
	if !c.dispatch(ctx, absent) {
		keeper.close(closeTimeout)
		return false
	}
	// No delivery is handed over after the pause: the keeper gives back
	// what still arrives, and the queued ones are given back here.
	keeper.pause()
	c.mu.Lock()
	left := c.queued
	c.queued = nil
	c.mu.Unlock()
	for _, q := range left {
		// keeper.close waits for the answer.
		q.lease.release(0)
		q.outcome <- false
	}
	c.shutdown(keeper)
	c.giveBackHandles(keeper.lateDeliveries())
	return true
}

// enqueue takes a response's deliveries, on the keeper's goroutine, in
// order: a FIFO group's message waits for the one before it in the group
// (the highest lower sequence number) among those still worked on. Not
// simply for the one delivered before it: a message that failed while the
// stream still held those behind it comes again before they are given
// back, and goes first, while a later one must still wait behind them.
func (c *Consumer) enqueue(messages []delivered) {
	c.mu.Lock()
	for _, d := range messages {
		q := queuedDelivery{delivered: d, outcome: make(chan bool, 1)}
		if group := d.message.MessageGroupID; group != "" {
			tail := groupTail{outcome: q.outcome, sequence: d.message.SequenceNumber}
			q.previous = before(c.groups[group], tail.sequence)
			c.groups[group] = append(c.groups[group], tail)
		}
		c.queued = append(c.queued, q)
	}
	c.mu.Unlock()
	select {
	case c.ready <- struct{}{}:
	default: // already signalled
	}
}

// dispatch starts each queued delivery in a free slot until ctx ends
// (true), or the broker turns out to have no Subscribe (false).
func (c *Consumer) dispatch(ctx context.Context, absent <-chan struct{}) bool {
	for {
		select {
		case <-ctx.Done():
			return true
		case <-absent:
			return false
		case <-c.ready:
		}
		for {
			c.mu.Lock()
			if len(c.queued) == 0 {
				c.mu.Unlock()
				break
			}
			q := c.queued[0]
			c.mu.Unlock()
			select {
			case c.slots <- struct{}{}:
			case <-ctx.Done():
				return true // subscribe gives it back
			}
			c.mu.Lock()
			c.queued = c.queued[1:]
			c.mu.Unlock()
			c.startHeld(q.message, q.lease, q.previous, q.outcome)
		}
	}
}

// before is the outcome of the delivery in tails just before sequence in
// its group, nil if none.
func before(tails []groupTail, sequence string) <-chan bool {
	var previous *groupTail
	for i := range tails {
		t := &tails[i]
		if t.sequence < sequence && (previous == nil || t.sequence > previous.sequence) {
			previous = t
		}
	}
	if previous == nil {
		return nil
	}
	return previous.outcome
}

// settled forgets a FIFO group's delivery once it is settled; called with
// c.mu held.
func (c *Consumer) settled(group string, outcome chan bool) {
	tails := c.groups[group]
	for i, t := range tails {
		if t.outcome == outcome {
			tails = append(tails[:i:i], tails[i+1:]...)
			break
		}
	}
	if len(tails) == 0 {
		delete(c.groups, group)
	} else {
		c.groups[group] = tails
	}
}
