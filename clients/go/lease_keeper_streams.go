package holdshelf

// The streams a leaseKeeper speaks: Heartbeat (beside unary Receives) or
// Subscribe (which also delivers and takes acks). The keeper builds
// wire-neutral requests and reads wire-neutral responses; a keeperWire
// translates.

import (
	"context"
	"time"

	"github.com/holdshelf/holdshelf/clients/go/holdshelfv1"
)

// keeperWire opens the stream a leaseKeeper drives.
type keeperWire interface {
	// open opens a fresh stream; called again after each break.
	open(ctx context.Context) (keeperStream, error)
	// name names the RPC in errors.
	name() string
	// answersEveryRequest: Heartbeat answers even an empty request, which
	// proves the stream works; Subscribe answers only acks and renewals.
	answersEveryRequest() bool
	// carriesAcks: acks go on the stream rather than as unary Deletes.
	carriesAcks() bool
}

// keeperStream is one open stream.
type keeperStream interface {
	send(request *keeperRequest) error
	// recv returns the next response; io.EOF once the server ended with OK.
	recv() (*keeperResponse, error)
	closeSend() error
}

// keeperRequest is one request of a keeper's stream.
type keeperRequest struct {
	first    bool // the stream's first: it opens the subscription
	renewals []*holdshelfv1.LeaseRenewal
	acks     []string
	flow     *holdshelfv1.FlowControl // nil: unchanged
}

// keeperResponse is one response of a keeper's stream.
type keeperResponse struct {
	messages   []*holdshelfv1.ReceivedMessage
	acks       []*holdshelfv1.AckResult
	leases     []*holdshelfv1.LeaseState
	receivedAt time.Time
}

// heartbeatWire is the Heartbeat stream of a Consumer that receives with
// unary Receives and deletes with unary Deletes.
type heartbeatWire struct {
	queue   string
	openRPC func(ctx context.Context) (holdshelfv1.QueueService_HeartbeatClient, error)
}

func (w heartbeatWire) open(ctx context.Context) (keeperStream, error) {
	stream, err := w.openRPC(ctx)
	if err != nil {
		return nil, err
	}
	return heartbeatStream{queue: w.queue, stream: stream}, nil
}

func (heartbeatWire) name() string              { return "Heartbeat" }
func (heartbeatWire) answersEveryRequest() bool { return true }
func (heartbeatWire) carriesAcks() bool         { return false }

type heartbeatStream struct {
	queue  string
	stream holdshelfv1.QueueService_HeartbeatClient
}

func (s heartbeatStream) send(request *keeperRequest) error {
	// Every request names the queue and release_on_disconnect: the stream
	// takes them from the first, the rest must not contradict it.
	return s.stream.Send(&holdshelfv1.HeartbeatRequest{Queue: s.queue, ReleaseOnDisconnect: true, Leases: request.renewals})
}

func (s heartbeatStream) recv() (*keeperResponse, error) {
	resp, err := s.stream.Recv()
	if err != nil {
		return nil, err
	}
	return &keeperResponse{leases: resp.Leases, receivedAt: time.Now()}, nil
}

func (s heartbeatStream) closeSend() error { return s.stream.CloseSend() }
