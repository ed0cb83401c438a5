// Command producer sends messages to a holdshelf queue, written against the
// gRPC API with nothing but the generated client.
//
// It shows how to:
//   - create a queue idempotently (CreateQueue with the same configuration
//     returns the existing queue, so running the producer again is fine);
//   - send many messages with SendBatch, up to 100 per call, each call
//     stored atomically (all of its messages or none);
//   - read the stable reason (google.rpc.ErrorInfo) of a failed call.
//
// It sends the bodies "<prefix>-0" to "<prefix>-<count-1>" and prints one
// JSON line per message: {"event":"sent","messageId":"...","body":"job-0"}.
//
// Run it from the repository root against a broker on 127.0.0.1:50051
// (examples/build.sh generates the client code and builds the binaries):
//
//	examples/build.sh
//	.build/bin/go-producer --count 20 --prefix job
//	.build/bin/go-worker --exit-when-idle
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	holdshelfv1 "holdshelf/gen/go/holdshelf/v1"
)

const (
	maxBatch    = 100              // the most entries one SendBatch takes
	callTimeout = 30 * time.Second // a deadline for every call
)

func main() {
	address := flag.String("address", "127.0.0.1:50051", "broker address (host:port)")
	queue := flag.String("queue", "jobs", "queue to send to (created if missing)")
	count := flag.Int("count", 10, "how many messages to send")
	prefix := flag.String("prefix", "job", "bodies are <prefix>-<i>")
	flag.Parse()
	if *count < 0 {
		fmt.Fprintln(os.Stderr, "producer: --count must be >= 0")
		os.Exit(2)
	}

	// gRPC-Go 1.33 (Debian's) predates credentials/insecure: WithInsecure
	// means plaintext. Dial does not block; the first call connects.
	conn, err := grpc.Dial(*address, grpc.WithInsecure())
	if err != nil {
		log.Fatalf("producer: dial %s: %v", *address, err)
	}
	defer conn.Close()
	client := holdshelfv1.NewQueueServiceClient(conn)

	// No config: the queue's defaults. If the queue exists with the default
	// config this returns it; with another config it fails
	// QUEUE_ALREADY_EXISTS.
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	_, err = client.CreateQueue(ctx, &holdshelfv1.CreateQueueRequest{Name: *queue})
	cancel()
	if err != nil {
		fail("CreateQueue", err)
	}

	for start := 0; start < *count; start += maxBatch {
		end := start + maxBatch
		if end > *count {
			end = *count
		}
		var bodies []string
		var entries []*holdshelfv1.SendBatchEntry
		for i := start; i < end; i++ {
			body := fmt.Sprintf("%s-%d", *prefix, i)
			bodies = append(bodies, body)
			entries = append(entries, &holdshelfv1.SendBatchEntry{Body: []byte(body)})
		}
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		resp, err := client.SendBatch(ctx, &holdshelfv1.SendBatchRequest{Queue: *queue, Entries: entries})
		cancel()
		if err != nil {
			fail("SendBatch", err) // atomic: none of this batch was stored
		}
		for i, id := range resp.MessageIds { // ids come in entry order
			emit(sentEvent{Event: "sent", MessageID: id, Body: bodies[i]})
		}
	}
}

// The JSON lines the producer prints.
type (
	sentEvent struct {
		Event     string `json:"event"`
		MessageID string `json:"messageId"`
		Body      string `json:"body"`
	}
	errorEvent struct {
		Event   string `json:"event"`
		RPC     string `json:"rpc"`
		Code    string `json:"code"`
		Reason  string `json:"reason"`
		Message string `json:"message"`
	}
)

// emit prints v as one JSON line. os.Stdout is unbuffered: the line goes
// out at once.
func emit(v any) {
	_ = json.NewEncoder(os.Stdout).Encode(v)
}

// fail prints a failed call with its gRPC code and holdshelf's stable
// reason, which the broker sends as a google.rpc.ErrorInfo detail, and
// exits 1.
func fail(rpc string, err error) {
	st := status.Convert(err)
	reason := ""
	for _, detail := range st.Details() {
		if info, ok := detail.(*errdetails.ErrorInfo); ok {
			reason = info.Reason
		}
	}
	emit(errorEvent{Event: "error", RPC: rpc, Code: codeNames[st.Code()], Reason: reason, Message: st.Message()})
	os.Exit(1)
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
