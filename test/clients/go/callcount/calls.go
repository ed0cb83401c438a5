// Package callcount counts the RPCs a test program's client makes, so a
// program can say which calls a library made (a Consumer on Subscribe makes
// no Receive; batched sends make few SendBatch calls).
package callcount

import (
	"context"
	"path"
	"sync"

	"google.golang.org/grpc"

	holdshelf "github.com/holdshelf/holdshelf/clients/go"
)

// Calls counts the RPCs a client makes, by method name ("Subscribe").
type Calls struct {
	mu     sync.Mutex
	counts map[string]int
}

// New returns an empty count.
func New() *Calls { return &Calls{counts: make(map[string]int)} }

func (c *Calls) add(method string) {
	c.mu.Lock()
	c.counts[path.Base(method)]++
	c.mu.Unlock()
}

// Snapshot returns the counts so far.
func (c *Calls) Snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.counts))
	for method, n := range c.counts {
		out[method] = n
	}
	return out
}

// Option has a client count its calls here.
func (c *Calls) Option() holdshelf.Option {
	return holdshelf.WithDialOptions(
		grpc.WithUnaryInterceptor(func(ctx context.Context, method string, req, reply interface{}, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
			c.add(method)
			return invoker(ctx, method, req, reply, cc, opts...)
		}),
		grpc.WithStreamInterceptor(func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
			c.add(method)
			return streamer(ctx, desc, cc, method, opts...)
		}),
	)
}
