package holdshelf

// A Consumer's Subscribe stream, as its leaseKeeper drives it: the broker
// pushes deliveries up to the stream's credit, and acks, renewals, releases
// and failures go up the same stream.

import (
	"context"
	"time"

	"github.com/holdshelf/holdshelf/clients/go/holdshelfv1"
)

// maxAcks is the protocol's limit of acks per Subscribe request; the rest
// wait for the next request.
const maxAcks = 1000

// maxOutstandingMessages is the most credit a Subscribe stream may ask for.
const maxOutstandingMessages = 10000

// subscribeWire opens a queue's Subscribe streams with
// release_on_disconnect: a consumer that crashes gives its messages back at
// once.
type subscribeWire struct {
	queue string
	// visibility is each delivery's lease; nil means the queue's.
	visibility *time.Duration
	openRPC    func(ctx context.Context) (holdshelfv1.QueueService_SubscribeClient, error)
}

func (w subscribeWire) open(ctx context.Context) (keeperStream, error) {
	stream, err := w.openRPC(ctx)
	if err != nil {
		return nil, err
	}
	return subscribeStream{wire: w, stream: stream}, nil
}

func (subscribeWire) name() string              { return "Subscribe" }
func (subscribeWire) answersEveryRequest() bool { return false }
func (subscribeWire) carriesAcks() bool         { return true }

type subscribeStream struct {
	wire   subscribeWire
	stream holdshelfv1.QueueService_SubscribeClient
}

func (s subscribeStream) send(request *keeperRequest) error {
	wire := &holdshelfv1.SubscribeRequest{AckReceiptHandles: request.acks, Leases: request.renewals, FlowControl: request.flow}
	if request.first {
		wire.Queue = s.wire.queue
		wire.VisibilityTimeout = durationToWire(s.wire.visibility)
		wire.ReleaseOnDisconnect = true
	}
	return s.stream.Send(wire)
}

func (s subscribeStream) recv() (*keeperResponse, error) {
	resp, err := s.stream.Recv()
	if err != nil {
		return nil, err
	}
	return &keeperResponse{messages: resp.Messages, acks: resp.Acks, leases: resp.Leases, receivedAt: time.Now()}, nil
}

func (s subscribeStream) closeSend() error { return s.stream.CloseSend() }

// flowControl is a Consumer's credit: as many messages as it works on at
// once, and its byte limit (0: none).
func flowControl(messages int, bytes int64) *holdshelfv1.FlowControl {
	if messages > maxOutstandingMessages {
		messages = maxOutstandingMessages
	}
	return &holdshelfv1.FlowControl{MaxOutstandingMessages: int32(messages), MaxOutstandingBytes: bytes}
}
