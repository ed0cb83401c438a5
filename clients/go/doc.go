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
// Dial connects over TLS with the system's roots, except to a loopback
// address, which it reaches in plaintext; WithTLS gives other TLS files,
// WithPlaintext plaintext to any address. A token (WithToken) never goes in
// plaintext beyond loopback unless AllowPlaintextToken says so.
//
// Run returns at once, with an error wrapping an *Error, when the broker
// refuses the Consumer for good (QUEUE_NOT_FOUND, also when the queue is
// deleted while it runs, PERMISSION_DENIED, a token error); everything else
// goes to OnError and is retried. Handlers' contexts carry the values of Run's context (trace
// spans, loggers) but not its cancellation, so a stop lets them finish.
//
// Durations follow one rule: one that may be left out (in QueueConfig,
// SendOptions, ReceiveOptions, ConsumerOptions, SendBatching) is a
// *time.Duration, where nil takes the default and Duration(d) sets it,
// Duration(0) meaning zero; one always given (a method's argument,
// RetryPolicy's backoffs, what the broker reports) is a time.Duration.
//
// Messages carry String attributes (Attributes) and typed ones
// (TypedAttributes: Number, Binary, labelled String, as Amazon SQS types
// them), which round-trip with the broker's SQS endpoint.
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
