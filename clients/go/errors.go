package holdshelf

import (
	"errors"
	"fmt"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Error is a failed call as the broker reported it. Every error a Client
// method returns is an *Error (use errors.As); branch on Reason, which never
// changes between versions, rather than on Message.
type Error struct {
	// Code is the gRPC status code, e.g. codes.NotFound.
	Code codes.Code
	// Reason is holdshelf's stable reason (the google.rpc.ErrorInfo detail),
	// e.g. "QUEUE_NOT_FOUND"; empty when the status came from the gRPC layer
	// (an unreachable broker, a deadline, a cancellation).
	Reason string
	// Message is the status message, for people.
	Message string
	// Violations are the fields a google.rpc.BadRequest detail names, for
	// invalid input; nil otherwise.
	Violations []FieldViolation

	status *status.Status
}

// FieldViolation names one invalid field by its proto path, e.g.
// "config.retention" or "entries[3].delay".
type FieldViolation struct {
	Field       string
	Description string
}

// Error formats the code, the reason and the message.
func (e *Error) Error() string {
	if e.Reason == "" {
		return fmt.Sprintf("holdshelf: %s: %s", CodeName(e.Code), e.Message)
	}
	return fmt.Sprintf("holdshelf: %s (%s): %s", CodeName(e.Code), e.Reason, e.Message)
}

// GRPCStatus lets status.FromError and status.Code read an *Error as the
// status it was made from.
func (e *Error) GRPCStatus() *status.Status {
	if e.status == nil {
		return status.New(e.Code, e.Message)
	}
	return e.status
}

// Fields lists the names of the violated fields, in the broker's order.
func (e *Error) Fields() []string {
	fields := make([]string, len(e.Violations))
	for i, violation := range e.Violations {
		fields[i] = violation.Field
	}
	return fields
}

// IsReason reports whether err is, or wraps, an *Error with this reason.
func IsReason(err error, reason string) bool {
	var e *Error
	return errors.As(err, &e) && e.Reason == reason
}

// FromGRPC converts an error of a gRPC call on the broker (for instance of
// the raw stream Client.Heartbeat returns) to an *Error; nil stays nil, and
// an *Error is returned as it is.
func FromGRPC(err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	st := status.Convert(err)
	converted := &Error{Code: st.Code(), Message: st.Message(), status: st}
	for _, detail := range st.Details() {
		switch d := detail.(type) {
		case *errdetails.ErrorInfo:
			converted.Reason = d.Reason
		case *errdetails.BadRequest:
			for _, violation := range d.FieldViolations {
				converted.Violations = append(converted.Violations, FieldViolation{Field: violation.Field, Description: violation.Description})
			}
		}
	}
	return converted
}
