package holdshelf

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

func TestRetryDelayIsRetryLatersDelayEvenWrapped(t *testing.T) {
	got := retryDelay(fmt.Errorf("job 7: %w", RetryLater(2*time.Second)))
	if got == nil || *got != 2*time.Second {
		t.Fatalf("retryDelay = %v, want 2s", got)
	}
}

func TestRetryDelayOfAPlainErrorLeavesTheQueuesBackoff(t *testing.T) {
	if got := retryDelay(errors.New("boom")); got != nil {
		t.Fatalf("retryDelay = %v, want nil (the queue's backoff)", *got)
	}
}

func TestRetryDelayNeverNegative(t *testing.T) {
	if got := retryDelay(RetryLater(-time.Second)); got == nil || *got != 0 {
		t.Fatalf("retryDelay = %v, want 0", got)
	}
}
