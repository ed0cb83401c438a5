package main

import (
	"context"
	"path"
	"sync"

	"google.golang.org/grpc"

	holdshelf "holdshelf/clients/go"
)

// calls counts the RPCs a client makes, by method name ("Subscribe").
type calls struct {
	mu     sync.Mutex
	counts map[string]int
}

func newCalls() *calls { return &calls{counts: make(map[string]int)} }

func (c *calls) add(method string) {
	c.mu.Lock()
	c.counts[path.Base(method)]++
	c.mu.Unlock()
}

// snapshot returns the counts so far.
func (c *calls) snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.counts))
	for method, n := range c.counts {
		out[method] = n
	}
	return out
}

// option has a client count its calls here.
func (c *calls) option() holdshelf.Option {
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
