package holdshelf

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
)

func nowhere(t *testing.T) *Client {
	t.Helper()
	// Port 1 on loopback refuses connections: every call fails fast.
	client, err := Dial(context.Background(), "127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	return client
}

func ignore(context.Context, *Delivery) error { return nil }

func TestNewConsumerRefusesOptionsOutOfRange(t *testing.T) {
	client := nowhere(t)
	cases := map[string]ConsumerOptions{
		"Concurrency":       {Concurrency: -1},
		"VisibilityTimeout": {VisibilityTimeout: Duration(0)},
		"WaitTime":          {WaitTime: Duration(21 * time.Second)},
		"StopGrace":         {StopGrace: Duration(-time.Second)},
	}
	for field, options := range cases {
		if _, err := NewConsumer(client, "q", ignore, options); err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: err = %v", field, err)
		}
	}
	if _, err := NewConsumer(nil, "q", ignore, ConsumerOptions{}); err == nil {
		t.Error("accepted a nil client")
	}
	if _, err := NewConsumer(client, "q", nil, ConsumerOptions{}); err == nil {
		t.Error("accepted a nil handler")
	}
}

func TestNilDurationsTakeTheirDefaultsAndDurationZeroMeansZero(t *testing.T) {
	client := nowhere(t)
	defaults, err := NewConsumer(client, "q", ignore, ConsumerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	zero, err := NewConsumer(client, "q", ignore, ConsumerOptions{WaitTime: Duration(0), StopGrace: Duration(0)})
	if err != nil {
		t.Fatal(err)
	}
	if defaults.wait != 20*time.Second || defaults.grace != 10*time.Second || zero.wait != 0 || zero.grace != 0 {
		t.Errorf("wait and grace: %v, %v by default; %v, %v set to 0", defaults.wait, defaults.grace, zero.wait, zero.grace)
	}
}

func TestRunRetriesAnUnreachableBrokerUntilStoppedAndRunsOnce(t *testing.T) {
	reported := make(chan error, 100)
	consumer, err := NewConsumer(nowhere(t), "q", ignore, ConsumerOptions{
		OnError: func(err error, _ *Delivery) {
			select {
			case reported <- err:
			default:
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ran := make(chan error, 1)
	go func() { ran <- consumer.Run(context.Background()) }()
	var e *Error
	select {
	case err := <-reported:
		if !errors.As(err, &e) || e.Code != codes.Unavailable {
			t.Fatalf("reported %v, want UNAVAILABLE", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no failure reported")
	}
	if err := consumer.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("a second Run returned %v", err)
	}
	consumer.Stop()
	if err := <-ran; err != nil {
		t.Errorf("Run returned %v after Stop", err)
	}
}

func TestStopBeforeRunReturnsAtOnce(t *testing.T) {
	consumer, err := NewConsumer(nowhere(t), "q", ignore, ConsumerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	consumer.Stop()
}
