// Command worker is a holdshelf consumer for long, resumable jobs, written
// against the gRPC API with nothing but the generated client.
//
// It shows how to:
//   - long-poll Receive for a batch of messages;
//   - keep the whole batch's leases alive on ONE Heartbeat stream opened with
//     release_on_disconnect, so that if this process dies its messages are
//     visible again at once instead of after the visibility timeout;
//   - save progress as a checkpoint after every step, so that the next
//     delivery of a message resumes where a failed attempt stopped;
//   - acknowledge a finished job with Delete;
//   - read the stable reason (google.rpc.ErrorInfo) of a failed call;
//   - stop gracefully on SIGTERM or SIGINT: finish the current job, give
//     the batch's unstarted messages back, close the stream, exit 0.
//
// A job "works" by sleeping --step-ms for each of --steps steps. The worker
// prints one JSON object per line on stdout: polling (before each
// Receive), received, checkpoint, processed, lease_lost, error and, at the
// end, stopped events. With --exit-when-idle it exits once a 1 s poll
// comes back empty.
//
// Run it from the repository root against a broker on 127.0.0.1:50051
// (examples/build.sh generates the client code and builds the binaries):
//
//	examples/build.sh
//	.build/bin/go-producer --count 20
//	.build/bin/go-worker --steps 3 --step-ms 50 --exit-when-idle
//
// Kill a worker with kill -9 in the middle of a long job (--steps 50
// --step-ms 100): another worker gets the message back within milliseconds
// and carries on from the last checkpoint.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	holdshelfv1 "holdshelf/gen/go/holdshelf/v1"
)

func main() {
	address := flag.String("address", "127.0.0.1:50051", "broker address (host:port)")
	queue := flag.String("queue", "jobs", "queue to consume")
	steps := flag.Int("steps", 5, "steps per job (0: none)")
	stepMs := flag.Int("step-ms", 200, "milliseconds each step takes")
	leaseSeconds := flag.Float64("lease-seconds", 30, "visibility timeout each lease renewal asks for; renewed every third of it")
	batch := flag.Int("batch", 10, "most messages per Receive (1 to 100)")
	exitWhenIdle := flag.Bool("exit-when-idle", false, "exit once a Receive (1 s long poll) comes back empty")
	flag.Parse()
	if *steps < 0 || *stepMs < 0 || *leaseSeconds <= 0 || *batch < 1 || *batch > 100 {
		fmt.Fprintln(os.Stderr, "worker: need --steps >= 0, --step-ms >= 0, --lease-seconds > 0, --batch 1 to 100")
		os.Exit(2)
	}

	// The first SIGTERM or SIGINT cancels ctx: no more receives, and a long
	// poll in progress is cancelled at once (the broker hands a cancelled
	// poll no message). The job in progress still runs to its end. After
	// that first signal the default behaviour is back, so a second Ctrl-C
	// kills the process (and the broker releases its leases at once).
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	go func() {
		<-ctx.Done()
		stop()
	}()

	// gRPC-Go 1.33 (Debian's) predates credentials/insecure: WithInsecure
	// means plaintext. Dial does not block; the first call connects. While
	// the broker is unreachable, calls fail at once (UNAVAILABLE) and gRPC
	// reconnects in the background; capping its backoff at 5 s (default
	// 120 s) finds a restarted broker again within seconds.
	reconnect := backoff.DefaultConfig
	reconnect.MaxDelay = 5 * time.Second
	conn, err := grpc.Dial(*address, grpc.WithInsecure(), grpc.WithConnectParams(grpc.ConnectParams{
		Backoff:           reconnect,
		MinConnectTimeout: 20 * time.Second, // gRPC's default
	}))
	if err != nil {
		log.Fatalf("worker: dial %s: %v", *address, err)
	}
	defer conn.Close()

	w := &worker{
		client:    holdshelfv1.NewQueueServiceClient(conn),
		queue:     *queue,
		steps:     *steps,
		stepDelay: time.Duration(*stepMs) * time.Millisecond,
		lease:     time.Duration(*leaseSeconds * float64(time.Second)),
	}
	waitTime := 20 * time.Second // the longest long poll the broker allows
	if *exitWhenIdle {
		waitTime = time.Second
	}

	for ctx.Err() == nil {
		emit(map[string]string{"event": "polling"})
		resp, err := w.client.Receive(ctx, &holdshelfv1.ReceiveRequest{
			Queue:       w.queue,
			MaxMessages: int32(*batch),
			// The lease the Heartbeat stream then keeps renewing.
			VisibilityTimeout: durationpb.New(w.lease),
			WaitTime:          durationpb.New(waitTime),
		})
		if err != nil {
			if ctx.Err() != nil {
				break // we cancelled the poll ourselves: a signal came
			}
			emitError("Receive", err)
			sleep(ctx, time.Second)
			continue
		}
		if len(resp.Messages) == 0 {
			if *exitWhenIdle {
				break // nothing left to do
			}
			continue
		}
		w.processBatch(ctx, resp.Messages)
	}
	emit(map[string]string{"event": "stopped"})
}

