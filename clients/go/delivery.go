package holdshelf

import (
	"context"
	"sync"
)

// Delivery is one message a Consumer's handler works on.
type Delivery struct {
	// Message is the delivery as Receive returned it; Message.Checkpoint is
	// the progress an earlier delivery stored, nil if none.
	Message Message

	lease *heldLease
	mu    sync.Mutex
	last  []byte
}

// Checkpoint stores progress (at most 64 KiB) durably with the message, in a
// renewal sent at once, so that a later delivery carries it. It returns nil
// once the broker answered that the lease is held and the bytes are stored;
// a *LeaseLostError if the lease was lost first, or ctx's error (the
// checkpoint may then still be stored).
func (d *Delivery) Checkpoint(ctx context.Context, progress []byte) error {
	saved := append([]byte{}, progress...)
	select {
	case err := <-d.lease.checkpoint(saved):
		if err != nil {
			return err
		}
		d.mu.Lock()
		d.last = saved
		d.mu.Unlock()
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// LastCheckpoint is the latest progress: the last Checkpoint saved, or else
// the one this delivery brought (nil if none).
func (d *Delivery) LastCheckpoint() []byte {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.last
}
