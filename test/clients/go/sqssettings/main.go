// Command sqssettings is a test fixture of the Go client (test/clients
// /go-client.test.ts): a queue's tags, access policy and SQS encryption
// through holdshelf.Client against a broker. It creates a queue with them,
// reads it back, updates it without Fields from what it read (which must
// keep them), with Fields and with TagKeys (which must change only what
// they name), and prints one JSON line per step with the configuration the
// library returned; it leaves the queue, for the test to compare with what
// the broker holds.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	holdshelf "github.com/holdshelf/holdshelf/clients/go"
)

const policy = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":"sqs:SendMessage"}]}`

func main() {
	address := flag.String("address", "", "broker address")
	prefix := flag.String("queue-prefix", "go-sqs-settings", "prefix of the queues this run makes")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client, err := holdshelf.Dial(ctx, *address)
	must(err)
	defer client.Close()
	q := *prefix + "-q"

	created, err := client.CreateQueue(ctx, q, &holdshelf.QueueConfig{
		Tags:          map[string]string{"team": "billing", "env": "prod"},
		AccessPolicy:  policy,
		SQSEncryption: &holdshelf.SQSEncryption{KMSMasterKeyID: "alias/orders", KMSDataKeyReusePeriod: holdshelf.Duration(10 * time.Minute)},
	})
	must(err)
	emit("created", configJSON(created))
	got, err := client.GetQueue(ctx, q)
	must(err)
	emit("got", configJSON(got))

	// Read, change one field, write the whole configuration back.
	config := got.Config
	config.VisibilityTimeout = holdshelf.Duration(45 * time.Second)
	replaced, err := client.UpdateQueue(ctx, q, &config)
	must(err)
	emit("replaced", configJSON(replaced))

	// Only max_in_flight: the zero-valued tags, policy and encryption here are not sent.
	masked, err := client.UpdateQueue(ctx, q, &holdshelf.QueueConfig{MaxInFlight: 42}, holdshelf.Fields(holdshelf.FieldMaxInFlight))
	must(err)
	emit("fields", configJSON(masked))

	// Only the encryption; then two tags: "env" removed, "owner" added, "team" kept.
	encrypted, err := client.UpdateQueue(ctx, q, &holdshelf.QueueConfig{SQSEncryption: &holdshelf.SQSEncryption{SQSManagedSSEEnabled: true}},
		holdshelf.Fields(holdshelf.FieldSQSEncryption))
	must(err)
	emit("encryption", configJSON(encrypted))
	tagged, err := client.UpdateQueue(ctx, q, &holdshelf.QueueConfig{Tags: map[string]string{"owner": "ana"}}, holdshelf.TagKeys("env", "owner"))
	must(err)
	emit("tagKeys", configJSON(tagged))

	// A KMS key beside SQS-managed encryption is refused, naming the field.
	_, err = client.UpdateQueue(ctx, q, &holdshelf.QueueConfig{SQSEncryption: &holdshelf.SQSEncryption{KMSMasterKeyID: "alias/x", SQSManagedSSEEnabled: true}},
		holdshelf.Fields(holdshelf.FieldSQSEncryption))
	var e *holdshelf.Error
	if !errors.As(err, &e) {
		crash("both encryptions: not a *holdshelf.Error: %v", err)
	}
	emit("bothEncryptions", map[string]any{"code": holdshelf.CodeName(e.Code), "reason": e.Reason, "fields": e.Fields()})
}

func configJSON(q *holdshelf.Queue) map[string]any {
	c := q.Config
	out := map[string]any{
		"visibilityTimeoutMs": c.VisibilityTimeout.Milliseconds(), "maxInFlight": c.MaxInFlight,
		"tags": c.Tags, "accessPolicy": c.AccessPolicy, "sqsEncryption": nil,
	}
	if e := c.SQSEncryption; e != nil {
		out["sqsEncryption"] = map[string]any{
			"kmsMasterKeyId": e.KMSMasterKeyID, "kmsDataKeyReusePeriodMs": e.KMSDataKeyReusePeriod.Milliseconds(),
			"sqsManagedSseEnabled": e.SQSManagedSSEEnabled,
		}
	}
	return out
}

func emit(check string, fields map[string]any) {
	fields["check"] = check
	_ = json.NewEncoder(os.Stdout).Encode(fields)
}

func must(err error) {
	if err != nil {
		crash("%v", err)
	}
}

func crash(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "sqssettings: "+format+"\n", args...)
	os.Exit(1)
}
