package holdshelf

// The leaseKeeper's bookkeeping of each lease: when it is renewed and runs
// out, how it is lost or forgotten, and who is told. Runs on the keeper's
// loop goroutine.

import (
	"time"
)

// schedule sets a lease's renewal and expiry, counted from when its receive
// or last renewal was sent.
func (k *leaseKeeper) schedule(l *lease, from time.Time) {
	l.renewAt = from.Add(renewalDelay(k.options.leaseLength, jitter()))
	l.expiresAt = from.Add(k.options.leaseLength)
}

func (k *leaseKeeper) lose(l *lease, reason string) {
	if l.state == leaseGone {
		return
	}
	// The holder hears first, so that its context is cancelled by the time
	// a waiting Checkpoint returns the loss.
	if l.state == leaseHeld {
		l.onLost(reason)
	}
	k.forget(l, &LeaseLostError{ReceiptHandle: l.handle, Reason: reason})
}

// forget never names the lease again, and settles whoever waits on what was
// not sent.
func (k *leaseKeeper) forget(l *lease, err error) {
	if l.state == leaseGone {
		return
	}
	l.state = leaseGone
	l.endErr = err
	delete(k.leases, l.handle)
	settleAll(l.checkpoint, l.release, err)
	l.checkpoint, l.release = nil, nil
	k.checkIdle()
}

func (k *leaseKeeper) hasPending() bool {
	if k.inFlight != nil {
		return true
	}
	for _, l := range k.leases {
		if l.checkpoint != nil || l.release != nil {
			return true
		}
	}
	return false
}

func (k *leaseKeeper) checkIdle() {
	if len(k.idleWaiters) == 0 || k.hasPending() {
		return
	}
	for _, idle := range k.idleWaiters {
		close(idle)
	}
	k.idleWaiters = nil
}

// settleAll answers a checkpoint's waiters with err and a release's with nil
// (the message is no longer ours either way).
func settleAll(checkpoint *pendingCheckpoint, release *pendingRelease, err error) {
	if checkpoint != nil {
		settle(checkpoint.waiters, err)
	}
	if release != nil {
		settle(release.waiters, nil)
	}
}

func settle(waiters []chan error, err error) {
	for _, waiter := range waiters {
		waiter <- err // each has room for one answer
	}
}
