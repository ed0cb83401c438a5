package holdshelf

import (
	"reflect"
	"testing"
	"time"
)

func TestUpdateQueueSendsAMaskOnlyWithFields(t *testing.T) {
	config := &QueueConfig{VisibilityTimeout: Duration(time.Minute), MaxInFlight: 5}
	whole, err := updateQueueRequest("q", config, nil)
	if err != nil || whole.UpdateMask != nil || whole.Config.MaxInFlight != 5 {
		t.Fatalf("without options: %v, %v; want no mask and the whole config", whole, err)
	}
	partial, err := updateQueueRequest("q", config, []UpdateOption{Fields(FieldVisibilityTimeout, FieldRedrivePolicy)})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"visibility_timeout", "redrive_policy"}; !reflect.DeepEqual(partial.UpdateMask.GetPaths(), want) {
		t.Fatalf("paths %v, want %v", partial.UpdateMask.GetPaths(), want)
	}
	if _, err := updateQueueRequest("q", config, []UpdateOption{Fields()}); err == nil {
		t.Fatal("Fields() with no field was taken; an empty mask would replace the whole configuration")
	}
}

func TestUpdateQueueNamesTheSQSSettingsAndTagKeys(t *testing.T) {
	config := &QueueConfig{Tags: map[string]string{"team": "billing"}}
	request, err := updateQueueRequest("q", config, []UpdateOption{Fields(FieldTags, FieldAccessPolicy, FieldSQSEncryption)})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"tags", "access_policy", "sqs_encryption"}; !reflect.DeepEqual(request.UpdateMask.GetPaths(), want) {
		t.Fatalf("paths %v, want %v", request.UpdateMask.GetPaths(), want)
	}
	// Keys that are not bare go in backticks, a backtick doubled.
	request, err = updateQueueRequest("q", config, []UpdateOption{Fields(FieldMaxInFlight), TagKeys("team", "cost-center", "a`b", "")})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"max_in_flight", "tags.team", "tags.`cost-center`", "tags.`a``b`", "tags.``"}; !reflect.DeepEqual(request.UpdateMask.GetPaths(), want) {
		t.Fatalf("paths %v, want %v", request.UpdateMask.GetPaths(), want)
	}
	if _, err := updateQueueRequest("q", config, []UpdateOption{TagKeys()}); err == nil {
		t.Fatal("TagKeys() with no key was taken")
	}
	if _, err := updateQueueRequest("q", config, []UpdateOption{TagKeys("team"), Fields(FieldTags)}); err == nil {
		t.Fatal("FieldTags beside TagKeys was taken")
	}
}
