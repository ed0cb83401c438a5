package holdshelf

import "time"

// Duration returns a pointer to d, for the optional durations below, where
// nil means "the default" and a pointer to 0 means zero.
func Duration(d time.Duration) *time.Duration { return &d }

// Queue is a queue with its configuration and its message counts.
type Queue struct {
	Name string
	// Config has every default filled in: every duration is set, and
	// RedrivePolicy and RetryPolicy are nil when the queue has none.
	Config QueueConfig
	Stats  QueueStats
	// CreateTime is when the queue was created.
	CreateTime time.Time
	// DeadLetterSourceQueues are the queues whose RedrivePolicy names this one.
	DeadLetterSourceQueues []string
}

// QueueConfig is how a queue treats its messages. For CreateQueue and
// UpdateQueue, a nil duration or a zero count takes the broker's default; see
// holdshelf.v1.QueueConfig for each field's default and bounds.
type QueueConfig struct {
	VisibilityTimeout *time.Duration
	Delay             *time.Duration
	Retention         *time.Duration
	MaxMessageBytes   int32
	ReceiveWaitTime   *time.Duration
	MaxInFlight       int32
	MaxLeaseDuration  *time.Duration
	RedrivePolicy     *RedrivePolicy
	RetryPolicy       *RetryPolicy
}

// RedrivePolicy moves a message to DeadLetterQueue once it has been received
// MaxReceiveCount times without a delete.
type RedrivePolicy struct {
	DeadLetterQueue string
	MaxReceiveCount int32
}

// RetryPolicy spaces retries out: a message whose lease ran out waits
// min(MaxBackoff, MinBackoff·2^(receive count−1)) before its next delivery.
type RetryPolicy struct {
	MinBackoff time.Duration
	MaxBackoff time.Duration
}

// QueueStats are a queue's message counts, exact at the time of the call.
type QueueStats struct {
	Visible  int64
	InFlight int64
	Delayed  int64
	// OldestMessageAge is zero when the queue is empty.
	OldestMessageAge time.Duration
}

// QueuePage is one page of ListQueues.
type QueuePage struct {
	Queues []*Queue
	// NextPageToken fetches the next page; empty on the last one.
	NextPageToken string
}

// ListQueuesOptions selects a page of queues; the zero value is the first
// page of all queues, 100 at most.
type ListQueuesOptions struct {
	Prefix    string
	PageSize  int32
	PageToken string
}

// SendOptions are a message's optional parts.
type SendOptions struct {
	Attributes map[string]string
	// Delay hides the message for this long after it is sent; nil means the
	// queue's delay.
	Delay *time.Duration
}

// SendBatchEntry is one message of a SendBatch.
type SendBatchEntry struct {
	Body       []byte
	Attributes map[string]string
	// Delay: nil means the queue's delay.
	Delay *time.Duration
}

// ReceiveOptions shape a Receive; nil or the zero value takes the defaults.
type ReceiveOptions struct {
	// MaxMessages is 1 to 100; 0 means 1.
	MaxMessages int32
	// VisibilityTimeout is the lease; nil means the queue's.
	VisibilityTimeout *time.Duration
	// WaitTime is the long poll's longest wait; nil means the queue's
	// receive_wait_time.
	WaitTime *time.Duration
}

// Message is one delivery of a message.
type Message struct {
	ID            string
	ReceiptHandle string
	Body          []byte
	Attributes    map[string]string
	// ReceiveCount is 1 on the first delivery.
	ReceiveCount     int32
	SendTime         time.Time
	FirstReceiveTime time.Time
	LeaseDeadline    time.Time
	// Checkpoint is the latest progress an earlier delivery stored; nil when
	// none was.
	Checkpoint []byte
	// DeadLetterSourceQueue and DeadLetterReason are set in a dead-letter queue.
	DeadLetterSourceQueue string
	DeadLetterReason      string
}

// EntryResult is the outcome of one receipt handle of a batch call.
type EntryResult struct {
	ReceiptHandle string
	// Err is nil on success, else an *Error with the entry's code and reason.
	Err error
	// LeaseDeadline is the new deadline (ChangeVisibilityBatch, on success).
	LeaseDeadline time.Time
}

// RedriveOptions name where RedriveMessages moves messages from and to.
type RedriveOptions struct {
	DeadLetterQueue string
	// DestinationQueue is empty to move each message back to its source queue.
	DestinationQueue string
	// MaxMessages is 0 for every eligible message.
	MaxMessages int64
	// MaxPerSecond is 0 for as fast as possible.
	MaxPerSecond int32
}
