package holdshelf

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/holdshelf/holdshelf/clients/go/holdshelfv1"
)

// Send stores one message and returns its id (for a FIFO queue's
// duplicate, the first send's). options may be nil. SendWithResult also
// returns a FIFO message's sequence number.
func (c *Client) Send(ctx context.Context, queue string, body []byte, options *SendOptions) (string, error) {
	result, err := c.SendWithResult(ctx, queue, body, options)
	if err != nil {
		return "", err
	}
	return result.MessageID, nil
}

// SendWithResult stores one message and returns its id and, on a FIFO
// queue, its sequence number; a send that repeats a deduplication id within
// five minutes stores nothing and returns the first send's. options may be
// nil. Sends to one queue are gathered into SendBatch calls (see
// SendBatching), each still with its own result or error; ctx bounds the
// wait, and a batch the latest deadline of its sends (none if one has
// none), while other values of ctx (outgoing metadata) are not sent.
func (c *Client) SendWithResult(ctx context.Context, queue string, body []byte, options *SendOptions) (*SendResult, error) {
	request := &holdshelfv1.SendRequest{Queue: queue, Body: body}
	if options != nil {
		typed, err := typedAttributesToWire(options.TypedAttributes, "")
		if err != nil {
			return nil, err
		}
		request.Attributes = options.Attributes
		request.TypedAttributes = typed
		request.Delay = durationToWire(options.Delay)
		request.MessageGroupId = options.MessageGroupID
		request.DeduplicationId = options.DeduplicationID
		request.TraceHeader = options.TraceHeader
	}
	return c.batcher.send(ctx, request)
}

// SendBatch stores 1 to 100 messages atomically and returns their ids in
// entry order. SendBatchWithResults also returns FIFO sequence numbers.
func (c *Client) SendBatch(ctx context.Context, queue string, entries []SendBatchEntry) ([]string, error) {
	results, err := c.SendBatchWithResults(ctx, queue, entries)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(results))
	for i, result := range results {
		ids[i] = result.MessageID
	}
	return ids, nil
}

// SendBatchWithResults stores 1 to 100 messages atomically and returns their
// ids and, on a FIFO queue, sequence numbers, in entry order. A FIFO entry
// that repeats an earlier deduplication id (of this batch, or of a send
// within five minutes) is not stored and gets the first one's.
func (c *Client) SendBatchWithResults(ctx context.Context, queue string, entries []SendBatchEntry) ([]SendResult, error) {
	wire := make([]*holdshelfv1.SendBatchEntry, len(entries))
	for i, e := range entries {
		typed, err := typedAttributesToWire(e.TypedAttributes, fmt.Sprintf("entries[%d].", i))
		if err != nil {
			return nil, err
		}
		wire[i] = &holdshelfv1.SendBatchEntry{
			Body: e.Body, Attributes: e.Attributes, TypedAttributes: typed, Delay: durationToWire(e.Delay),
			MessageGroupId: e.MessageGroupID, DeduplicationId: e.DeduplicationID, TraceHeader: e.TraceHeader,
		}
	}
	resp, err := c.rpc.SendBatch(ctx, &holdshelfv1.SendBatchRequest{Queue: queue, Entries: wire})
	if err != nil {
		return nil, FromGRPC(err)
	}
	return sendResults(resp.MessageIds, resp.SequenceNumbers), nil
}

// Receive leases up to options.MaxMessages messages, waiting up to the wait
// time for one; an empty result means none came. options may be nil.
func (c *Client) Receive(ctx context.Context, queue string, options *ReceiveOptions) ([]*Message, error) {
	request := &holdshelfv1.ReceiveRequest{Queue: queue}
	if options != nil {
		request.MaxMessages = options.MaxMessages
		request.VisibilityTimeout = durationToWire(options.VisibilityTimeout)
		request.WaitTime = durationToWire(options.WaitTime)
	}
	resp, err := c.rpc.Receive(ctx, request)
	if err != nil {
		return nil, FromGRPC(err)
	}
	messages := make([]*Message, len(resp.Messages))
	for i, m := range resp.Messages {
		messages[i] = messageFromWire(m)
	}
	return messages, nil
}