// worker runs the jobs of one queue.
type worker struct {
	client    holdshelfv1.QueueServiceClient
	queue     string
	steps     int
	stepDelay time.Duration
	lease     time.Duration
}

// processBatch works through one Receive's messages, one after another,
// while a Heartbeat stream keeps all of their leases alive.
func (w *worker) processBatch(ctx context.Context, messages []*holdshelfv1.ReceivedMessage) {
	// The stream gets a context of its own, not ctx: after a signal the
	// current job still renews and checkpoints on it, and then the stream is
	// half-closed cleanly (b.close). A stream that breaks instead (this
	// process dies, or its connection does) makes the broker release every
	// lease it holds at once: release_on_disconnect.
	streamCtx, cancel := context.WithCancel(context.Background())
	defer cancel() // runs after b.close: only frees the ended stream
	stream, err := w.client.Heartbeat(streamCtx)
	if err != nil {
		emitError("Heartbeat", err)
		return
	}
	b := newLeaseBatch(stream, w.queue, w.lease, messages)
	defer b.close()

	// 1. Name every lease of the batch on the stream, and read the answer.
	var all []*job
	for _, m := range messages {
		all = append(all, b.jobs[m.ReceiptHandle])
	}
	if _, ok := <-b.renew(all, nil); !ok {
		return // the stream failed: the reader printed why
	}
	// 2. From now on, renew every still-held lease in the background.
	b.startRenewals()

	// 3. The jobs, one after another.
	for i, j := range all {
		if ctx.Err() != nil {
			// Stopping: give the jobs we will not start back right away
			// instead of letting their leases run out.
			b.release(all[i:])
			return
		}
		if b.ended() {
			return // the stream failed: these leases can no longer be kept
		}
		w.runJob(b, j)
	}
}

