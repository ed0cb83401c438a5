package holdshelf

import (
	"testing"
	"time"
)

func TestReconnectDelayGrowsWithEqualJitterUpToItsCap(t *testing.T) {
	cases := []struct {
		attempt  int
		random   float64
		expected time.Duration
	}{
		{0, 0, 50 * time.Millisecond},
		{0, 0.999999, 100 * time.Millisecond},
		{1, 0, 100 * time.Millisecond},
		{5, 0, 1600 * time.Millisecond},
		{6, 0, 2500 * time.Millisecond}, // 6.4 s capped at 5 s, half of it fixed
		{1000, 0.999999, 5 * time.Second},
	}
	for _, c := range cases {
		got := reconnectDelay(c.attempt, c.random)
		if diff := got - c.expected; diff < -time.Millisecond || diff > time.Millisecond {
			t.Errorf("reconnectDelay(%d, %v) = %v, want %v", c.attempt, c.random, got, c.expected)
		}
	}
}

func TestRenewalDelayIsAThirdOfTheLeaseLessUpToAFifthOfIt(t *testing.T) {
	if got := renewalDelay(3*time.Second, 0); got != time.Second {
		t.Errorf("without jitter: %v, want 1s", got)
	}
	if got := renewalDelay(3*time.Second, 1); got != 800*time.Millisecond {
		t.Errorf("with the most jitter: %v, want 800ms", got)
	}
}

func TestStallTimeoutIsTheLeaseButAtLeastFiveSeconds(t *testing.T) {
	if got := stallTimeout(2 * time.Second); got != 5*time.Second {
		t.Errorf("a 2 s lease: %v, want 5s", got)
	}
	if got := stallTimeout(30 * time.Second); got != 30*time.Second {
		t.Errorf("a 30 s lease: %v, want 30s", got)
	}
}
