package holdshelf

import (
	"errors"

	"google.golang.org/grpc/codes"
)

// refusesConsumer tells an error that no retry can cure while the Consumer
// runs: the queue does not exist (QUEUE_NOT_FOUND), or the token may not
// consume it (PERMISSION_DENIED) or is missing or not valid
// (UNAUTHENTICATED). Run returns such an error rather than retrying it
// forever, as Pub/Sub's Receive does; a broker that is restarting or a
// queue moving between brokers (UNAVAILABLE, QUEUE_MOVING included) is
// retried.
func refusesConsumer(err error) bool {
	var e *Error
	if !errors.As(err, &e) {
		return false
	}
	return e.Reason == ReasonQueueNotFound || e.Code == codes.PermissionDenied || e.Code == codes.Unauthenticated
}