// runJob runs one job from its last checkpoint, saving a checkpoint after
// every step, and deletes the message when it is done.
func (w *worker) runJob(b *leaseBatch, j *job) {
	if j.isLost() {
		return // its lease was lost before we got to it
	}
	m := j.message
	start := 0
	var checkpoint *string // null in the JSON when the delivery has none
	if m.Checkpoint != nil {
		text := string(m.Checkpoint) // the decimal step number, e.g. "3"
		checkpoint = &text
		if n, err := strconv.Atoi(text); err == nil && n >= 0 {
			start = n
		}
	}
	emit(receivedEvent{
		Event:        "received",
		MessageID:    m.MessageId,
		Body:         string(m.Body),
		ReceiveCount: m.ReceiveCount,
		Checkpoint:   checkpoint,
	})

	for s := start; s < w.steps; s++ {
		select {
		case <-time.After(w.stepDelay): // the step's "work"
		case <-j.lost:
			return // another worker may own the message now: stop
		}
		// Save the progress with a renewal, and go on only once the broker
		// says it is durable (held=true).
		step := []byte(strconv.Itoa(s + 1))
		states, ok := <-b.renew([]*job{j}, step)
		if !ok || !states[0].Held || j.isLost() {
			// The stream failed, or the lease was lost (both reported). The
			// last check catches a LEASE_EXPIRED notice that came in while
			// the renewal was on its way (a late renewal can still succeed,
			// but the job was already given up).
			return
		}
		emit(checkpointEvent{Event: "checkpoint", MessageID: m.MessageId, Step: s + 1})
	}

	if !b.finish(j) {
		return // lost while finishing: do not delete another delivery
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := w.client.Delete(ctx, &holdshelfv1.DeleteRequest{Queue: w.queue, ReceiptHandle: m.ReceiptHandle})
	if err != nil {
		emitError("Delete", err)
		return
	}
	emit(processedEvent{Event: "processed", MessageID: m.MessageId, Body: string(m.Body)})
}

// job is one message of a batch.
type job struct {
	message  *holdshelfv1.ReceivedMessage
	lost     chan struct{} // closed when its lease is lost
	finished bool          // done with (deleting or released): renewals stop
}

func (j *job) isLost() bool {
	select {
	case <-j.lost:
		return true
	default:
		return false
	}
}

// leaseBatch keeps the leases of one batch on one Heartbeat stream.
//
// The broker answers each request with one response, in order; it also
// sends unsolicited responses naming leases that ran out (LEASE_EXPIRED).
// A reader goroutine matches answers to requests with a queue of waiting
// channels and reports every lease that is not held.
type leaseBatch struct {
	stream holdshelfv1.QueueService_HeartbeatClient
	queue  string
	lease  time.Duration
	jobs   map[string]*job // by receipt handle; fixed once built

	sendMu sync.Mutex // one write at a time: a gRPC stream is not safe for concurrent sends
	closed bool       // guarded by sendMu: half-closed, no more sends

	mu      sync.Mutex // guards pending, the jobs' lost and finished, and isEnded
	pending []chan []*holdshelfv1.LeaseState
	isEnded bool

	done         chan struct{} // closed when the stream has ended
	stopRenewals chan struct{}
	renewals     sync.WaitGroup // the background renewals
	releases     sync.WaitGroup // releases of leases taken back after a loss
}

func newLeaseBatch(stream holdshelfv1.QueueService_HeartbeatClient, queue string, lease time.Duration, messages []*holdshelfv1.ReceivedMessage) *leaseBatch {
	b := &leaseBatch{
		stream:       stream,
		queue:        queue,
		lease:        lease,
		jobs:         make(map[string]*job),
		done:         make(chan struct{}),
		stopRenewals: make(chan struct{}),
	}
	for _, m := range messages {
		b.jobs[m.ReceiptHandle] = &job{message: m, lost: make(chan struct{})}
	}
	go b.read()
	return b
}

// renew sends one request renewing the jobs' leases for b.lease, with a
// checkpoint if one is given. The returned channel yields the answer's
// states (one per job, in order), or is closed if the stream ends first.
func (b *leaseBatch) renew(jobs []*job, checkpoint []byte) <-chan []*holdshelfv1.LeaseState {
	leases := make([]*holdshelfv1.LeaseRenewal, len(jobs))
	for i, j := range jobs {
		leases[i] = &holdshelfv1.LeaseRenewal{
			ReceiptHandle:     j.message.ReceiptHandle,
			VisibilityTimeout: durationpb.New(b.lease),
			Checkpoint:        checkpoint, // nil: keep the last one
		}
	}
	return b.send(leases)
}

// send writes one request (renew's, a release, or an empty one) and
// returns where its answer will arrive.
func (b *leaseBatch) send(leases []*holdshelfv1.LeaseRenewal) <-chan []*holdshelfv1.LeaseState {
	answer := make(chan []*holdshelfv1.LeaseState, 1)
	b.sendMu.Lock()
	defer b.sendMu.Unlock()
	b.mu.Lock()
	if b.isEnded || b.closed {
		b.mu.Unlock()
		close(answer)
		return answer
	}
	b.pending = append(b.pending, answer) // in send order: answers come in that order
	b.mu.Unlock()
	// The broker reads release_on_disconnect from the first request only;
	// sending it on every request keeps this simple. If Send fails the
	// stream is over: the reader learns why from Recv and closes answer.
	_ = b.stream.Send(&holdshelfv1.HeartbeatRequest{Queue: b.queue, Leases: leases, ReleaseOnDisconnect: true})
	return answer
}

// read runs until the stream ends, handing answers to their requests and
// reporting every lease that is not held.
func (b *leaseBatch) read() {
	defer close(b.done)
	for {
		resp, err := b.stream.Recv()
		if err != nil {
			if err != io.EOF { // io.EOF: the broker ended the stream cleanly
				emitError("Heartbeat", err)
			}
			b.mu.Lock()
			b.isEnded = true
			for _, answer := range b.pending {
				close(answer)
			}
			b.pending = nil
			b.mu.Unlock()
			return
		}

		b.mu.Lock()
		// An answer never says LEASE_EXPIRED, and a notice only says that.
		if !isExpiryNotice(resp.Leases) && len(b.pending) > 0 {
			b.pending[0] <- resp.Leases
			b.pending = b.pending[1:]
		}
		for _, state := range resp.Leases {
			j := b.jobs[state.ReceiptHandle]
			switch {
			case j == nil || j.finished:
				// Not ours, or done with (deleted or released).
			case state.Held && j.isLost():
				// A renewal sent just before the loss was reported took the
				// lease back (nobody had received the message since). The
				// job is given up already: give the message back at once.
				j.finished = true
				b.releases.Add(1)
				go func() {
					defer b.releases.Done()
					<-b.send([]*holdshelfv1.LeaseRenewal{releaseOf(j)})
				}()
			case !state.Held && !j.isLost():
				close(j.lost)
				emit(leaseLostEvent{Event: "lease_lost", MessageID: j.message.MessageId, Reason: state.Reason})
			}
		}
		b.mu.Unlock()
	}
}

func isExpiryNotice(states []*holdshelfv1.LeaseState) bool {
	for _, state := range states {
		if state.Reason != "LEASE_EXPIRED" {
			return false
		}
	}
	return len(states) > 0
}

// startRenewals renews, every third of the lease, all the batch's leases
// that are still held and not finished, so none runs out while the jobs
// before it are worked on. The renewals carry no checkpoint.
func (b *leaseBatch) startRenewals() {
	b.renewals.Add(1)
	go func() {
		defer b.renewals.Done()
		ticker := time.NewTicker(b.lease / 3)
		defer ticker.Stop()
		for {
			select {
			case <-b.stopRenewals:
				return
			case <-b.done:
				return
			case <-ticker.C:
				var held []*job
				b.mu.Lock()
				for _, j := range b.jobs {
					if !j.finished && !j.isLost() {
						held = append(held, j)
					}
				}
				b.mu.Unlock()
				if len(held) > 0 {
					b.renew(held, nil) // the reader reports any lease lost
				}
			}
		}
	}()
}

// finish marks a job done with, so that renewals leave it alone; false if
// its lease was lost first.
func (b *leaseBatch) finish(j *job) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if j.isLost() {
		return false
	}
	j.finished = true
	return true
}

