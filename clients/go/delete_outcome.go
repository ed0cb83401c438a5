package holdshelf

import "github.com/holdshelf/holdshelf/clients/go/holdshelfv1"

// DeleteOutcome says what a delete did with the message its receipt handle
// names. Every outcome is a successful call; only DeleteOutcomeDeadLettered
// and DeleteOutcomeReceivedAgain say for sure that the lease was lost before
// the delete and the work may be done again (LeaseLost).
type DeleteOutcome int

const (
	// DeleteOutcomeUnspecified comes from a broker before 0.2.0, whose
	// deletes answered alike whatever happened.
	DeleteOutcomeUnspecified DeleteOutcome = iota
	// DeleteOutcomeDeleted: the message is deleted now.
	DeleteOutcomeDeleted
	// DeleteOutcomeAlreadyDeleted: this same delivery's handle deleted it
	// before (a repeat).
	DeleteOutcomeAlreadyDeleted
	// DeleteOutcomeDeadLettered: the lease ran out and the message moved to
	// the dead-letter queue before the delete; nothing was deleted.
	DeleteOutcomeDeadLettered
	// DeleteOutcomeReceivedAgain: the lease ran out and someone else
	// received the message since, and deleted or dead-lettered it; nothing
	// was deleted.
	DeleteOutcomeReceivedAgain
	// DeleteOutcomeNoLongerHeld: the message is gone and the broker does not
	// know how (purged, removed by retention, or before its bounded memory
	// of recent departures reaches: a restart, a takeover).
	DeleteOutcomeNoLongerHeld
)

// Lease-lost reasons a Consumer reports, in a *LeaseLostError, for a handled
// message whose delete came too late: what the delete's outcome said.
const (
	ReasonDeadLettered  = "DEAD_LETTERED"
	ReasonReceivedAgain = "RECEIVED_AGAIN"
)

var deleteOutcomeNames = [...]string{"UNSPECIFIED", "DELETED", "ALREADY_DELETED", ReasonDeadLettered, ReasonReceivedAgain, "NO_LONGER_HELD"}

// String names the outcome as the proto does, without its prefix.
func (o DeleteOutcome) String() string {
	if o < 0 || int(o) >= len(deleteOutcomeNames) {
		return "NO_LONGER_HELD"
	}
	return deleteOutcomeNames[o]
}

// LeaseLost tells the outcomes that mean the lease was lost before the
// delete: the message was dead-lettered, or received again by someone else.
func (o DeleteOutcome) LeaseLost() bool {
	return o == DeleteOutcomeDeadLettered || o == DeleteOutcomeReceivedAgain
}

// deleteOutcomeFromWire reads the wire's outcome; one newer than this client
// reads as DeleteOutcomeNoLongerHeld, the cautious guess.
func deleteOutcomeFromWire(o holdshelfv1.DeleteOutcome) DeleteOutcome {
	if o < 0 || int(o) >= len(deleteOutcomeNames) {
		return DeleteOutcomeNoLongerHeld
	}
	return DeleteOutcome(o)
}

// lostBeforeDelete is the *LeaseLostError a lease-lost outcome stands for, or
// nil for one that is not.
func lostBeforeDelete(receiptHandle string, o DeleteOutcome) error {
	if !o.LeaseLost() {
		return nil
	}
	return &LeaseLostError{ReceiptHandle: receiptHandle, Reason: o.String()}
}
