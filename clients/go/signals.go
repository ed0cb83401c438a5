package holdshelf

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// SignalContext returns a context cancelled by the first SIGTERM or SIGINT:
// pass it to Consumer.Run for a graceful stop on either. After that first
// signal the default behaviour is back, so a second Ctrl-C kills the process
// (and the broker releases its leases at once). Call stop to let go of the
// signals earlier.
func SignalContext(parent context.Context) (ctx context.Context, stop context.CancelFunc) {
	ctx, stop = signal.NotifyContext(parent, syscall.SIGTERM, os.Interrupt)
	go func() {
		<-ctx.Done()
		stop()
	}()
	return ctx, stop
}
