package holdshelf

import (
	"errors"
	"fmt"
	"time"
)

// RetryLaterError, returned by a Consumer's handler (wrapped or not), has the
// message delivered again no sooner than Delay from now (0 to 12 h), instead
// of after the queue's retry backoff.
type RetryLaterError struct {
	Delay time.Duration
}

// RetryLater returns an error that makes a handler's message come back after d.
func RetryLater(d time.Duration) error { return &RetryLaterError{Delay: d} }

// Error names the delay.
func (e *RetryLaterError) Error() string { return fmt.Sprintf("holdshelf: retry in %v", e.Delay) }

// retryDelay is the wait a handler's error asks for: RetryLater's delay, or
// nil for the queue's retry backoff.
func retryDelay(err error) *time.Duration {
	var later *RetryLaterError
	if !errors.As(err, &later) {
		return nil
	}
	if later.Delay < 0 {
		return Duration(0)
	}
	return Duration(later.Delay)
}
