package holdshelf

import (
	"fmt"
	"time"
)

// Batching defaults and the protocol's limits (SendBatch takes 1 to 100
// entries and at most 4 MiB in all).
const (
	// 1 ms: a service that awaits each send sends at most once per delay and
	// round trip; 1 ms gathered 32 such senders as well as 5 ms did, at about
	// twice the rate (docs/performance.md, scenario 16).
	defaultBatchDelay = time.Millisecond
	defaultBatchBytes = 1 << 20
	maxBatchEntries   = 100
	maxBatchBytes     = 4 << 20
)

// SendBatching says how a Client gathers its single sends (Send,
// SendWithResult) into SendBatch calls, one queue at a time, as Pub/Sub's
// publishers and Kafka's linger.ms do; the zero value takes every default.
// A batch goes once it holds MaxMessages sends or MaxBytes, or Delay after
// its first send. Each call still gets its own result or error. A queue
// has one batch in flight at a time, and sends keep their order, so a FIFO
// group's messages are stored in the order they were sent.
type SendBatching struct {
	// MaxMessages is the most sends in one SendBatch: 1 to 100; 0 means 100.
	MaxMessages int
	// MaxBytes is the most bytes (bodies, attribute keys and values, typed
	// attributes' names, data types and values, group and deduplication ids)
	// of one SendBatch, up to 4 MiB; 0 means 1 MiB. A send larger than that
	// alone goes as a unary Send, in its turn.
	MaxBytes int
	// Delay is how long a batch's first send waits for others; nil means
	// 1 ms, Duration(0) turns batching off: every send is a unary Send.
	Delay *time.Duration
}

// WithSendBatching sets how single sends are gathered into SendBatch calls;
// without it they are, with SendBatching's defaults.
func WithSendBatching(batching SendBatching) Option {
	return func(s *dialSettings) error {
		switch {
		case batching.MaxMessages < 0 || batching.MaxMessages > maxBatchEntries:
			return fmt.Errorf("holdshelf: SendBatching.MaxMessages must be 0 to %d, not %d", maxBatchEntries, batching.MaxMessages)
		case batching.MaxBytes < 0 || batching.MaxBytes > maxBatchBytes:
			return fmt.Errorf("holdshelf: SendBatching.MaxBytes must be 0 to %d, not %d", maxBatchBytes, batching.MaxBytes)
		case batching.Delay != nil && *batching.Delay < 0:
			return fmt.Errorf("holdshelf: SendBatching.Delay must not be negative, not %v", *batching.Delay)
		}
		s.batching = batching
		return nil
	}
}

// resolved fills in the defaults.
func (b SendBatching) resolved() SendBatching {
	if b.MaxMessages == 0 {
		b.MaxMessages = maxBatchEntries
	}
	if b.MaxBytes == 0 {
		b.MaxBytes = defaultBatchBytes
	}
	if b.Delay == nil {
		b.Delay = Duration(defaultBatchDelay)
	}
	return b
}
