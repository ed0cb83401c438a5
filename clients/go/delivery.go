package holdshelf

import (
	"context"
	"fmt"
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

// maxCheckpointBytes is the most a checkpoint may hold.
const maxCheckpointBytes = 64 << 10

// Checkpoint stores progress (at most 64 KiB) durably with the message, in a
// renewal sent at once, so that a later delivery carries it. It returns nil
// once the broker answered that the lease is held and the bytes are stored;
// a *LeaseLostError if the lease is not held (lost, refused, or given back
// by a stop: reason RELEASED), or ctx's error (the checkpoint may then
// still be stored). More than 64 KiB is refused before anything is sent.
func (d *Delivery) Checkpoint(ctx context.Context, progress []byte) error {
	if len(progress) > maxCheckpointBytes {
		// The broker would refuse it with INVALID_ARGUMENT, which a
		// renewal's answer can only report as a lost lease.
		return fmt.Errorf("holdshelf: a checkpoint holds at most %d bytes, not %d", maxCheckpointBytes, len(progress))
	}
	saved := append([]byte{}, progress...)
	answer := d.lease.checkpoint(saved)
	select {
	case err := <-answer:
		return d.saved(saved, err)
	case <-ctx.Done():
		// A lost lease cancels the handler's ctx only after answering the
		// checkpoint: the loss, if so, is already here.
		select {
		case err := <-answer:
			return d.saved(saved, err)
		default:
			return ctx.Err()
		}
	}
}

// saved records progress the broker stored (err nil) and returns err.
func (d *Delivery) saved(progress []byte, err error) error {
	if err != nil {
		return err
	}
	d.mu.Lock()
	d.last = progress
	d.mu.Unlock()
	return nil
}

// LastCheckpoint is the latest progress: the last Checkpoint saved, or else
// the one this delivery brought (nil if none).
func (d *Delivery) LastCheckpoint() []byte {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.last
}
