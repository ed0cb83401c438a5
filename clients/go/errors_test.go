package holdshelf

import (
	"errors"
	"fmt"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func richStatus(t *testing.T) error {
	st, err := status.New(codes.InvalidArgument, "config.retention is out of bounds").WithDetails(
		&errdetails.ErrorInfo{Domain: "holdshelf", Reason: ReasonInvalidArgument},
		&errdetails.BadRequest{FieldViolations: []*errdetails.BadRequest_FieldViolation{
			{Field: "config.retention", Description: "60s to 14 days"},
			{Field: "name", Description: "malformed"},
		}},
	)
	if err != nil {
		t.Fatal(err)
	}
	return st.Err()
}

func TestFromGRPCReadsTheCodeTheReasonAndTheViolations(t *testing.T) {
	err := fmt.Errorf("creating: %w", FromGRPC(richStatus(t)))
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("errors.As found no *Error in %v", err)
	}
	if e.Code != codes.InvalidArgument || e.Reason != ReasonInvalidArgument || e.Message != "config.retention is out of bounds" {
		t.Errorf("got %+v", e)
	}
	if fields := e.Fields(); len(fields) != 2 || fields[0] != "config.retention" || fields[1] != "name" {
		t.Errorf("fields = %v", fields)
	}
	if e.Violations[0].Description != "60s to 14 days" {
		t.Errorf("description = %q", e.Violations[0].Description)
	}
	if !IsReason(err, ReasonInvalidArgument) || IsReason(err, ReasonQueueNotFound) {
		t.Error("IsReason does not match the reason")
	}
	if status.Code(e) != codes.InvalidArgument {
		t.Errorf("status.Code = %v", status.Code(e))
	}
	if got, want := e.Error(), "holdshelf: INVALID_ARGUMENT (INVALID_ARGUMENT): config.retention is out of bounds"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestFromGRPCOfAStatusWithoutDetailsHasNoReason(t *testing.T) {
	var e *Error
	if !errors.As(FromGRPC(status.Error(codes.Unavailable, "connection refused")), &e) {
		t.Fatal("not an *Error")
	}
	if e.Code != codes.Unavailable || e.Reason != "" || e.Violations != nil {
		t.Errorf("got %+v", e)
	}
	if got := e.Error(); got != "holdshelf: UNAVAILABLE: connection refused" {
		t.Errorf("Error() = %q", got)
	}
}

func TestFromGRPCOfAnErrorThatIsNoStatusIsUnknown(t *testing.T) {
	var e *Error
	if !errors.As(FromGRPC(errors.New("odd")), &e) || e.Code != codes.Unknown {
		t.Errorf("got %v", e)
	}
}

func TestFromGRPCKeepsNilAndAnErrorAlreadyConverted(t *testing.T) {
	if FromGRPC(nil) != nil {
		t.Error("nil became an error")
	}
	converted := FromGRPC(richStatus(t))
	if FromGRPC(converted) != converted {
		t.Error("an *Error was converted again")
	}
}

func TestCodeNameSpellsCodesTheCanonicalWay(t *testing.T) {
	if CodeName(codes.Canceled) != "CANCELLED" || CodeName(codes.NotFound) != "NOT_FOUND" {
		t.Errorf("got %s and %s", CodeName(codes.Canceled), CodeName(codes.NotFound))
	}
	if CodeName(codes.Code(99)) != "Code(99)" {
		t.Errorf("an unknown code: %s", CodeName(codes.Code(99)))
	}
}
