// Command probe is an interop test fixture (not an example): it checks, from
// a Go gRPC client, the error statuses holdshelf sends and how it treats a
// long poll the client abandons. The vitest interop tests in test/interop
// run it (examples/build.sh builds it as .build/bin/go-probe) and compare
// its lines with what the Python probe and the TypeScript client see.
//
// It prints one JSON line per check, in this order, then exits 0 (1 only
// when something unexpected breaks, e.g. the broker is unreachable):
//
//	{"check":"queue_not_found","code":"NOT_FOUND","reason":"QUEUE_NOT_FOUND"}
//	{"check":"invalid_argument","code":"INVALID_ARGUMENT","reason":"INVALID_ARGUMENT","fields":["max_messages"]}
//	{"check":"lease_superseded","code":"FAILED_PRECONDITION","reason":"LEASE_SUPERSEDED"}
//	{"check":"deadline","code":"DEADLINE_EXCEEDED","visibleAfter":1,"inFlightAfter":0}
//	{"check":"cancel","code":"CANCELLED","visibleAfter":1,"inFlightAfter":0}
//
// The values are what the broker actually said: a call that unexpectedly
// succeeds prints code "OK".
//
//	.build/bin/go-probe --address 127.0.0.1:50051 --queue-prefix probe
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	holdshelfv1 "holdshelf/gen/go/holdshelf/v1"
)

type probe struct {
	ctx    context.Context // for the setup calls: a deadline for the whole run
	client holdshelfv1.QueueServiceClient
	queue  string // "<prefix>-q"
}

