package main

import (
	"context"
	"io"
	"net"

	"google.golang.org/grpc"

	holdshelf "github.com/holdshelf/holdshelf/clients/go"
	"github.com/holdshelf/holdshelf/clients/go/holdshelfv1"
)

// oldBroker plays a broker from before Subscribe: it answers Subscribe
// UNIMPLEMENTED (the embedded UnimplementedQueueServiceServer's answer) and
// passes the calls a Consumer makes otherwise to the real broker.
type oldBroker struct {
	holdshelfv1.UnimplementedQueueServiceServer
	upstream holdshelfv1.QueueServiceClient
}

// startOldBroker serves an oldBroker in front of client's broker on a
// loopback port, and returns its address and how to stop it.
func startOldBroker(client *holdshelf.Client) (string, func(), error) {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	server := grpc.NewServer()
	holdshelfv1.RegisterQueueServiceServer(server, &oldBroker{upstream: client.Stub()})
	go server.Serve(listener)
	return listener.Addr().String(), server.Stop, nil
}

func (b *oldBroker) GetQueue(ctx context.Context, r *holdshelfv1.GetQueueRequest) (*holdshelfv1.GetQueueResponse, error) {
	return b.upstream.GetQueue(ctx, r)
}

func (b *oldBroker) Receive(ctx context.Context, r *holdshelfv1.ReceiveRequest) (*holdshelfv1.ReceiveResponse, error) {
	return b.upstream.Receive(ctx, r)
}

func (b *oldBroker) Delete(ctx context.Context, r *holdshelfv1.DeleteRequest) (*holdshelfv1.DeleteResponse, error) {
	return b.upstream.Delete(ctx, r)
}

func (b *oldBroker) ChangeVisibilityBatch(ctx context.Context, r *holdshelfv1.ChangeVisibilityBatchRequest) (*holdshelfv1.ChangeVisibilityBatchResponse, error) {
	return b.upstream.ChangeVisibilityBatch(ctx, r)
}

func (b *oldBroker) Heartbeat(stream holdshelfv1.QueueService_HeartbeatServer) error {
	upstream, err := b.upstream.Heartbeat(stream.Context())
	if err != nil {
		return err
	}
	go func() {
		for {
			request, err := stream.Recv()
			if err != nil {
				_ = upstream.CloseSend()
				return
			}
			if upstream.Send(request) != nil {
				return
			}
		}
	}()
	for {
		resp, err := upstream.Recv()
		if err == io.EOF {
			return nil // the broker ended the stream cleanly
		}
		if err != nil {
			return err
		}
		if err := stream.Send(resp); err != nil {
			return err
		}
	}
}
