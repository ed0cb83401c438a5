package holdshelf

import (
	"fmt"
	"time"

	"github.com/holdshelf/holdshelf/clients/go/holdshelfv1"
)

// Duration returns a pointer to d, for the optional durations below, where
// nil means "the default" and a pointer to 0 means zero.
func Duration(d time.Duration) *time.Duration { return &d }

// Bool returns a pointer to b, for the optional switches whose nil means
// their default (ConsumerOptions.Subscribe).
func Bool(b bool) *bool { return &b }

// Queue is a queue with its configuration and its message counts.
type Queue struct {
	Name string
	// Config has every default filled in: every duration is set, and
	// RedrivePolicy, RetryPolicy and SQSEncryption are nil and Tags empty
	// when the queue has none.
	Config QueueConfig
	Stats  QueueStats
	// CreateTime is when the queue was created.
	CreateTime time.Time
	// DeadLetterSourceQueues are the queues whose RedrivePolicy names this one.
	DeadLetterSourceQueues []string
}

// QueueConfig is how a queue treats its messages. For CreateQueue and
// UpdateQueue, a nil duration or a zero count takes the broker's default; see
// holdshelf.v1.QueueConfig for each field's default and bounds. UpdateQueue
// without Fields replaces the whole configuration, Tags, AccessPolicy and
// SQSEncryption included: a config read with GetQueue and changed keeps them.
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
	// FIFO makes a FIFO queue: every send names a MessageGroupID, and each
	// group's messages are delivered one lease at a time, in send order
	// (docs/fifo.md). Set at creation only: UpdateQueue without Fields must
	// repeat it, as changing it fails with INVALID_ARGUMENT on config.fifo.
	FIFO bool
	// ContentBasedDeduplication (FIFO queues only): a send without a
	// DeduplicationID is deduplicated by the SHA-256 of its body.
	ContentBasedDeduplication bool
	// DeduplicationScope (FIFO queues only) is where deduplication ids must
	// be unique within the five-minute window; the zero value means the
	// queue. A queue read back shows DeduplicationScopeQueue or
	// DeduplicationScopeMessageGroup.
	DeduplicationScope DeduplicationScope
	// Tags label the queue (Amazon SQS's queue tags); the broker keeps them
	// but never reads them. At most 50; keys 1 to 128 characters, values up
	// to 256. Empty or nil means none.
	Tags map[string]string
	// AccessPolicy is Amazon SQS's queue policy (its Policy attribute): a
	// JSON object of at most 8192 bytes, kept and shown as given but never
	// enforced (the access keys' file decides what a caller may do). Empty
	// means none.
	AccessPolicy string
	// SQSEncryption is Amazon SQS's server-side encryption settings, kept and
	// shown; nil means SQS-managed encryption, as a new Amazon SQS queue has.
	SQSEncryption *SQSEncryption
}

// DeduplicationScope is where a FIFO queue compares deduplication ids; its
// values are holdshelf.v1.DeduplicationScope's numbers.
type DeduplicationScope int32

const (
	// DeduplicationScopeDefault leaves the scope unset: the queue.
	DeduplicationScopeDefault = DeduplicationScope(holdshelfv1.DeduplicationScope_DEDUPLICATION_SCOPE_UNSPECIFIED)
	// DeduplicationScopeQueue compares an id with those sent to any group
	// of the queue.
	DeduplicationScopeQueue = DeduplicationScope(holdshelfv1.DeduplicationScope_DEDUPLICATION_SCOPE_QUEUE)
	// DeduplicationScopeMessageGroup compares an id only with those sent to
	// the same message group (SQS's "messageGroup" scope).
	DeduplicationScopeMessageGroup = DeduplicationScope(holdshelfv1.DeduplicationScope_DEDUPLICATION_SCOPE_MESSAGE_GROUP)
)

// String names a scope as the proto does ("QUEUE", "MESSAGE_GROUP").
func (s DeduplicationScope) String() string {
	switch s {
	case DeduplicationScopeDefault:
		return "UNSPECIFIED"
	case DeduplicationScopeQueue:
		return "QUEUE"
	case DeduplicationScopeMessageGroup:
		return "MESSAGE_GROUP"
	}
	return fmt.Sprintf("DeduplicationScope(%d)", int(s))
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
	// Attributes are String attributes; a name may be here or in
	// TypedAttributes, not both.
	Attributes map[string]string
	// TypedAttributes are Number, Binary and labelled String attributes,
	// each received back with its data type as sent.
	TypedAttributes map[string]TypedAttribute
	// Delay hides the message for this long after it is sent; nil means the
	// queue's delay. A FIFO queue refuses it: only its own delay applies.
	Delay *time.Duration
	// MessageGroupID is the message's group on a FIFO queue, where it is
	// required (1 to 128 printable ASCII characters, no spaces): a group's
	// messages are delivered in send order. A standard queue refuses it
	// with NOT_A_FIFO_QUEUE.
	MessageGroupID string
	// DeduplicationID (FIFO queues): a send repeating the id of one in the
	// last five minutes stores nothing and returns that send's message id
	// and sequence number. Required unless the queue has
	// ContentBasedDeduplication.
	DeduplicationID string
	// TraceHeader links the consumer's span to the producer's: SQS's
	// AWSTraceHeader, as AWS X-Ray and OpenTelemetry's AWS X-Ray propagator
	// write it. At most 512 characters of printable ASCII; empty means none.
	// It does not count toward the queue's maximum message size.
	TraceHeader string
}

// SendBatchEntry is one message of a SendBatch.
type SendBatchEntry struct {
	Body []byte
	// Attributes and TypedAttributes: as in SendOptions.
	Attributes      map[string]string
	TypedAttributes map[string]TypedAttribute
	// Delay: nil means the queue's delay; a FIFO queue refuses it.
	Delay *time.Duration
	// MessageGroupID, DeduplicationID and TraceHeader: as in SendOptions.
	MessageGroupID  string
	DeduplicationID string
	TraceHeader     string
}

// SendResult is what a send stored or, for a FIFO queue's duplicate, found
// already stored.
type SendResult struct {
	MessageID string
	// SequenceNumber is a FIFO message's number in its queue: 20 decimal
	// digits, so that comparing the strings compares the numbers; increasing
	// in send order, not consecutive. Empty on a standard queue.
	SequenceNumber string
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
	// Attributes are the String attributes as sent (an SQS client's plain
	// "String" ones included); nil when none were.
	Attributes map[string]string
	// TypedAttributes are the typed attributes as sent (an SQS client's
	// Number, Binary and labelled String ones); nil when none were.
	TypedAttributes map[string]TypedAttribute
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
	// MessageGroupID, SequenceNumber and DeduplicationID are set on a FIFO
	// queue, empty on a standard one: the group as sent; the number Send
	// returned (a dead-letter move or a redrive gives a new one); the id the
	// send was deduplicated by (the body's SHA-256 in hex under content-based
	// deduplication, the message id after a dead-letter move).
	MessageGroupID  string
	SequenceNumber  string
	DeduplicationID string
	// TraceHeader is the tracing header the message was sent with
	// (SendOptions.TraceHeader, or SQS's AWSTraceHeader); empty when none.
	TraceHeader string
}

// EntryResult is the outcome of one receipt handle of a batch call.
type EntryResult struct {
	ReceiptHandle string
	// Err is nil on success, else an *Error with the entry's code and reason.
	Err error
	// LeaseDeadline is the new deadline (ChangeVisibilityBatch, on success).
	LeaseDeadline time.Time
	// DeleteOutcome is what the delete did (DeleteBatch, on success).
	DeleteOutcome DeleteOutcome
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
