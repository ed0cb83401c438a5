package holdshelf

import (
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/holdshelf/holdshelf/clients/go/holdshelfv1"
)

// Conversions between this package's types and the generated ones.

func durationToWire(d *time.Duration) *durationpb.Duration {
	if d == nil {
		return nil
	}
	return durationpb.New(*d)
}

func durationFromWire(d *durationpb.Duration) *time.Duration {
	if d == nil {
		return nil
	}
	return Duration(d.AsDuration())
}

func timeFromWire(t *timestamppb.Timestamp) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.AsTime()
}

func queueConfigToWire(c *QueueConfig) *holdshelfv1.QueueConfig {
	if c == nil {
		return nil
	}
	wire := &holdshelfv1.QueueConfig{
		VisibilityTimeout:         durationToWire(c.VisibilityTimeout),
		Delay:                     durationToWire(c.Delay),
		Retention:                 durationToWire(c.Retention),
		MaxMessageBytes:           c.MaxMessageBytes,
		ReceiveWaitTime:           durationToWire(c.ReceiveWaitTime),
		MaxInFlight:               c.MaxInFlight,
		MaxLeaseDuration:          durationToWire(c.MaxLeaseDuration),
		Fifo:                      c.FIFO,
		ContentBasedDeduplication: c.ContentBasedDeduplication,
		// An unknown scope goes as it is, for the broker to refuse rather
		// than read as the default.
		DeduplicationScope: holdshelfv1.DeduplicationScope(c.DeduplicationScope),
		Tags:               c.Tags,
		AccessPolicy:       c.AccessPolicy,
		SqsEncryption:      sqsEncryptionToWire(c.SQSEncryption),
	}
	if c.RedrivePolicy != nil {
		wire.RedrivePolicy = &holdshelfv1.RedrivePolicy{DeadLetterQueue: c.RedrivePolicy.DeadLetterQueue, MaxReceiveCount: c.RedrivePolicy.MaxReceiveCount}
	}
	if c.RetryPolicy != nil {
		wire.RetryPolicy = &holdshelfv1.RetryPolicy{MinBackoff: durationpb.New(c.RetryPolicy.MinBackoff), MaxBackoff: durationpb.New(c.RetryPolicy.MaxBackoff)}
	}
	return wire
}

func queueFromWire(q *holdshelfv1.Queue) *Queue {
	c := q.GetConfig()
	queue := &Queue{
		Name: q.GetName(),
		Config: QueueConfig{
			VisibilityTimeout:         durationFromWire(c.GetVisibilityTimeout()),
			Delay:                     durationFromWire(c.GetDelay()),
			Retention:                 durationFromWire(c.GetRetention()),
			MaxMessageBytes:           c.GetMaxMessageBytes(),
			ReceiveWaitTime:           durationFromWire(c.GetReceiveWaitTime()),
			MaxInFlight:               c.GetMaxInFlight(),
			MaxLeaseDuration:          durationFromWire(c.GetMaxLeaseDuration()),
			FIFO:                      c.GetFifo(),
			ContentBasedDeduplication: c.GetContentBasedDeduplication(),
			DeduplicationScope:        DeduplicationScope(c.GetDeduplicationScope()),
			Tags:                      c.GetTags(),
			AccessPolicy:              c.GetAccessPolicy(),
			SQSEncryption:             sqsEncryptionFromWire(c.GetSqsEncryption()),
		},
		Stats: QueueStats{
			Visible:          q.GetStats().GetVisible(),
			InFlight:         q.GetStats().GetInFlight(),
			Delayed:          q.GetStats().GetDelayed(),
			OldestMessageAge: q.GetStats().GetOldestMessageAge().AsDuration(),
		},
		CreateTime:             timeFromWire(q.GetCreateTime()),
		DeadLetterSourceQueues: q.GetDeadLetterSourceQueues(),
	}
	if r := c.GetRedrivePolicy(); r != nil {
		queue.Config.RedrivePolicy = &RedrivePolicy{DeadLetterQueue: r.DeadLetterQueue, MaxReceiveCount: r.MaxReceiveCount}
	}
	if r := c.GetRetryPolicy(); r != nil {
		queue.Config.RetryPolicy = &RetryPolicy{MinBackoff: r.GetMinBackoff().AsDuration(), MaxBackoff: r.GetMaxBackoff().AsDuration()}
	}
	return queue
}

func messageFromWire(m *holdshelfv1.ReceivedMessage) *Message {
	return &Message{
		ID:                    m.MessageId,
		ReceiptHandle:         m.ReceiptHandle,
		Body:                  m.Body,
		Attributes:            m.Attributes,
		TypedAttributes:       typedAttributesFromWire(m.TypedAttributes),
		ReceiveCount:          m.ReceiveCount,
		SendTime:              timeFromWire(m.SendTime),
		FirstReceiveTime:      timeFromWire(m.FirstReceiveTime),
		LeaseDeadline:         timeFromWire(m.LeaseDeadline),
		Checkpoint:            m.Checkpoint,
		DeadLetterSourceQueue: m.DeadLetterSourceQueue,
		DeadLetterReason:      m.DeadLetterReason,
		MessageGroupID:        m.MessageGroupId,
		SequenceNumber:        m.SequenceNumber,
		DeduplicationID:       m.DeduplicationId,
		TraceHeader:           m.TraceHeader,
	}
}

// sendResults pairs a send's message ids with their sequence numbers, which
// only a FIFO queue's answer carries.
func sendResults(ids, sequenceNumbers []string) []SendResult {
	results := make([]SendResult, len(ids))
	for i, id := range ids {
		results[i].MessageID = id
		if i < len(sequenceNumbers) {
			results[i].SequenceNumber = sequenceNumbers[i]
		}
	}
	return results
}

func entryResultsFromWire(results []*holdshelfv1.EntryResult) []EntryResult {
	converted := make([]EntryResult, len(results))
	for i, r := range results {
		converted[i] = EntryResult{ReceiptHandle: r.ReceiptHandle, LeaseDeadline: timeFromWire(r.LeaseDeadline)}
		if r.Code != 0 {
			converted[i].Err = &Error{Code: codes.Code(r.Code), Reason: r.Reason, Message: r.Message}
		} else {
			converted[i].DeleteOutcome = deleteOutcomeFromWire(r.DeleteOutcome)
		}
	}
	return converted
}
