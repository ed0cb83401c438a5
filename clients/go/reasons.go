package holdshelf

// The stable reasons a failed call carries in Error.Reason (and a lost lease
// in LeaseLostError.Reason). They never change between versions.
const (
	ReasonQueueNotFound          = "QUEUE_NOT_FOUND"
	ReasonQueueAlreadyExists     = "QUEUE_ALREADY_EXISTS"
	ReasonInvalidArgument        = "INVALID_ARGUMENT"
	ReasonMessageTooLarge        = "MESSAGE_TOO_LARGE"
	ReasonReceiptHandleInvalid   = "RECEIPT_HANDLE_INVALID"
	ReasonLeaseSuperseded        = "LEASE_SUPERSEDED"
	ReasonMessageNotFound        = "MESSAGE_NOT_FOUND"
	ReasonLeaseLimitExceeded     = "LEASE_LIMIT_EXCEEDED"
	ReasonTooManyInFlight        = "TOO_MANY_IN_FLIGHT"
	ReasonShuttingDown           = "SHUTTING_DOWN"
	ReasonLeaseExpired           = "LEASE_EXPIRED"
	ReasonReleased               = "RELEASED"
	ReasonDeadLetterQueueMissing = "DEAD_LETTER_QUEUE_NOT_FOUND"
	// ReasonMessageGroupIDRequired: a send to a FIFO queue without a
	// MessageGroupID (INVALID_ARGUMENT).
	ReasonMessageGroupIDRequired = "MESSAGE_GROUP_ID_REQUIRED"
	// ReasonDeduplicationIDRequired: a send to a FIFO queue without
	// ContentBasedDeduplication names no DeduplicationID (INVALID_ARGUMENT).
	ReasonDeduplicationIDRequired = "DEDUPLICATION_ID_REQUIRED"
	// ReasonNotAFIFOQueue: a send to a standard queue names a MessageGroupID
	// or a DeduplicationID (INVALID_ARGUMENT).
	ReasonNotAFIFOQueue = "NOT_A_FIFO_QUEUE"
	// ReasonTooManySubscribers: a Subscribe stream on a queue that already
	// has the broker's --max-subscribers-per-queue (RESOURCE_EXHAUSTED); the
	// Consumer reports it and tries again with backoff.
	ReasonTooManySubscribers = "TOO_MANY_SUBSCRIBERS"
	// ReasonPermissionDenied: the token may not do this on this queue
	// (PERMISSION_DENIED); a Consumer's Run returns it.
	ReasonPermissionDenied = "PERMISSION_DENIED"
	// ReasonTokenMissing and ReasonTokenInvalid: a broker that requires
	// tokens got none, or one it does not know (UNAUTHENTICATED); a
	// Consumer's Run returns them.
	ReasonTokenMissing = "TOKEN_MISSING"
	ReasonTokenInvalid = "TOKEN_INVALID"
	// ReasonQueueMoving: in cluster mode, the queue is moving to another
	// broker, or its owner is unreachable (UNAVAILABLE); the Consumer
	// tries again with backoff.
	ReasonQueueMoving = "QUEUE_MOVING"
)