func main() {
	address := flag.String("address", "127.0.0.1:50051", "broker address (host:port)")
	// --queue is accepted like every program's, but the probe names its
	// queues after --queue-prefix.
	flag.String("queue", "jobs", "unused")
	prefix := flag.String("queue-prefix", "probe", "prefix of the probe's queue names")
	flag.Parse()

	conn, err := grpc.Dial(*address, grpc.WithInsecure())
	if err != nil {
		crash("dial %s: %v", *address, err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p := &probe{ctx: ctx, client: holdshelfv1.NewQueueServiceClient(conn), queue: *prefix + "-q"}

	// queue_not_found: GetQueue of a queue that does not exist.
	_, err = p.client.GetQueue(p.ctx, &holdshelfv1.GetQueueRequest{Name: *prefix + "-missing"})
	code, reason, _ := describe(err)
	emit(errorCheck{Check: "queue_not_found", Code: code, Reason: reason})

	// invalid_argument: a Receive of more than 100 messages; the fields
	// are whatever the BadRequest names.
	must(p.client.CreateQueue(p.ctx, &holdshelfv1.CreateQueueRequest{Name: p.queue}))
	// Start from an empty queue, whatever an earlier run left in it.
	must(p.client.PurgeQueue(p.ctx, &holdshelfv1.PurgeQueueRequest{Name: p.queue}))
	_, err = p.client.Receive(p.ctx, &holdshelfv1.ReceiveRequest{Queue: p.queue, MaxMessages: 1000})
	code, reason, fields := describe(err)
	emit(badRequestCheck{Check: "invalid_argument", Code: code, Reason: reason, Fields: fields})

	// lease_superseded: delete with the handle of an earlier delivery.
	p.send()
	h1 := p.receiveOne(30 * time.Second)
	must(p.client.ChangeVisibility(p.ctx, &holdshelfv1.ChangeVisibilityRequest{
		Queue: p.queue, ReceiptHandle: h1, VisibilityTimeout: durationpb.New(0),
	}))
	h2 := p.receiveOne(30 * time.Second)
	_, err = p.client.Delete(p.ctx, &holdshelfv1.DeleteRequest{Queue: p.queue, ReceiptHandle: h1})
	code, reason, _ = describe(err)
	emit(errorCheck{Check: "lease_superseded", Code: code, Reason: reason})
	p.delete(h2)

	// deadline: a 10 s long poll on the empty queue with a 300 ms deadline.
	short, cancelShort := context.WithTimeout(p.ctx, 300*time.Millisecond)
	_, err = p.client.Receive(short, &holdshelfv1.ReceiveRequest{Queue: p.queue, WaitTime: durationpb.New(10 * time.Second)})
	cancelShort()
	p.emitAbandoned("deadline", err)

	// cancel: the same long poll, cancelled by the client after 300 ms.
	polling, cancelPoll := context.WithCancel(p.ctx)
	timer := time.AfterFunc(300*time.Millisecond, cancelPoll)
	_, err = p.client.Receive(polling, &holdshelfv1.ReceiveRequest{Queue: p.queue, WaitTime: durationpb.New(10 * time.Second)})
	timer.Stop()
	cancelPoll()
	p.emitAbandoned("cancel", err)
}

// emitAbandoned reports an abandoned long poll: its code as the client saw
// it, then whether a message sent afterwards was left visible (the poll
// must not have taken it), and cleans up.
func (p *probe) emitAbandoned(check string, err error) {
	code, _, _ := describe(err)
	p.send()
	resp, err := p.client.GetQueue(p.ctx, &holdshelfv1.GetQueueRequest{Name: p.queue})
	if err != nil {
		crash("GetQueue: %v", err)
	}
	stats := resp.Queue.GetStats()
	emit(abandonedPollCheck{Check: check, Code: code, VisibleAfter: stats.GetVisible(), InFlightAfter: stats.GetInFlight()})
	if stats.GetVisible() > 0 {
		p.delete(p.receiveOne(30 * time.Second))
	}
}

// send stores one message on the probe's queue.
func (p *probe) send() {
	must(p.client.Send(p.ctx, &holdshelfv1.SendRequest{Queue: p.queue, Body: []byte("probe")}))
}

// receiveOne leases one message and returns its receipt handle.
func (p *probe) receiveOne(visibility time.Duration) string {
	resp, err := p.client.Receive(p.ctx, &holdshelfv1.ReceiveRequest{
		Queue:             p.queue,
		MaxMessages:       1,
		VisibilityTimeout: durationpb.New(visibility),
		WaitTime:          durationpb.New(5 * time.Second),
	})
	if err != nil {
		crash("Receive: %v", err)
	}
	if len(resp.Messages) != 1 {
		crash("Receive: got %d messages, want 1", len(resp.Messages))
	}
	return resp.Messages[0].ReceiptHandle
}

func (p *probe) delete(handle string) {
	must(p.client.Delete(p.ctx, &holdshelfv1.DeleteRequest{Queue: p.queue, ReceiptHandle: handle}))
}

// describe returns an error's canonical code name, its ErrorInfo reason
// ("" if none) and the fields its BadRequest names (never nil). A nil
// error is "OK".
func describe(err error) (code, reason string, fields []string) {
	st := status.Convert(err)
	fields = []string{}
	for _, detail := range st.Details() {
		switch d := detail.(type) {
		case *errdetails.ErrorInfo:
			reason = d.Reason
		case *errdetails.BadRequest:
			for _, violation := range d.FieldViolations {
				fields = append(fields, violation.Field)
			}
		}
	}
	return codeNames[st.Code()], reason, fields
}

// must stops the probe when a setup call fails.
func must(_ any, err error) {
	if err != nil {
		crash("%v", err)
	}
}

func crash(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "probe: "+format+"\n", args...)
	os.Exit(1)
}

// The JSON lines the probe prints.
type (
	errorCheck struct {
		Check  string `json:"check"`
		Code   string `json:"code"`
		Reason string `json:"reason"`
	}
	badRequestCheck struct {
		Check  string   `json:"check"`
		Code   string   `json:"code"`
		Reason string   `json:"reason"`
		Fields []string `json:"fields"`
	}
	abandonedPollCheck struct {
		Check         string `json:"check"`
		Code          string `json:"code"`
		VisibleAfter  int64  `json:"visibleAfter"`
		InFlightAfter int64  `json:"inFlightAfter"`
	}
)

func emit(v any) {
	_ = json.NewEncoder(os.Stdout).Encode(v)
}

// codeNames spells gRPC codes the canonical way (Go's String() says
// "NotFound" and "Canceled").
var codeNames = map[codes.Code]string{
	codes.OK:                 "OK",
	codes.Canceled:           "CANCELLED",
	codes.Unknown:            "UNKNOWN",
	codes.InvalidArgument:    "INVALID_ARGUMENT",
	codes.DeadlineExceeded:   "DEADLINE_EXCEEDED",
	codes.NotFound:           "NOT_FOUND",
	codes.AlreadyExists:      "ALREADY_EXISTS",
	codes.PermissionDenied:   "PERMISSION_DENIED",
	codes.ResourceExhausted:  "RESOURCE_EXHAUSTED",
	codes.FailedPrecondition: "FAILED_PRECONDITION",
	codes.Aborted:            "ABORTED",
	codes.OutOfRange:         "OUT_OF_RANGE",
	codes.Unimplemented:      "UNIMPLEMENTED",
	codes.Internal:           "INTERNAL",
	codes.Unavailable:        "UNAVAILABLE",
	codes.DataLoss:           "DATA_LOSS",
	codes.Unauthenticated:    "UNAUTHENTICATED",
}
