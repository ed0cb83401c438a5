package holdshelf

import "fmt"

// LeaseLostError says a delivery's lease is gone: the message may now be with
// another consumer, so its work will be redone. Delivery.Checkpoint returns
// it; the handler's context is cancelled at the same moment.
type LeaseLostError struct {
	ReceiptHandle string
	// Reason is the broker's (e.g. LEASE_EXPIRED, LEASE_SUPERSEDED), or
	// RELEASED when the Consumer gave the message back (stop's grace ran out).
	Reason string
}

// Error names the reason.
func (e *LeaseLostError) Error() string { return fmt.Sprintf("holdshelf: lease lost (%s)", e.Reason) }
