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