// release gives leases back at once: a renewal with a visibility timeout
// of 0. It waits for the broker's answer.
func (b *leaseBatch) release(jobs []*job) {
	var leases []*holdshelfv1.LeaseRenewal
	for _, j := range jobs {
		if b.finish(j) {
			leases = append(leases, releaseOf(j))
		}
	}
	if len(leases) > 0 {
		<-b.send(leases) // each state says held=false, reason RELEASED
	}
}

// releaseOf is a renewal that releases a job's lease: visibility 0.
func releaseOf(j *job) *holdshelfv1.LeaseRenewal {
	return &holdshelfv1.LeaseRenewal{ReceiptHandle: j.message.ReceiptHandle, VisibilityTimeout: durationpb.New(0)}
}

func (b *leaseBatch) ended() bool {
	select {
	case <-b.done:
		return true
	default:
		return false
	}
}

// close stops the renewals, half-closes the stream (a clean end: leases we
// still hold run their course) and waits for the broker to end it.
func (b *leaseBatch) close() {
	close(b.stopRenewals)
	b.renewals.Wait()
	// An empty request is answered after every request sent before it, so
	// once its answer is in, every renewal that took a lost lease back has
	// been seen, and its release started: wait for those to go out.
	<-b.send(nil)
	b.releases.Wait()
	b.sendMu.Lock()
	b.closed = true
	_ = b.stream.CloseSend()
	b.sendMu.Unlock()
	<-b.done
}

// sleep waits for d, or less if ctx is cancelled first.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

var stdoutMu sync.Mutex // the reader goroutine prints too: keep lines whole

// The JSON lines the worker prints, besides {"event":"stopped"}.
type (
	receivedEvent struct {
		Event        string  `json:"event"`
		MessageID    string  `json:"messageId"`
		Body         string  `json:"body"`
		ReceiveCount int32   `json:"receiveCount"`
		Checkpoint   *string `json:"checkpoint"` // null when the delivery has none
	}
	checkpointEvent struct {
		Event     string `json:"event"`
		MessageID string `json:"messageId"`
		Step      int    `json:"step"`
	}
	processedEvent struct {
		Event     string `json:"event"`
		MessageID string `json:"messageId"`
		Body      string `json:"body"`
	}
	leaseLostEvent struct {
		Event     string `json:"event"`
		MessageID string `json:"messageId"`
		Reason    string `json:"reason"`
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
	stdoutMu.Lock()
	defer stdoutMu.Unlock()
	_ = json.NewEncoder(os.Stdout).Encode(v)
}

// emitError prints a failed call with its gRPC code and holdshelf's stable
// reason, which the broker sends as a google.rpc.ErrorInfo detail.
func emitError(rpc string, err error) {
	st := status.Convert(err)
	emit(errorEvent{Event: "error", RPC: rpc, Code: codeNames[st.Code()], Reason: reason(st), Message: st.Message()})
}

// reason is the ErrorInfo reason of a status, e.g. LEASE_SUPERSEDED; "" if none.
func reason(st *status.Status) string {
	for _, detail := range st.Details() {
		if info, ok := detail.(*errdetails.ErrorInfo); ok {
			return info.Reason
		}
	}
	return ""
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
