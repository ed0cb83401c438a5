package holdshelf

import (
	"context"
	"reflect"
	"testing"

	"github.com/holdshelf/holdshelf/clients/go/holdshelfv1"
)

func TestTypedAttributesGoInTheValueTheirDataTypeCarriesAndComeBackAsSent(t *testing.T) {
	sent := map[string]TypedAttribute{
		"price": {DataType: "Number", StringValue: "19.99"},
		"count": {DataType: "Number.int", StringValue: "3"},
		"thumb": {DataType: "Binary.png", BinaryValue: []byte{0x89, 'P', 'N', 'G'}},
		"empty": {DataType: "Binary", BinaryValue: nil},
		"json":  {DataType: "String.json", StringValue: `{"a":1}`},
	}
	wire, err := typedAttributesToWire(sent, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := wire["empty"].Value.(*holdshelfv1.TypedAttributeValue_BinaryValue); !ok {
		t.Errorf("an empty Binary value went as %T", wire["empty"].Value)
	}
	if _, ok := wire["json"].Value.(*holdshelfv1.TypedAttributeValue_StringValue); !ok {
		t.Errorf("a labelled String went as %T", wire["json"].Value)
	}
	back := typedAttributesFromWire(wire)
	sent["empty"] = TypedAttribute{DataType: "Binary"}
	if !reflect.DeepEqual(back, sent) {
		t.Errorf("came back as %v", back)
	}
	if size := typedAttributesSize(wire); size != len("price")+len("Number")+len("19.99")+
		len("count")+len("Number.int")+1+len("thumb")+len("Binary.png")+4+len("empty")+len("Binary")+
		len("json")+len("String.json")+len(`{"a":1}`) {
		t.Errorf("size = %d", size)
	}
	if typedAttributesFromWire(nil) != nil {
		t.Error("no typed attributes came back as a map")
	}
}

func TestATypedAttributeWithTheOtherKindOfValueFailsBeforeAnythingIsSent(t *testing.T) {
	client := nowhere(t)
	_, err := client.Send(context.Background(), "q", nil, &SendOptions{TypedAttributes: map[string]TypedAttribute{
		"n": {DataType: "Number", BinaryValue: []byte("1")},
	}})
	if e, ok := err.(*Error); !ok || e.Reason != ReasonInvalidArgument || !reflect.DeepEqual(e.Fields(), []string{`typed_attributes["n"].binary_value`}) {
		t.Errorf("Send: %v", err)
	}
	_, err = client.SendBatch(context.Background(), "q", []SendBatchEntry{{}, {TypedAttributes: map[string]TypedAttribute{
		"b": {DataType: "Binary", StringValue: "not bytes"},
	}}})
	if e, ok := err.(*Error); !ok || !reflect.DeepEqual(e.Fields(), []string{`entries[1].typed_attributes["b"].string_value`}) {
		t.Errorf("SendBatch: %v", err)
	}
}
