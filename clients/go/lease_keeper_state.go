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

// refusedRenewal tells a renewal the broker refused, which changed nothing
// (a bad visibility timeout or checkpoint, an extension past
// max_lease_duration), from one naming a lease that is gone.
func refusedRenewal(reason string) bool {
	return reason == ReasonInvalidArgument || reason == ReasonLeaseLimitExceeded
}

// refuse stops renewing a lease whose renewal was refused: its holder hears
// it is lost, but it stays, unrenewed, until its deadline, so that the
// holder's release or delete still reaches it. A checkpoint queued behind
// the refused renewal is never sent: it would only renew a lease the holder
// was told is lost.
func (k *leaseKeeper) refuse(l *lease, reason string) {
	if l.state != leaseHeld {
		return
	}
	l.state = leaseRefused
	l.endErr = &LeaseLostError{ReceiptHandle: l.handle, Reason: reason}
	l.due = false
	k.settleCheckpoint(l)
	if l.onLost != nil {
		l.onLost(reason)
	}
}

func (k *leaseKeeper) lose(l *lease, reason string) {
	if l.state == leaseGone {
		return
	}
	wasHeld := l.state == leaseHeld
	l.endErr = &LeaseLostError{ReceiptHandle: l.handle, Reason: reason}
	k.settleCheckpoint(l)
	if wasHeld && l.onLost != nil {
		l.onLost(reason)
	}
	k.forget(l, l.endErr)
}

// settleCheckpoint answers a queued checkpoint with the lease's endErr. It
// comes before the holder hears of the loss, so that a Checkpoint woken by
// its cancelled context finds the loss already answered.
func (k *leaseKeeper) settleCheckpoint(l *lease) {
	if l.checkpoint != nil {
		settle(l.checkpoint.waiters, l.endErr)
		l.checkpoint = nil
	}
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
	if k.inFlight != nil || len(k.acks) > 0 {
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
