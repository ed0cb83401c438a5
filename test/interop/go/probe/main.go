// Command probe is an interop test fixture (not an example): it checks, from
// the Go client library, the error statuses holdshelf sends and how it treats
// a long poll the client abandons. The vitest interop tests in test/interop
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
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	holdshelf "github.com/holdshelf/holdshelf/clients/go"
)

type probe struct {
	ctx    context.Context // for the setup calls: a deadline for the whole run
	client *holdshelf.Client
	queue  string // "<prefix>-q"
}

func main() {
	address := flag.String("address", "127.0.0.1:50051", "broker address (host:port)")
	// --queue is accepted like every program's, but the probe names its
	// queues after --queue-prefix.
	flag.String("queue", "jobs", "unused")
	prefix := flag.String("queue-prefix", "probe", "prefix of the probe's queue names")
	flag.Parse()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client, err := holdshelf.Dial(ctx, *address)
	if err != nil {
		crash("%v", err)
	}
	defer client.Close()
	p := &probe{ctx: ctx, client: client, queue: *prefix + "-q"}

	// queue_not_found: GetQueue of a queue that does not exist.
	_, err = p.client.GetQueue(p.ctx, *prefix+"-missing")
	code, reason, _ := describe(err)
	emit(errorCheck{Check: "queue_not_found", Code: code, Reason: reason})

	// invalid_argument: a Receive of more than 100 messages; the fields
	// are whatever the BadRequest names.
	_, err = p.client.CreateQueue(p.ctx, p.queue, nil)
	must(err)
	// Start from an empty queue, whatever an earlier run left in it.
	_, err = p.client.PurgeQueue(p.ctx, p.queue)
	must(err)
	_, err = p.client.Receive(p.ctx, p.queue, &holdshelf.ReceiveOptions{MaxMessages: 1000})
	code, reason, fields := describe(err)
	emit(badRequestCheck{Check: "invalid_argument", Code: code, Reason: reason, Fields: fields})

	// lease_superseded: delete with the handle of an earlier delivery.
	p.send()
	h1 := p.receiveOne()
	_, err = p.client.ChangeVisibility(p.ctx, p.queue, h1, 0)
	must(err)
	h2 := p.receiveOne()
	code, reason, _ = describe(p.client.Delete(p.ctx, p.queue, h1))
	emit(errorCheck{Check: "lease_superseded", Code: code, Reason: reason})
	must(p.client.Delete(p.ctx, p.queue, h2))

	// deadline: a 10 s long poll on the empty queue with a 300 ms deadline.
	longPoll := &holdshelf.ReceiveOptions{WaitTime: holdshelf.Duration(10 * time.Second)}
	short, cancelShort := context.WithTimeout(p.ctx, 300*time.Millisecond)
	_, err = p.client.Receive(short, p.queue, longPoll)
	cancelShort()
	p.emitAbandoned("deadline", err)

	// cancel: the same long poll, cancelled by the client after 300 ms.
	polling, cancelPoll := context.WithCancel(p.ctx)
	timer := time.AfterFunc(300*time.Millisecond, cancelPoll)
	_, err = p.client.Receive(polling, p.queue, longPoll)
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
	queue, err := p.client.GetQueue(p.ctx, p.queue)
	must(err)
	emit(abandonedPollCheck{Check: check, Code: code, VisibleAfter: queue.Stats.Visible, InFlightAfter: queue.Stats.InFlight})
	if queue.Stats.Visible > 0 {
		must(p.client.Delete(p.ctx, p.queue, p.receiveOne()))
	}
}

// send stores one message on the probe's queue.
func (p *probe) send() {
	_, err := p.client.Send(p.ctx, p.queue, []byte("probe"), nil)
	must(err)
}

// receiveOne leases one message for 30 s and returns its receipt handle.
func (p *probe) receiveOne() string {
	messages, err := p.client.Receive(p.ctx, p.queue, &holdshelf.ReceiveOptions{
		MaxMessages:       1,
		VisibilityTimeout: holdshelf.Duration(30 * time.Second),
		WaitTime:          holdshelf.Duration(5 * time.Second),
	})
	must(err)
	if len(messages) != 1 {
		crash("Receive: got %d messages, want 1", len(messages))
	}
	return messages[0].ReceiptHandle
}

// describe returns an error's canonical code name, its reason ("" if none)
// and the fields it names (never nil). A nil error is "OK".
func describe(err error) (code, reason string, fields []string) {
	if err == nil {
		return "OK", "", []string{}
	}
	var e *holdshelf.Error
	if !errors.As(err, &e) {
		crash("not a *holdshelf.Error: %v", err)
	}
	return holdshelf.CodeName(e.Code), e.Reason, e.Fields()
}

// must stops the probe when a setup call fails.
func must(err error) {
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
