"""Runs a handler on each message of a queue in a thread pool, its leases kept alive (Subscribe, or Receive)."""

from __future__ import annotations

import functools
import logging
import signal
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from queue import SimpleQueue
from typing import TypeGuard

import grpc

from holdshelf import reasons
from holdshelf.backoff import backoff_seconds
from holdshelf.client import Client, PendingReceive
from holdshelf.convert import lease_lost_before_delete
from holdshelf.durations import Seconds, seconds_of
from holdshelf.errors import HoldshelfError, LeaseLostError
from holdshelf.handler_context import HandlerContext
from holdshelf.lease_keeper import HeldLease, LeaseKeeper
from holdshelf.retry_later import RetryLater
from holdshelf.subscription import SubscribedLease, Subscription
from holdshelf.values import FlowControl, ReceivedMessage

# Codes of a call no broker answered (or one that timed out): a delete is worth trying again.
_TRANSIENT_CODES = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED})


# Refusals no retry can overcome: the token is missing, unknown (UNAUTHENTICATED) or may not consume the queue.
_REFUSAL_CODES = frozenset({grpc.StatusCode.PERMISSION_DENIED, grpc.StatusCode.UNAUTHENTICATED})


def _is_fatal(error: BaseException) -> TypeGuard[HoldshelfError]:
    """Whether an error of the Consumer's own calls (GetQueue, Receive, its stream) ends it: no retry
    can succeed while the queue does not exist or the token is refused (the Go and TypeScript
    Consumers' rule). Everything else (UNAVAILABLE, QUEUE_MOVING, SHUTTING_DOWN, limits) is
    retried with backoff."""
    return isinstance(error, HoldshelfError) and not isinstance(error, LeaseLostError) and (
        error.reason == reasons.QUEUE_NOT_FOUND or error.code in _REFUSAL_CODES)

Handler = Callable[[ReceivedMessage, HandlerContext], None]
"""Works on one message. Returning deletes it; raising ends its lease as a failed delivery."""

ErrorCallback = Callable[[BaseException, ReceivedMessage | None], None]

# The protocol's bound on Receive's max_messages.
MAX_RECEIVE_MESSAGES = 100
# The broker's precision: a shorter lease is sent as 0, which hides nothing.
MIN_LEASE_SECONDS = 0.001
# After the grace period, stop() gives the releases and the stream's clean
# end this long before it cuts the stream.
CLOSE_TIMEOUT_SECONDS = 5.0
# Each delete attempt's deadline: a half-open connection, which never
# answers, must not hold a handler's slot forever.
DELETE_TIMEOUT_SECONDS = 30.0

_log = logging.getLogger("holdshelf")


def _log_error(error: BaseException, message: ReceivedMessage | None) -> None:
    where = f" (message {message.message_id})" if message is not None else ""
    # A traceback helps with a handler's unexpected error, not with a broker's answer or a RetryLater.
    expected = isinstance(error, (HoldshelfError, RetryLater, LeaseLostError))
    _log.error("holdshelf consumer: %s%s", error, where, exc_info=None if expected else error)


Lease = HeldLease | SubscribedLease
# Starts holding a job's lease, given what to call if it is lost.
Hold = Callable[[Callable[[LeaseLostError], None]], Lease]


class _Job:
    def __init__(self, message: ReceivedMessage, hold: Hold, previous: Future[bool] | None) -> None:
        self.message = message
        self.context = HandlerContext(message)
        self.abandoned = False  # stop() gave the message back: the handler's outcome is ignored
        self.deleted = False
        # Resolves once the message is settled: whether it was deleted.
        self.outcome: Future[bool] = Future()
        # FIFO queues: the outcome of the message received before this one in
        # the same receive and group (None for the first, and on a standard
        # queue), and an event set once that one is settled or this lease is
        # lost or given back, whichever comes first (see Consumer._take_turn).
        self.previous = previous
        self.turn = threading.Event()
        if previous is not None:
            previous.add_done_callback(lambda _: self.turn.set())
        self.lease: Lease = hold(self.cancel)
        self.context._lease = self.lease

    def cancel(self, why: LeaseLostError) -> None:
        """The lease is lost, or stop() gave the message back: the handler hears it, and a wait for its turn ends."""
        self.context._cancel(why)
        self.turn.set()


