package holdshelf

import (
	"context"
	"errors"
	"fmt"
	"log"
	"sync"
	"time"
)

// Handler works on one message. Returning nil deletes it. Returning an error
// ends its lease as a failed delivery: it comes back after the queue's retry
// backoff (at once without a retry policy; to the dead-letter queue once its
// redrive policy's receives are spent), or after RetryLater's delay. ctx
// carries the values of Run's context, not its cancellation or deadline; it
// is cancelled when the lease is lost or a renewal refused, or when a stop
// gives the message back after its grace period: the handler should then
// return.
// After a loss its work will be redone: an error it returns is reported to
// OnError, and nothing is sent; after a refusal its outcome still counts
// until the lease's deadline; after a stop its outcome is ignored.
type Handler func(ctx context.Context, d *Delivery) error

// ConsumerOptions say how a Consumer works; the zero value is usable.
type ConsumerOptions struct {
	// Concurrency is the most messages worked on, and so leased, at once.
	// Default 1. On a FIFO queue it serves different message groups: one
	// group's messages are handled one at a time, in send order, even when
	// one receive leases several of them (they wait their turn, leased, in
	// a slot).
	Concurrency int
	// VisibilityTimeout is the lease of receives and renewals, more than 0;
	// nil means the queue's, read when Run starts.
	VisibilityTimeout *time.Duration
	// WaitTime is each receive's long poll, 0 to 20 s; nil means 20 s. Only
	// the Receive path (Subscribe off, or a broker without it) polls.
	WaitTime *time.Duration
	// Subscribe: nil or true consumes on one Subscribe stream, where the
	// broker pushes messages as they become visible and acks, renewals and
	// failures go up the same stream; Bool(false) polls with Receive, keeps
	// leases on a Heartbeat stream and deletes with Delete instead. A broker
	// without Subscribe (UNIMPLEMENTED) is consumed the Receive way anyway.
	Subscribe *bool
	// MaxOutstandingBytes caps the bytes (bodies and attributes) of the
	// messages the Subscribe stream holds at once, beside Concurrency, which
	// caps their number; 0 means no byte limit. A message larger than the
	// limit still comes when nothing else is held.
	MaxOutstandingBytes int64
	// StopGrace is how long a stop waits for running handlers before it
	// releases their messages; nil means 10 s, Duration(0) none.
	StopGrace *time.Duration
	// OnError is told of every failure: a handler's (with its delivery, also
	// after its lease was lost or a renewal refused, which is not reported
	// apart: the handler heard of it through its ctx), a receive's, a
	// delete's, an ending's the broker refused or that was never sent
	// (wrapping a *LeaseLostError or saying so), a handled message's whose
	// delete came after it was dead-lettered or received again by someone
	// else (a *LeaseLostError, reason ReasonDeadLettered or
	// ReasonReceivedAgain: its work may be done again), a stream's (with
	// nil). A
	// refusal that ends Run (see Run) is returned by Run instead. Default:
	// the log package.
	OnError func(err error, d *Delivery)
}

// After the grace period, a stop gives the releases and the stream's clean
// end this long before it cuts the stream.
const closeTimeout = 5 * time.Second

// maxReceiveMessages is the most messages one Receive takes.
const maxReceiveMessages = 100

// Consumer receives messages from one queue and runs a Handler on each, at
// most Concurrency at once, leasing no more messages than it has free slots.
// By default it consumes on one Subscribe stream, whose credit is its
// Concurrency, and which also carries renewals, checkpoints, acks and
// failures; on the Receive path (see ConsumerOptions.Subscribe) one
// Heartbeat stream keeps every lease alive until its message is settled.
type Consumer struct {
	client  *Client
	queue   string
	handler Handler
	options ConsumerOptions
	grace   time.Duration
	wait    time.Duration // each receive's long poll
	slots   chan struct{} // one token per message being worked on
	// deleteMessage is client.DeleteWithOutcome; a test replaces it to play
	// a broker that does not answer.
	deleteMessage func(ctx context.Context, queue, receiptHandle string) (DeleteOutcome, error)
	// abandoning, if set, is called as a stop begins to give back the
	// messages of handlers still running; a test's hook.
	abandoning func()

	mu   sync.Mutex
	jobs map[*job]struct{}
	// groups are, on the Subscribe path, each FIFO group's deliveries still
	// worked on, in the order they came; queued are deliveries waiting for
	// a slot, and ready says some are.
	groups  map[string][]groupTail
	queued  []queuedDelivery
	ready   chan struct{}
	running bool
	stop    context.CancelFunc // cancels Run's receive loop
	// values is Run's context detached from its cancellation: the parent of
	// the handlers' contexts, set before Run starts any.
	values  context.Context
	stopped chan struct{} // closed when Run has returned
	// refusal is the first error that stopped the Consumer for good (see
	// refusesConsumer); Run returns it.
	refusal error
	work    sync.WaitGroup
}

