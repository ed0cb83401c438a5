package holdshelf

import (
	"math/rand"
	"time"
)

// Reconnect and retry pacing, shared by the Consumer's receive loop and its
// lease keeper.
const (
	backoffBase = 100 * time.Millisecond
	// Capped so that a long outage is retried every few seconds, not minutes.
	backoffMax = 5 * time.Second
	// Renewals come early by up to this fraction of the interval, so that
	// many consumers do not beat in step.
	renewJitter = 0.2
	// An unanswered Heartbeat or Subscribe request means a stuck connection
	// after this long (or a lease's length, if longer): the stream is then
	// reopened.
	minStall = 5 * time.Second
)

// reconnectDelay is how long to wait before retry number attempt (0 first):
// exponential with "equal jitter", half fixed and half random (random in
// [0,1)), so that clients that failed together do not retry together.
func reconnectDelay(attempt int, random float64) time.Duration {
	if attempt > 16 {
		attempt = 16
	}
	ceiling := backoffBase << attempt
	if ceiling > backoffMax {
		ceiling = backoffMax
	}
	return ceiling/2 + time.Duration(random*float64(ceiling/2))
}

// renewalDelay is how long after a receive or renewal a lease of this length
// is renewed: a third of it, less up to a fifth of that (random in [0,1)).
func renewalDelay(lease time.Duration, random float64) time.Duration {
	third := lease / 3
	return third - time.Duration(random*renewJitter*float64(third))
}

// stallTimeout is how long a Heartbeat or Subscribe request may go
// unanswered.
func stallTimeout(lease time.Duration) time.Duration {
	if lease > minStall {
		return lease
	}
	return minStall
}

// jitter is the random source of the delays above; tests call the functions
// with fixed values instead.
func jitter() float64 { return rand.Float64() }