// Delete acknowledges one delivery. It succeeds also when the message was
// no longer there to delete; DeleteWithOutcome tells those cases apart.
func (c *Client) Delete(ctx context.Context, queue, receiptHandle string) error {
	_, err := c.DeleteWithOutcome(ctx, queue, receiptHandle)
	return err
}

// DeleteWithOutcome acknowledges one delivery, as Delete, and returns what
// the delete did: DeleteOutcomeDeadLettered or DeleteOutcomeReceivedAgain
// mean the lease was lost first and nothing was deleted (see DeleteOutcome).
func (c *Client) DeleteWithOutcome(ctx context.Context, queue, receiptHandle string) (DeleteOutcome, error) {
	resp, err := c.rpc.Delete(ctx, &holdshelfv1.DeleteRequest{Queue: queue, ReceiptHandle: receiptHandle})
	if err != nil {
		return DeleteOutcomeUnspecified, FromGRPC(err)
	}
	return deleteOutcomeFromWire(resp.Outcome), nil
}

// DeleteBatch acknowledges 1 to 100 deliveries; each entry's outcome is in
// its EntryResult, in request order, with its DeleteOutcome on success.
func (c *Client) DeleteBatch(ctx context.Context, queue string, receiptHandles []string) ([]EntryResult, error) {
	resp, err := c.rpc.DeleteBatch(ctx, &holdshelfv1.DeleteBatchRequest{Queue: queue, ReceiptHandles: receiptHandles})
	if err != nil {
		return nil, FromGRPC(err)
	}
	return entryResultsFromWire(resp.Results), nil
}

// ChangeVisibility sets a delivery's lease to run until now + timeout (0
// releases it) and returns the new deadline.
func (c *Client) ChangeVisibility(ctx context.Context, queue, receiptHandle string, timeout time.Duration) (time.Time, error) {
	resp, err := c.rpc.ChangeVisibility(ctx, &holdshelfv1.ChangeVisibilityRequest{
		Queue: queue, ReceiptHandle: receiptHandle, VisibilityTimeout: durationpb.New(timeout),
	})
	if err != nil {
		return time.Time{}, FromGRPC(err)
	}
	return timeFromWire(resp.LeaseDeadline), nil
}

// ChangeVisibilityBatch sets the leases of 1 to 100 deliveries to the same
// timeout; each entry's outcome is in its EntryResult, in request order.
func (c *Client) ChangeVisibilityBatch(ctx context.Context, queue string, receiptHandles []string, timeout time.Duration) ([]EntryResult, error) {
	resp, err := c.rpc.ChangeVisibilityBatch(ctx, &holdshelfv1.ChangeVisibilityBatchRequest{
		Queue: queue, ReceiptHandles: receiptHandles, VisibilityTimeout: durationpb.New(timeout),
	})
	if err != nil {
		return nil, FromGRPC(err)
	}
	return entryResultsFromWire(resp.Results), nil
}

// Heartbeat opens a raw Heartbeat stream, in the generated types: the
// Consumer drives one for you, and its comments in holdshelf.v1 say how to
// drive your own. FromGRPC converts the stream's errors.
func (c *Client) Heartbeat(ctx context.Context) (holdshelfv1.QueueService_HeartbeatClient, error) {
	stream, err := c.rpc.Heartbeat(ctx)
	return stream, FromGRPC(err)
}

// Subscribe opens a raw Subscribe stream, in the generated types: the
// Consumer drives one for you, and its comments in holdshelf.v1 say how to
// drive your own. FromGRPC converts the stream's errors.
func (c *Client) Subscribe(ctx context.Context) (holdshelfv1.QueueService_SubscribeClient, error) {
	stream, err := c.rpc.Subscribe(ctx)
	return stream, FromGRPC(err)
}