// NewConsumer returns a Consumer of queue; Run starts it.
func NewConsumer(client *Client, queue string, handler Handler, options ConsumerOptions) (*Consumer, error) {
	if options.Concurrency == 0 {
		options.Concurrency = 1
	}
	wait := 20 * time.Second
	if options.WaitTime != nil {
		wait = *options.WaitTime
	}
	grace := 10 * time.Second
	if options.StopGrace != nil {
		grace = *options.StopGrace
	}
	switch {
	case client == nil || handler == nil:
		return nil, errors.New("holdshelf: NewConsumer needs a client and a handler")
	case options.Concurrency < 0:
		return nil, fmt.Errorf("holdshelf: ConsumerOptions.Concurrency must be at least 1, not %d", options.Concurrency)
	case options.VisibilityTimeout != nil && *options.VisibilityTimeout < time.Millisecond:
		// A receive would hide nothing, and renewals would come in a hot loop.
		return nil, fmt.Errorf("holdshelf: ConsumerOptions.VisibilityTimeout must be at least 1ms, not %v", *options.VisibilityTimeout)
	case wait < 0 || wait > 20*time.Second:
		return nil, fmt.Errorf("holdshelf: ConsumerOptions.WaitTime must be 0 to 20s, not %v", wait)
	case options.MaxOutstandingBytes < 0:
		return nil, fmt.Errorf("holdshelf: ConsumerOptions.MaxOutstandingBytes must not be negative, not %d", options.MaxOutstandingBytes)
	case grace < 0:
		return nil, fmt.Errorf("holdshelf: ConsumerOptions.StopGrace must not be negative, not %v", grace)
	}
	if options.OnError == nil {
		options.OnError = func(err error, d *Delivery) {
			if d != nil {
				log.Printf("holdshelf consumer: message %s: %v", d.Message.ID, err)
			} else {
				log.Printf("holdshelf consumer: %v", err)
			}
		}
	}
	return &Consumer{
		client:        client,
		deleteMessage: client.DeleteWithOutcome,
		queue:         queue,
		handler:       handler,
		options:       options,
		grace:         grace,
		wait:          wait,
		slots:         make(chan struct{}, options.Concurrency),
		jobs:          make(map[*job]struct{}),
		groups:        make(map[string][]groupTail),
		ready:         make(chan struct{}, 1),
		stopped:       make(chan struct{}),
	}, nil
}

// Run consumes until ctx is cancelled or Stop is called, then stops
// gracefully: it stops receiving (on Subscribe: asks for no more
// deliveries), waits up to StopGrace for running handlers, releases the
// messages of those still running (cancelling their contexts) and of those
// delivered but not started, and half-closes the stream. It returns nil once
// stopped. It returns an error at once if it cannot run (a queue whose
// visibility timeout is 0 and no VisibilityTimeout option, a second Run),
// and an error wrapping the broker's *Error, after the same graceful stop,
// when the broker refuses the Consumer for good: the queue does not exist
// or was deleted (ReasonQueueNotFound), the token may not consume it
// (ReasonPermissionDenied), or the token is missing or not valid
// (ReasonTokenMissing, ReasonTokenInvalid); IsReason tells them. Other
// failures (an unreachable or restarting broker, a queue moving between
// brokers) go to OnError and are retried with backoff.
//
// Handlers' contexts carry ctx's values (trace spans, loggers) but not its
// cancellation or deadline: a stop lets them finish within StopGrace.
func (c *Consumer) Run(ctx context.Context) error {
	c.mu.Lock()
	if c.running {
		c.mu.Unlock()
		return errors.New("holdshelf: Consumer.Run called twice")
	}
	c.running = true
	receiving, stop := context.WithCancel(ctx)
	c.stop = stop
	c.values = detachedContext{parent: ctx}
	c.mu.Unlock()
	defer close(c.stopped)
	defer stop()

	queue, ok := c.readQueue(receiving)
	if !ok {
		return c.refusalError()
	}
	visibility := c.options.VisibilityTimeout
	var lease time.Duration
	if visibility != nil {
		lease = *visibility
	} else if queue.Config.VisibilityTimeout != nil {
		lease = *queue.Config.VisibilityTimeout
	}
	if lease < time.Millisecond {
		// A receive would hide nothing, and renewals would come in a hot loop.
		return fmt.Errorf("holdshelf: queue %s has a visibility timeout of 0: set ConsumerOptions.VisibilityTimeout", c.queue)
	}
	options := leaseKeeperOptions{
		queue:       c.queue,
		visibility:  visibility,
		leaseLength: lease,
		stall:       stallTimeout(lease),
		onError: func(err error) {
			if !c.refused(err) {
				c.report(err, nil)
			}
		},
	}
	if c.options.Subscribe == nil || *c.options.Subscribe {
		if c.subscribe(receiving, options) {
			return c.refusalError()
		}
		// The broker has no Subscribe: consume the Receive way.
	}
	options.wire = heartbeatWire{queue: c.queue, openRPC: c.client.Heartbeat}
	keeper := newLeaseKeeper(options)
	c.receive(receiving, keeper, visibility)
	c.shutdown(keeper)
	return c.refusalError()
}

