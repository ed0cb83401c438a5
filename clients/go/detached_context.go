package holdshelf

import (
	"context"
	"time"
)

// detachedContext carries its parent's values (trace spans, loggers,
// outgoing metadata) but neither its deadline nor its cancellation: a
// handler's context is made from Run's this way, so that a stop lets running
// handlers finish within the grace period rather than cancelling them at
// once. Go 1.21's context.WithoutCancel does the same; this package builds
// with Go 1.19.
type detachedContext struct {
	parent context.Context
}

func (detachedContext) Deadline() (time.Time, bool) { return time.Time{}, false }

// Done is nil: a detached context is never cancelled, so context.WithCancel
// on it starts no goroutine.
func (detachedContext) Done() <-chan struct{} { return nil }

func (detachedContext) Err() error { return nil }

func (d detachedContext) Value(key any) any { return d.parent.Value(key) }
