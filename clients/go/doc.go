// Package holdshelf is the Go client of a holdshelf broker: a Client with one
// method per RPC of holdshelf.v1.QueueService, whose single sends are
// gathered into SendBatch calls (see SendBatching), and a Consumer that
// runs a handler on each message pushed on one Subscribe stream, under flow
// control, while it keeps the message's lease alive on that stream (on a
// broker without Subscribe, or with ConsumerOptions.Subscribe off: Receive
// and a Heartbeat stream).
//
// A worker is a handler:
//
//	client, err := holdshelf.Dial(ctx, "127.0.0.1:50051")
//	...
//	consumer, err := holdshelf.NewConsumer(client, "jobs", func(ctx context.Context, d *holdshelf.Delivery) error {
//		return process(ctx, d.Message.Body) // nil deletes the message; an error releases it
//	}, holdshelf.ConsumerOptions{Concurrency: 4})
//	...
//	ctx, stop := holdshelf.SignalContext(context.Background()) // SIGTERM or SIGINT stops it gracefully
//	defer stop()
//	err = consumer.Run(ctx)
//
// On a FIFO queue (QueueConfig.FIFO), sends name SendOptions.MessageGroupID
// and DeduplicationID, SendWithResult returns the sequence number (batched
// sends keep their order), and the Consumer handles each group's messages
// one at a time, in order; see docs/fifo.md in the repository.
//
// Failed calls return *Error, which carries the gRPC code, holdshelf's stable
// reason and the violated fields; see IsReason. The generated protobuf types
// and gRPC stubs are in the holdshelfv1 subpackage, for what this package
// does not wrap (Client.Heartbeat and Client.Subscribe give the raw streams).
package holdshelf