class Consumer:
    """Consumes a queue and runs `handler(message, ctx)` on each message.

    - By default it consumes on one Subscribe stream (see Subscription):
      the broker pushes deliveries up to the stream's credit,
      max_outstanding_messages = `concurrency` (and max_outstanding_bytes,
      0 for no limit), and acks, renewals, checkpoints and failures go up the
      same stream. A broker without Subscribe (UNIMPLEMENTED) makes it fall
      back to the receive loop below, as does `subscribe=False`.
    - At most `concurrency` handlers run at once, each on a thread of the
      Consumer's pool, and at most that many messages are leased: a receive
      asks only for free slots. On a FIFO queue they serve different message
      groups: one group's messages are handled one at a time, in send order,
      even when one receive leases several of them (they wait their turn,
      leased, in a slot); one that follows a message not deleted (its handler
      failed, its lease was lost) is released instead, to come back behind it.
    - Every lease rides one stream opened with release_on_disconnect (the
      Subscribe stream, or on the receive loop a Heartbeat stream, named on
      it as soon as it is received), renewed every third of the lease (less
      up to 20% jitter). If this process dies, the broker releases the
      leases at once.
    - Returning deletes the message (an ack on the Subscribe stream, else a
      Delete). Raising ends its lease as a failed delivery (a renewal with
      failed): the broker brings it back
      after the queue's retry_policy backoff, min(max_backoff, min_backoff *
      2^(receive_count-1)), at once without one, or moves it to the
      dead-letter queue once its receives are spent; RetryLater(seconds)
      chooses the wait instead.
    - A lost lease sets ctx.cancelled; ctx.checkpoint(bytes) stores progress.
    - A broken stream is reopened with backoff and its leases renewed there.
    - It fails fast: a queue that does not exist (QUEUE_NOT_FOUND), a token
      that may not consume it (PERMISSION_DENIED) or one the broker refuses
      (TOKEN_MISSING, TOKEN_INVALID) stops it at once, at its start or while
      it runs, and wait() raises that error; transient errors (UNAVAILABLE,
      QUEUE_MOVING, ...) are reported to on_error and retried with backoff.

    It starts at once, on a background thread: it reads the queue's
    visibility timeout (GetQueue) to pace renewals, unless
    visibility_timeout is given, then subscribes or receives. A queue whose
    visibility timeout is 0 needs the option: without it, on_error hears a
    ValueError and the Consumer stops without receiving.
    `visibility_timeout` (seconds) is the lease of deliveries and renewals
    (default: the queue's); `wait_time` the long poll of each receive;
    `stop_grace` the default grace period of stop(); `on_error` is told of
    every failure (a handler's, with its message, even once its lease was
    lost or given back; a receive's, a delete's, a refused or unsent
    release's, a stream's) and must not raise; by default they are logged to
    the "holdshelf" logger. A lost lease is not a failure of its own: the
    handler hears of it through ctx.cancelled. But a handled message whose
    delete came too late, after it was dead-lettered or received again by
    someone else, is reported to on_error as a LeaseLostError (reason
    DEAD_LETTERED or RECEIVED_AGAIN): its work may be done again.
    """

    def __init__(self, client: Client, queue: str, handler: Handler, *, concurrency: int = 1,
                 visibility_timeout: Seconds | None = None, wait_time: Seconds = 20, stop_grace: Seconds = 10,
                 renew_fraction: float = 1 / 3, on_error: ErrorCallback | None = None, subscribe: bool = True,
                 max_outstanding_bytes: int = 0) -> None:
        if not isinstance(concurrency, int) or concurrency < 1:
            raise ValueError(f"concurrency must be an integer of at least 1, not {concurrency!r}")
        if not 0 < renew_fraction < 1:
            raise ValueError(f"renew_fraction must be between 0 and 1, not {renew_fraction!r}")
        if not isinstance(max_outstanding_bytes, int) or max_outstanding_bytes < 0:
            raise ValueError(f"max_outstanding_bytes must be an integer of at least 0, not {max_outstanding_bytes!r}")
        self.queue = queue
        self._client = client
        self._handler = handler
        self._concurrency = concurrency
        self._visibility_timeout = None if visibility_timeout is None else seconds_of(visibility_timeout)
        if self._visibility_timeout is not None and self._visibility_timeout < MIN_LEASE_SECONDS:
            raise ValueError("visibility_timeout must be 1 ms or more: a lease of 0 hides nothing")
        self._wait_time = seconds_of(wait_time)
        self._stop_grace = seconds_of(stop_grace)
        self._renew_fraction = renew_fraction
        self._on_error = on_error or _log_error
        self._subscribe = subscribe
        self._max_outstanding_bytes = max_outstanding_bytes
        self._cv = threading.Condition()
        self._jobs: set[_Job] = set()
        self._stopping = threading.Event()
        self._stopped = threading.Event()
        self._failure: HoldshelfError | None = None  # the error that stopped it by itself, for wait()
        self._pending_receive: PendingReceive | None = None
        self._keeper: LeaseKeeper | None = None
        self._subscription: Subscription | None = None
        self._unimplemented = threading.Event()  # the broker has no Subscribe: fall back to Receive
        # Subscribe: the jobs of each FIFO group not settled yet, by sequence number (see _on_deliveries).
        self._group_jobs: dict[str, list[tuple[str, Future[bool]]]] = {}
        # One stream's reader at a time hands deliveries over, but a broken stream's may still be doing so.
        self._deliveries_lock = threading.Lock()
        # A pool of daemon threads rather than a ThreadPoolExecutor, whose
        # exit hook would make the process wait for a handler that ignores
        # its cancellation after stop() gave its message back.
        self._work_queue: SimpleQueue[_Job | None] = SimpleQueue()
        self._workers = [threading.Thread(target=self._work_loop, name=f"holdshelf-handler-{i}", daemon=True)
                         for i in range(concurrency)]
        for worker in self._workers:
            worker.start()
        self._loop = threading.Thread(target=self._run, name="holdshelf-receive", daemon=True)
        self._loop.start()

    @property
    def active(self) -> int:
        """How many messages are being worked on or settled now."""
        with self._cv:
            return len(self._jobs)

    def stop(self, grace: Seconds | None = None) -> None:
        """Stops receiving (a Subscribe stream's credit goes to 0), waits up to `grace` seconds
        (default stop_grace) for running handlers, then releases the messages of those still
        running (setting their ctx.cancelled) and half-closes the stream. Messages received
        after stop began are released at once. A second call waits for the first."""
        with self._cv:
            first = not self._stopping.is_set()
            self._stopping.set()
            pending = self._pending_receive
            self._cv.notify_all()
        if not first:
            self._stopped.wait()
            return
        try:
            if pending is not None:
                pending.cancel()  # a cancelled long poll takes no message
            self._loop.join()
            self._shutdown(self._stop_grace if grace is None else seconds_of(grace))
        finally:
            for _ in self._workers:
                self._work_queue.put(None)
            self._stopped.set()

    def wait(self, timeout: float | None = None) -> bool:
        """Blocks until a stop (from another thread or a signal) has finished; False on timeout.

        Raises the HoldshelfError that stopped the Consumer by itself: a
        NotFoundError (QUEUE_NOT_FOUND), PermissionDeniedError or
        UnauthenticatedError, at once rather than after retries that cannot
        succeed.
        """
        stopped = self._stopped.wait(timeout)
        if stopped and self._failure is not None:
            raise self._failure
        return stopped

    @property
    def failure(self) -> HoldshelfError | None:
        """The error that stopped the Consumer by itself (see wait()), or None."""
        with self._cv:
            return self._failure

    def stop_on_signals(self, signals: Iterable[int] = (signal.SIGTERM, signal.SIGINT),
                        grace: Seconds | None = None) -> None:
        """Makes these signals start stop(grace); call from the main thread, then wait().

        The first signal puts back the handlers these signals had before, so
        that a second one gets those (Python's defaults: SIGTERM exits, SIGINT
        raises KeyboardInterrupt) and the process is as it was once the stop
        has finished. The stop runs on its own thread, since a signal handler
        runs on the main thread between its bytecodes and must not block it.
        """
        signals = tuple(signals)
        previous = {signum: signal.getsignal(signum) for signum in signals}

        def start_stop(signum: int, frame: object) -> None:
            # Restored now rather than when the stop ends: only the main
            # thread may set handlers, and only this handler surely runs there.
            for other, handler in previous.items():
                # None: a handler not set from Python, which cannot be set back; the default stands in.
                signal.signal(other, signal.SIG_DFL if handler is None else handler)
            self._stop_in_background(grace)

        for signum in signals:
            signal.signal(signum, start_stop)

    def __enter__(self) -> Consumer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _run(self) -> None:
        lease_seconds = self._lease_seconds()
        if lease_seconds is None:
            return
        if lease_seconds < MIN_LEASE_SECONDS:
            # A renewal without visibility_timeout would mean the queue's 0,
            # which releases the message at once: refused, as in Go.
            self._report(ValueError(f"queue {self.queue} has a visibility timeout of 0: "
                                    "give the Consumer a visibility_timeout"), None)
            self._stop_in_background(0)
            return
        if self._subscribe and self._consume_subscribed(lease_seconds):
            return
        keeper = LeaseKeeper(
            self.queue, self._client.heartbeat,
            visibility_timeout=self._visibility_timeout, lease_seconds=lease_seconds,
            renew_fraction=self._renew_fraction, on_error=self._on_call_error,
        )
        with self._cv:
            self._keeper = keeper
        failures = 0
        while True:
            try:
                with self._cv:
                    self._cv.wait_for(lambda: len(self._jobs) < self._concurrency or self._stopping.is_set())
                    if self._stopping.is_set():
                        return
                    free = self._concurrency - len(self._jobs)
                    # Started under the lock that stop() takes, so stop() sees it and can cancel it.
                    self._pending_receive = self._client.start_receive(
                        self.queue, max_messages=min(MAX_RECEIVE_MESSAGES, free),
                        visibility_timeout=self._visibility_timeout, wait_time=self._wait_time)
                messages = self._pending_receive.result()
                failures = 0
            # Not only HoldshelfError: a Client closed under a running
            # Consumer raises ValueError, which must not end this loop.
            except Exception as error:
                if self._stopping.is_set():
                    return
                if self._on_call_error(error):
                    return
                self._stopping.wait(backoff_seconds(failures))
                failures += 1
                continue
            finally:
                with self._cv:
                    self._pending_receive = None
            received_at = time.monotonic()
            if self._stopping.is_set():
                # The answer beat the cancellation: these were never worked on.
                self._give_back([m.receipt_handle for m in messages])
                return
            # A FIFO group's messages come in order, and each waits for the one before it (see _take_turn).
            last_of_group: dict[str, Future[bool]] = {}
            for message in messages:
                group = message.message_group_id

                def hold(on_lost: Callable[[LeaseLostError], None], handle: str = message.receipt_handle) -> Lease:
                    return keeper.hold(handle, received_at, on_lost)

                outcome = self._start(message, hold, last_of_group.get(group) if group else None)
                if group:
                    last_of_group[group] = outcome

    def _consume_subscribed(self, lease_seconds: float) -> bool:
        """Consumes on a Subscribe stream until stop(); False if the broker has no Subscribe (fall back to Receive)."""
        subscription = Subscription(
            self.queue, self._client.subscribe,
            visibility_timeout=self._visibility_timeout, lease_seconds=lease_seconds,
            renew_fraction=self._renew_fraction,
            flow_control=FlowControl(self._concurrency, self._max_outstanding_bytes),
            on_deliveries=self._on_deliveries, on_unimplemented=self._on_unimplemented,
            give_back=self._give_back, on_error=self._on_call_error,
        )
        with self._cv:
            self._subscription = subscription
            self._cv.wait_for(lambda: self._stopping.is_set() or self._unimplemented.is_set())
            if self._stopping.is_set():
                return True  # stop() settles and closes the subscription
            self._subscription = None
        _log.info("holdshelf consumer: the broker has no Subscribe; receiving from %s with Receive", self.queue)
        subscription.close(0)
        return False

    def _on_unimplemented(self) -> None:
        with self._cv:
            self._unimplemented.set()
            self._cv.notify_all()

    def _on_deliveries(self, deliveries: list[tuple[ReceivedMessage, SubscribedLease]]) -> None:
        """Starts a job per delivery of the Subscribe stream, each after the previous one of its FIFO group."""
        if self._stopping.is_set():
            # Pushed before the stream's credit went to 0: never worked on.
            for message, lease in deliveries:
                lease.release(0).add_done_callback(functools.partial(self._report_failed, message=message))
            return
        with self._deliveries_lock:
            for message, lease in deliveries:
                group = message.message_group_id
                if not group:
                    self._start(message, lease.watch, None)
                    continue
                jobs = [job for job in self._group_jobs.get(group, []) if not job[1].done()]
                # It waits for the job just before it in the group, not for the last one delivered: a message
                # delivered again (its handler failed) comes before those still held behind it, which are
                # released unhandled once they see it was not deleted. Without a number: delivery order.
                number = message.sequence_number
                earlier = sorted((job for job in jobs if job[0] < number), key=lambda job: job[0]) if number else jobs
                jobs.append((number, self._start(message, lease.watch, earlier[-1][1] if earlier else None)))
                self._group_jobs[group] = jobs
            for group in [g for g, jobs in self._group_jobs.items() if all(outcome.done() for _, outcome in jobs)]:
                del self._group_jobs[group]

    def _report_failed(self, done: Future[None], message: ReceivedMessage) -> None:
        error = done.exception()
        if error is not None:
            self._report(error, message)

    def _lease_seconds(self) -> float | None:
        """The lease length renewals are paced by: the option, or the queue's (maybe 0); None if stopped first."""
        if self._visibility_timeout is not None:
            return self._visibility_timeout
        failures = 0
        while not self._stopping.is_set():
            try:
                found = self._client.get_queue(self.queue)
            except Exception as error:  # HoldshelfError, or ValueError from a closed Client
                if self._on_call_error(error):
                    return None
                self._stopping.wait(backoff_seconds(failures))
                failures += 1
                continue
            return seconds_of(found.config.visibility_timeout or 0)
        return None

    def _start(self, message: ReceivedMessage, hold: Hold, previous: Future[bool] | None) -> Future[bool]:
        """Queues a message's job, after `previous` in its FIFO group; returns its outcome."""
        job = _Job(message, hold, previous)
        with self._cv:
            self._jobs.add(job)
        self._work_queue.put(job)
        return job.outcome

    def _work_loop(self) -> None:
        while (job := self._work_queue.get()) is not None:
            try:
                self._work(job)
            finally:
                with self._cv:
                    self._jobs.discard(job)
                    self._cv.notify_all()
                job.outcome.set_result(job.deleted)

    def _take_turn(self, job: _Job) -> bool:
        """Waits for the message before this one in its FIFO group to be settled; True if this one may be handled.

        If that one was not deleted, it is still in the queue, and this one,
        handled now, would overtake it: it is released instead, to come
        again behind it. A job waits on a pool thread of its own without
        blocking the one it waits for, which was queued, and so taken, first.
        """
        if job.previous is None:
            return True
        job.turn.wait()
        with self._cv:
            abandoned = job.abandoned
        if abandoned or job.context.cancelled.is_set():
            return False  # lost or given back meanwhile: someone else may have it now
        if job.previous.result():
            return True
        try:
            job.lease.release(0).result()
        except Exception as error:
            self._report(error, job.message)
        return False

    def _work(self, job: _Job) -> None:
        """Runs the handler, then deletes the message or releases it."""
        if not self._take_turn(job):
            return
        failure: BaseException | None = None
        try:
            self._handler(job.message, job.context)
        except BaseException as error:  # even SystemExit: it ends this handler, not the pool thread
            failure = error
        with self._cv:
            abandoned = job.abandoned
        if abandoned and isinstance(failure, LeaseLostError) and failure.reason == reasons.RELEASED:
            # The documented answer to stop's release (raise ctx.lost, or a checkpoint that raced
            # the release and raised its LeaseLostError): a clean stop, no failure.
            _log.info("holdshelf consumer: stopped before its handler finished; message %s released",
                      job.message.message_id)
        elif failure is not None:
            # Whatever became of the lease (lost, refused, given back by stop): the error is the handler's own.
            self._report(failure, job.message)
        if abandoned:
            return  # stop's release settles the message
        try:
            if failure is None and isinstance(job.lease, SubscribedLease):
                job.lease.ack().result()  # sent again on a new stream if this one breaks first
                job.deleted = True
            elif failure is None:
                self._delete_handled(job)
            else:
                job.lease.fail(failure.seconds if isinstance(failure, RetryLater) else None).result()
        except Exception as error:
            self._report(error, job.message)

    def _delete_handled(self, job: _Job) -> None:
        """Deletes a handled message.

        A delete that fails for want of a broker (one restarting, a queue
        moving between brokers, a lost connection, an attempt past its
        deadline) is tried again with backoff while the lease is still held and
        renewed, since giving up would have the finished work done again; it
        stops once the lease is lost or refused, or stop gives the message back.
        """
        try:
            failures = 0
            while True:
                try:
                    # Tried even after the lease was lost: if nobody received the
                    # message since, the finished work is not done again.
                    outcome = self._client.delete(self.queue, job.message.receipt_handle,
                                                  timeout=DELETE_TIMEOUT_SECONDS)
                except HoldshelfError as error:
                    if error.code not in _TRANSIENT_CODES or job.context.cancelled.is_set():
                        raise
                    self._report(error, job.message)
                else:
                    lost = lease_lost_before_delete(outcome)
                    if lost is not None:
                        # Too late: dead-lettered or received again first, so nothing was deleted.
                        raise LeaseLostError(job.message.receipt_handle, lost)
                    job.deleted = True
                    return
                if job.context.cancelled.wait(backoff_seconds(failures)):
                    return  # the lease is gone or given back: its failure was just reported
                failures += 1
        finally:
            with self._cv:
                given_back = job.abandoned
            # Else stop's release is queued on the lease, which must stay for it. (Only the Receive
            # path deletes: a Subscribe delivery is acked on its stream, and its lease dropped there.)
            if not given_back and isinstance(job.lease, HeldLease):
                job.lease.drop()

    def _shutdown(self, grace: float) -> None:
        with self._cv:
            keeper: LeaseKeeper | Subscription | None = self._keeper or self._subscription
        if isinstance(keeper, Subscription):
            keeper.pause()
        with self._cv:
            self._cv.wait_for(lambda: not self._jobs, grace)
            unfinished = list(self._jobs)
            for job in unfinished:
                job.abandoned = True
        if keeper is None:
            return
        releases = []
        for job in unfinished:
            # Cancelled before released: the handler hears of the loss before its message can go to another worker.
            job.cancel(LeaseLostError(job.message.receipt_handle, "RELEASED"))
            releases.append((job, job.lease.release(0)))
        # Settles every release: answered, or failed as unsent once its timeout ran out.
        keeper.close(CLOSE_TIMEOUT_SECONDS)
        for job, released in releases:
            error = released.exception() if released.done() else None
            if error is not None:  # refused, or never sent
                self._report(error, job.message)

    def _give_back(self, receipt_handles: list[str]) -> None:
        """Releases messages received after stop() began; never renewed, so no renewal races the release."""
        if not receipt_handles:
            return
        try:
            results = [result for start in range(0, len(receipt_handles), MAX_RECEIVE_MESSAGES)
                       for result in self._client.change_visibility_batch(
                           self.queue, receipt_handles[start:start + MAX_RECEIVE_MESSAGES], 0)]
        except Exception as error:
            self._report(error, None)
            return
        for result in results:
            if result.error is not None:
                self._report(HoldshelfError.from_entry(result.error.code, result.error.reason, result.error.message), None)

    def _on_call_error(self, error: Exception) -> bool:
        """An error of the Consumer's own calls (GetQueue, Receive, its streams): a fatal one stops it
        (True); any other is reported, to be retried (False)."""
        if _is_fatal(error):
            self._fail(error)
            return True
        self._report(error, None)
        return False

    def _fail(self, error: HoldshelfError) -> None:
        """Stops the Consumer for an error no retry can fix (the first one: later ones are its echoes);
        on_error hears it, and wait() raises it."""
        with self._cv:
            if self._failure is not None or self._stopping.is_set():
                return
            self._failure = error
        self._report(error, None)
        self._stop_in_background(0)

    def _stop_in_background(self, grace: Seconds | None) -> None:
        """stop(grace) on a thread of its own: stop() joins the receive loop, which may be the caller."""
        threading.Thread(target=self.stop, args=(grace,), name="holdshelf-stop", daemon=True).start()

    def _report(self, error: BaseException, message: ReceivedMessage | None) -> None:
        try:
            self._on_error(error, message)
        except Exception:
            pass  # a raising on_error must not stop the receive loop or the stream reader
