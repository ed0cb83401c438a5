package holdshelf

import (
	"reflect"
	"testing"
	"time"

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

func TestTagsAccessPolicyAndSQSEncryptionConvertBothWays(t *testing.T) {
	config := &QueueConfig{
		Tags:          map[string]string{"team": "billing", "cost-center": ""},
		AccessPolicy:  `{"Version":"2012-10-17"}`,
		SQSEncryption: &SQSEncryption{KMSMasterKeyID: "alias/orders", KMSDataKeyReusePeriod: Duration(10 * time.Minute)},
	}
	wire := queueConfigToWire(config)
	if !reflect.DeepEqual(wire.Tags, config.Tags) || wire.AccessPolicy != config.AccessPolicy {
		t.Fatalf("to the wire: tags %v, policy %q", wire.Tags, wire.AccessPolicy)
	}
	if e := wire.SqsEncryption; e.KmsMasterKeyId != "alias/orders" || e.KmsDataKeyReusePeriod.AsDuration() != 10*time.Minute || e.SqsManagedSseEnabled {
		t.Fatalf("encryption to the wire: %v", e)
	}
	back := queueFromWire(&holdshelfv1.Queue{Config: wire}).Config
	if !reflect.DeepEqual(back.Tags, config.Tags) || back.AccessPolicy != config.AccessPolicy || !reflect.DeepEqual(back.SQSEncryption, config.SQSEncryption) {
		t.Fatalf("from the wire: %+v, encryption %+v", back, back.SQSEncryption)
	}

	// Unset stays unset going out: the broker's defaults apply.
	if none := queueConfigToWire(&QueueConfig{}); none.Tags != nil || none.AccessPolicy != "" || none.SqsEncryption != nil {
		t.Fatalf("an empty config sent %v", none)
	}
	if period := queueConfigToWire(&QueueConfig{SQSEncryption: &SQSEncryption{SQSManagedSSEEnabled: true}}).SqsEncryption.KmsDataKeyReusePeriod; period != nil {
		t.Fatalf("a nil reuse period went as %v, want unset", period)
	}
	// Read back, an encryption without a reuse period shows the default.
	managed := queueFromWire(&holdshelfv1.Queue{Config: &holdshelfv1.QueueConfig{SqsEncryption: &holdshelfv1.SqsEncryption{SqsManagedSseEnabled: true}}}).Config.SQSEncryption
	if managed == nil || !managed.SQSManagedSSEEnabled || managed.KMSDataKeyReusePeriod == nil || *managed.KMSDataKeyReusePeriod != 5*time.Minute {
		t.Fatalf("managed encryption read back as %+v", managed)
	}
	if plain := queueFromWire(&holdshelfv1.Queue{Config: &holdshelfv1.QueueConfig{}}).Config; plain.SQSEncryption != nil || len(plain.Tags) != 0 || plain.AccessPolicy != "" {
		t.Fatalf("a queue without them read back as %+v", plain)
	}
}
