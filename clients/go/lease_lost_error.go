package holdshelf

import "fmt"

// LeaseLostError says a delivery's lease is gone: the message may now be with
// another consumer, so its work will be redone. Delivery.Checkpoint returns
// it; the handler's context is cancelled just after. A Consumer reports one,
// wrapped, to OnError when the broker did not end a lease as asked; a loss
// or refused renewal the handler hears of through its context.
type LeaseLostError struct {
	ReceiptHandle string
	// Reason is the broker's (e.g. LEASE_EXPIRED, LEASE_SUPERSEDED; for a
	// refused renewal LEASE_LIMIT_EXCEEDED or INVALID_ARGUMENT), or RELEASED
	// when the message was given back (by a stop whose grace ran out, or
	// once the handler's failure ended the lease), or ReasonDeadLettered or
	// ReasonReceivedAgain when a handled message's delete came too late.
	Reason string
}

// Error names the reason.
func (e *LeaseLostError) Error() string { return fmt.Sprintf("holdshelf: lease lost (%s)", e.Reason) }
