package holdshelf

import (
	"reflect"
	"testing"

	"github.com/holdshelf/holdshelf/clients/go/holdshelfv1"
)

func TestFIFOSettingsAndFieldsConvertBothWays(t *testing.T) {
	config := &QueueConfig{FIFO: true, ContentBasedDeduplication: true, DeduplicationScope: DeduplicationScopeMessageGroup}
	wire := queueConfigToWire(config)
	if !wire.Fifo || !wire.ContentBasedDeduplication || wire.DeduplicationScope != holdshelfv1.DeduplicationScope_DEDUPLICATION_SCOPE_MESSAGE_GROUP {
		t.Fatalf("to the wire: %v", wire)
	}
	back := queueFromWire(&holdshelfv1.Queue{Config: wire}).Config
	if !back.FIFO || !back.ContentBasedDeduplication || back.DeduplicationScope != DeduplicationScopeMessageGroup {
		t.Fatalf("from the wire: %+v", back)
	}
	if got := queueConfigToWire(&QueueConfig{}).DeduplicationScope; got != holdshelfv1.DeduplicationScope_DEDUPLICATION_SCOPE_UNSPECIFIED {
		t.Fatalf("the zero scope went as %v, want unset", got)
	}
	if s := DeduplicationScopeQueue.String() + " " + DeduplicationScopeMessageGroup.String() + " " + DeduplicationScope(7).String(); s != "QUEUE MESSAGE_GROUP DeduplicationScope(7)" {
		t.Fatalf("scope names: %s", s)
	}
	m := messageFromWire(&holdshelfv1.ReceivedMessage{MessageGroupId: "customer-1", SequenceNumber: "00000000000000000042", DeduplicationId: "order-7", TraceHeader: "Root=1-x"})
	if m.MessageGroupID != "customer-1" || m.SequenceNumber != "00000000000000000042" || m.DeduplicationID != "order-7" || m.TraceHeader != "Root=1-x" {
		t.Fatalf("message: %+v", m)
	}
}

func TestSendResultsCarrySequenceNumbersOnlyWhenTheBrokerSentThem(t *testing.T) {
	fifo := sendResults([]string{"a", "b"}, []string{"01", "02"})
	if want := []SendResult{{"a", "01"}, {"b", "02"}}; !reflect.DeepEqual(fifo, want) {
		t.Fatalf("FIFO: %v, want %v", fifo, want)
	}
	standard := sendResults([]string{"a", "b"}, nil)
	if want := []SendResult{{MessageID: "a"}, {MessageID: "b"}}; !reflect.DeepEqual(standard, want) {
		t.Fatalf("standard: %v, want %v", standard, want)
	}
}
