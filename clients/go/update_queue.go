package holdshelf

import (
	"errors"

	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"github.com/holdshelf/holdshelf/clients/go/holdshelfv1"
)

// QueueField names a field of QueueConfig for Fields, by its name in
// holdshelf.v1.QueueConfig (an update_mask path).
type QueueField string

// The fields of QueueConfig that Fields may name.
const (
	FieldVisibilityTimeout         QueueField = "visibility_timeout"
	FieldDelay                     QueueField = "delay"
	FieldRetention                 QueueField = "retention"
	FieldMaxMessageBytes           QueueField = "max_message_bytes"
	FieldReceiveWaitTime           QueueField = "receive_wait_time"
	FieldMaxInFlight               QueueField = "max_in_flight"
	FieldMaxLeaseDuration          QueueField = "max_lease_duration"
	FieldRedrivePolicy             QueueField = "redrive_policy"
	FieldRetryPolicy               QueueField = "retry_policy"
	FieldFIFO                      QueueField = "fifo"
	FieldContentBasedDeduplication QueueField = "content_based_deduplication"
	FieldDeduplicationScope        QueueField = "deduplication_scope"
	FieldTags                      QueueField = "tags"
	FieldAccessPolicy              QueueField = "access_policy"
	FieldSQSEncryption             QueueField = "sqs_encryption"
)

// UpdateOption changes what UpdateQueue does.
type UpdateOption func(*updateSettings) error

// updateSettings are what the options named; with neither fields nor tag
// keys, UpdateQueue replaces the whole configuration.
type updateSettings struct {
	fields  []QueueField
	tagKeys []string
}

// Fields makes UpdateQueue change only the named fields (an update_mask,
// as in AIP-134); every other field keeps its current value, even one
// another caller changes at the same time. A named field left nil or zero in
// the config takes its default: FieldRedrivePolicy with a nil RedrivePolicy
// removes the policy, FieldTags with nil Tags removes every tag. Naming no
// field is an error, not a call (an empty mask would replace the whole
// configuration). Needs a 0.2.0 broker: an older one ignores the mask and
// replaces everything.
func Fields(fields ...QueueField) UpdateOption {
	return func(s *updateSettings) error {
		if len(fields) == 0 {
			return errors.New("holdshelf: Fields needs at least one field")
		}
		s.fields = fields
		return nil
	}
}

// updateQueueRequest is UpdateQueue's request: the config, with the mask
// its options ask for.
func updateQueueRequest(name string, config *QueueConfig, options []UpdateOption) (*holdshelfv1.UpdateQueueRequest, error) {
	var settings updateSettings
	for _, option := range options {
		if err := option(&settings); err != nil {
			return nil, err
		}
	}
	mask, err := settings.updateMask()
	if err != nil {
		return nil, err
	}
	return &holdshelfv1.UpdateQueueRequest{Name: name, Config: queueConfigToWire(config), UpdateMask: mask}, nil
}

// updateMask is the fields' paths, then the tag keys'; nil when the options
// named neither.
func (s *updateSettings) updateMask() (*fieldmaskpb.FieldMask, error) {
	if s.fields == nil && s.tagKeys == nil {
		return nil, nil
	}
	paths := make([]string, 0, len(s.fields)+len(s.tagKeys))
	for _, field := range s.fields {
		// The broker refuses the overlap too; here it fails before any call.
		if field == FieldTags && s.tagKeys != nil {
			return nil, errors.New("holdshelf: Fields may not name FieldTags beside TagKeys")
		}
		paths = append(paths, string(field))
	}
	for _, key := range s.tagKeys {
		paths = append(paths, tagKeyPath(key))
	}
	return &fieldmaskpb.FieldMask{Paths: paths}, nil
}
