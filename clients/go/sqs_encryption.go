package holdshelf

import (
	"time"

	"github.com/holdshelf/holdshelf/clients/go/holdshelfv1"
)

// defaultKMSDataKeyReusePeriod is what a queue read back shows when its
// encryption names no reuse period: Amazon SQS's default.
const defaultKMSDataKeyReusePeriod = 5 * time.Minute

// SQSEncryption is Amazon SQS's server-side encryption settings of a queue
// (QueueConfig.SQSEncryption), kept and shown for SQS clients and
// infrastructure code; the broker encrypts nothing with them.
type SQSEncryption struct {
	// KMSMasterKeyID is SQS's KmsMasterKeyId: a KMS key id, alias or ARN, up
	// to 2048 characters; empty means none.
	KMSMasterKeyID string
	// KMSDataKeyReusePeriod is SQS's KmsDataKeyReusePeriodSeconds: 60s to
	// 86400s in whole seconds; nil means 5 minutes, which a queue read back
	// shows.
	KMSDataKeyReusePeriod *time.Duration
	// SQSManagedSSEEnabled is SQS's SqsManagedSseEnabled; set beside a
	// KMSMasterKeyID it fails with INVALID_ARGUMENT on config.sqs_encryption.
	SQSManagedSSEEnabled bool
}

func sqsEncryptionToWire(e *SQSEncryption) *holdshelfv1.SqsEncryption {
	if e == nil {
		return nil
	}
	return &holdshelfv1.SqsEncryption{
		KmsMasterKeyId:        e.KMSMasterKeyID,
		KmsDataKeyReusePeriod: durationToWire(e.KMSDataKeyReusePeriod),
		SqsManagedSseEnabled:  e.SQSManagedSSEEnabled,
	}
}

// sqsEncryptionFromWire fills the reuse period's default in, as Queue.Config
// has every default filled in; nil stays nil (SQS-managed encryption).
func sqsEncryptionFromWire(e *holdshelfv1.SqsEncryption) *SQSEncryption {
	if e == nil {
		return nil
	}
	period := durationFromWire(e.GetKmsDataKeyReusePeriod())
	if period == nil {
		period = Duration(defaultKMSDataKeyReusePeriod)
	}
	return &SQSEncryption{KMSMasterKeyID: e.GetKmsMasterKeyId(), KMSDataKeyReusePeriod: period, SQSManagedSSEEnabled: e.GetSqsManagedSseEnabled()}
}