// refused stops the Consumer, as Stop does, if err refuses it for good (see
// refusesConsumer), and keeps the first such error for Run to return; false
// for any other error, which is retried.
func (c *Consumer) refused(err error) bool {
	if !refusesConsumer(err) {
		return false
	}
	c.mu.Lock()
	if c.refusal == nil {
		c.refusal = err
	}
	stop := c.stop
	c.mu.Unlock()
	stop()
	return true
}

// refusalError is what Run returns once stopped: the refusal that stopped
// it, or nil for a stop that was asked for.
func (c *Consumer) refusalError() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.refusal == nil {
		return nil
	}
	return fmt.Errorf("holdshelf: consumer of queue %s: %w", c.queue, c.refusal)
}

// Stop stops a running Consumer as a cancellation of Run's context does, and
// returns once Run has returned.
func (c *Consumer) Stop() {
	c.mu.Lock()
	running, stop := c.running, c.stop
	c.mu.Unlock()
	if !running {
		return
	}
	stop()
	<-c.stopped
}

// readQueue reads the queue's lease length, retrying until it succeeds, ctx
// ends or the broker refuses the Consumer for good (false).
func (c *Consumer) readQueue(ctx context.Context) (*Queue, bool) {
	for failures := 0; ; failures++ {
		queue, err := c.client.GetQueue(ctx, c.queue)
		if err == nil {
			return queue, true
		}
		if ctx.Err() != nil || c.refused(err) {
			return nil, false
		}
		c.report(err, nil)
		if !sleep(ctx, reconnectDelay(failures, jitter())) {
			return nil, false
		}
	}
}

// receive runs the receive loop until ctx ends.
func (c *Consumer) receive(ctx context.Context, keeper *leaseKeeper, visibility *time.Duration) {
	for failures := 0; ; {
		free := c.takeSlots(ctx)
		if free == 0 {
			return // stopping
		}
		messages, err := c.client.Receive(ctx, c.queue, &ReceiveOptions{
			MaxMessages:       int32(free),
			VisibilityTimeout: visibility,
			WaitTime:          Duration(c.wait),
		})
		c.giveSlots(free - len(messages))
		if err != nil {
			if ctx.Err() != nil || c.refused(err) {
				return
			}
			c.report(err, nil)
			if !sleep(ctx, reconnectDelay(failures, jitter())) {
				return
			}
			failures++
			continue
		}
		failures = 0
		receivedAt := time.Now()
		if ctx.Err() != nil {
			// The answer beat the cancellation: these were never worked on.
			c.giveBack(messages)
			c.giveSlots(len(messages))
			return
		}
		// A FIFO group's messages come in order, and each waits for the one
		// before it (see takeTurn).
		lastOfGroup := make(map[string]<-chan bool)
		for _, m := range messages {
			var previous <-chan bool
			if m.MessageGroupID != "" {
				previous = lastOfGroup[m.MessageGroupID]
			}
			settled := c.start(m, keeper, receivedAt, previous)
			if m.MessageGroupID != "" {
				lastOfGroup[m.MessageGroupID] = settled
			}
		}
	}
}

// takeSlots waits for a free slot and takes every free one, up to what one
// Receive takes; 0 once ctx ends.
func (c *Consumer) takeSlots(ctx context.Context) int {
	select {
	case c.slots <- struct{}{}:
	case <-ctx.Done():
		return 0
	}
	taken := 1
	for taken < maxReceiveMessages {
		select {
		case c.slots <- struct{}{}:
			taken++
		default:
			return taken
		}
	}
	return taken
}

func (c *Consumer) giveSlots(n int) {
	for i := 0; i < n; i++ {
		<-c.slots
	}
}

func (c *Consumer) report(err error, d *Delivery) {
	defer func() {
		// A panicking OnError must not stop the receive loop or the keeper.
		_ = recover()
	}()
	c.options.OnError(err, d)
}

// sleep waits for d, or less if ctx ends first (false).
func sleep(ctx context.Context, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}
