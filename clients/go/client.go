package holdshelf

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"

	"github.com/holdshelf/holdshelf/clients/go/holdshelfv1"
)

// Client calls one broker (or any broker of a cluster: each forwards a call
// to the queue's owner). It is safe for concurrent use; Close it when done.
type Client struct {
	conn    *grpc.ClientConn
	rpc     holdshelfv1.QueueServiceClient
	batcher *sendBatcher
}

// Dial returns a Client of the broker at address ("host:port"). It connects
// over TLS with the system's roots, or with WithTLS's files, except to a
// loopback address (127.0.0.0/8, ::1, localhost, a unix: socket), which it
// reaches in plaintext unless WithTLS is given; WithPlaintext connects
// without TLS to any address. It never sends WithToken's token in plaintext
// beyond loopback, unless AllowPlaintextToken is given. It does not wait for
// a connection: the first call connects, and gRPC reconnects in the
// background after a loss.
func Dial(ctx context.Context, address string, options ...Option) (*Client, error) {
	var settings dialSettings
	for _, option := range options {
		if err := option(&settings); err != nil {
			return nil, err
		}
	}
	// gRPC's default reconnect backoff grows to 120 s; a restarted broker
	// should be found again within seconds (the Consumer's streams and
	// receives retry on their own schedule meanwhile).
	reconnect := backoff.DefaultConfig
	reconnect.BaseDelay = 100 * time.Millisecond
	reconnect.MaxDelay = 5 * time.Second
	dialOptions := []grpc.DialOption{grpc.WithConnectParams(grpc.ConnectParams{Backoff: reconnect, MinConnectTimeout: 20 * time.Second})}
	transport, err := settings.transportFor(address)
	if err != nil {
		return nil, err
	}
	if transport != nil {
		dialOptions = append(dialOptions, grpc.WithTransportCredentials(transport))
	} else {
		// gRPC-Go 1.33 (Debian 12's) predates credentials/insecure.
		dialOptions = append(dialOptions, grpc.WithInsecure())
	}
	if settings.token != "" {
		dialOptions = append(dialOptions, grpc.WithPerRPCCredentials(bearerToken{header: "Bearer " + settings.token}))
	}
	dialOptions = append(dialOptions, settings.extra...)
	conn, err := grpc.DialContext(ctx, address, dialOptions...)
	if err != nil {
		return nil, fmt.Errorf("holdshelf: dial %s: %w", address, err)
	}
	rpc := holdshelfv1.NewQueueServiceClient(conn)
	return &Client{conn: conn, rpc: rpc, batcher: newSendBatcher(rpc, settings.batching)}, nil
}

// NewClient wraps a connection the caller made and still owns; its sends
// are batched with SendBatching's defaults.
func NewClient(conn grpc.ClientConnInterface) *Client {
	rpc := holdshelfv1.NewQueueServiceClient(conn)
	return &Client{rpc: rpc, batcher: newSendBatcher(rpc, SendBatching{})}
}

// Close sends the sends still gathered into a batch and waits for their
// answers, then closes the connection Dial made; other calls in progress
// fail. Sends after Close began go unary (and fail once it has closed).
func (c *Client) Close() error {
	c.batcher.close()
	if c.conn == nil {
		return nil
	}
	return c.conn.Close()
}

// Stub is the generated gRPC client, for what this package does not wrap.
func (c *Client) Stub() holdshelfv1.QueueServiceClient { return c.rpc }

// CreateQueue creates a queue; creating one that exists with the same
// configuration returns it. A nil config takes every default.
func (c *Client) CreateQueue(ctx context.Context, name string, config *QueueConfig) (*Queue, error) {
	resp, err := c.rpc.CreateQueue(ctx, &holdshelfv1.CreateQueueRequest{Name: name, Config: queueConfigToWire(config)})
	if err != nil {
		return nil, FromGRPC(err)
	}
	return queueFromWire(resp.Queue), nil
}

// GetQueue returns a queue with its configuration and counts.
func (c *Client) GetQueue(ctx context.Context, name string) (*Queue, error) {
	resp, err := c.rpc.GetQueue(ctx, &holdshelfv1.GetQueueRequest{Name: name})
	if err != nil {
		return nil, FromGRPC(err)
	}
	return queueFromWire(resp.Queue), nil
}

// ListQueues returns one page of queues in name order.
func (c *Client) ListQueues(ctx context.Context, options ListQueuesOptions) (*QueuePage, error) {
	resp, err := c.rpc.ListQueues(ctx, &holdshelfv1.ListQueuesRequest{Prefix: options.Prefix, PageSize: options.PageSize, PageToken: options.PageToken})
	if err != nil {
		return nil, FromGRPC(err)
	}
	page := &QueuePage{NextPageToken: resp.NextPageToken, Queues: make([]*Queue, len(resp.Queues))}
	for i, q := range resp.Queues {
		page.Queues[i] = queueFromWire(q)
	}
	return page, nil
}

// UpdateQueue changes a queue's configuration. Without options it replaces
// the whole configuration: nil fields take their defaults, not their
// current values, and the queue's tags are removed. With Fields, only the
// named fields change.
func (c *Client) UpdateQueue(ctx context.Context, name string, config *QueueConfig, options ...UpdateOption) (*Queue, error) {
	request, err := updateQueueRequest(name, config, options)
	if err != nil {
		return nil, err
	}
	resp, err := c.rpc.UpdateQueue(ctx, request)
	if err != nil {
		return nil, FromGRPC(err)
	}
	return queueFromWire(resp.Queue), nil
}

// DeleteQueue deletes a queue and its messages.
func (c *Client) DeleteQueue(ctx context.Context, name string) error {
	_, err := c.rpc.DeleteQueue(ctx, &holdshelfv1.DeleteQueueRequest{Name: name})
	return FromGRPC(err)
}

// PurgeQueue removes every message of a queue and returns how many.
func (c *Client) PurgeQueue(ctx context.Context, name string) (int64, error) {
	resp, err := c.rpc.PurgeQueue(ctx, &holdshelfv1.PurgeQueueRequest{Name: name})
	if err != nil {
		return 0, FromGRPC(err)
	}
	return resp.PurgedCount, nil
}

// RedriveMessages moves visible messages out of a dead-letter queue and
// returns how many moved.
func (c *Client) RedriveMessages(ctx context.Context, options RedriveOptions) (int64, error) {
	resp, err := c.rpc.RedriveMessages(ctx, &holdshelfv1.RedriveMessagesRequest{
		DeadLetterQueue:  options.DeadLetterQueue,
		DestinationQueue: options.DestinationQueue,
		MaxMessages:      options.MaxMessages,
		MaxPerSecond:     options.MaxPerSecond,
	})
	if err != nil {
		return 0, FromGRPC(err)
	}
	return resp.MovedCount, nil
}
