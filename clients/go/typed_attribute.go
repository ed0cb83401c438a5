package holdshelf

import (
	"fmt"
	"strings"

	"google.golang.org/grpc/codes"

	"github.com/holdshelf/holdshelf/clients/go/holdshelfv1"
)

// TypedAttribute is a typed message attribute, as Amazon SQS types them,
// returned exactly as sent. The SQS endpoint stores every attribute an SQS
// client sends: a plain "String" one in Message.Attributes, the others
// (Number, Binary, a String with a custom label) in TypedAttributes.
type TypedAttribute struct {
	// DataType is "String", "Number" or "Binary", optionally followed by "."
	// and a custom label ("Number.int", "Binary.gzip", "String.json"); at
	// most 256 characters, case-sensitive. It decides which value is sent.
	DataType string
	// StringValue is a String or Number type's value; holdshelf stores a
	// Number's text as sent, without parsing it.
	StringValue string
	// BinaryValue is a Binary type's value.
	BinaryValue []byte
}

// isBinary tells a Binary data type, with or without a custom label.
func (a TypedAttribute) isBinary() bool {
	return a.DataType == "Binary" || strings.HasPrefix(a.DataType, "Binary.")
}

// typedAttributesToWire converts typed attributes for a send whose fields
// start with prefix ("" or "entries[2]."). An attribute that sets the value
// its data type does not carry fails as the broker would fail a value of
// the wrong kind, with INVALID_ARGUMENT on that field, before anything is
// sent: otherwise it would be dropped without a word.
func typedAttributesToWire(typed map[string]TypedAttribute, prefix string) (map[string]*holdshelfv1.TypedAttributeValue, error) {
	if len(typed) == 0 {
		return nil, nil
	}
	wire := make(map[string]*holdshelfv1.TypedAttributeValue, len(typed))
	for name, a := range typed {
		value := &holdshelfv1.TypedAttributeValue{DataType: a.DataType}
		var stray string
		if a.isBinary() {
			value.Value = &holdshelfv1.TypedAttributeValue_BinaryValue{BinaryValue: a.BinaryValue}
			if a.StringValue != "" {
				stray = "string_value"
			}
		} else {
			value.Value = &holdshelfv1.TypedAttributeValue_StringValue{StringValue: a.StringValue}
			if a.BinaryValue != nil {
				stray = "binary_value"
			}
		}
		if stray != "" {
			field := fmt.Sprintf("%styped_attributes[%q].%s", prefix, name, stray)
			return nil, &Error{
				Code:       codes.InvalidArgument,
				Reason:     ReasonInvalidArgument,
				Message:    fmt.Sprintf("%s: a %s attribute carries no %s", field, a.DataType, stray),
				Violations: []FieldViolation{{Field: field, Description: "set the value its data type carries"}},
			}
		}
		wire[name] = value
	}
	return wire, nil
}

// typedAttributesFromWire converts received typed attributes; nil when none.
func typedAttributesFromWire(wire map[string]*holdshelfv1.TypedAttributeValue) map[string]TypedAttribute {
	if len(wire) == 0 {
		return nil
	}
	typed := make(map[string]TypedAttribute, len(wire))
	for name, value := range wire {
		typed[name] = TypedAttribute{DataType: value.GetDataType(), StringValue: value.GetStringValue(), BinaryValue: value.GetBinaryValue()}
	}
	return typed
}

// typedAttributesSize is what typed attributes add to a message's size as
// the broker counts it: each name, data type and value.
func typedAttributesSize(wire map[string]*holdshelfv1.TypedAttributeValue) int {
	size := 0
	for name, value := range wire {
		size += len(name) + len(value.GetDataType()) + len(value.GetStringValue()) + len(value.GetBinaryValue())
	}
	return size
}
