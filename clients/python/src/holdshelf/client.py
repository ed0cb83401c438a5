"""A client of a holdshelf broker: one method per RPC."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

import grpc

from holdshelf._wire import QueueServiceStub, service_pb2
from holdshelf.convert import (
    batch_entry_to_wire, body_bytes, config_to_wire, delete_outcome_from_wire, entry_result_from_wire,
    message_from_wire, queue_from_wire, send_results, typed_attributes_to_wire, update_mask_paths,
)
from holdshelf.credentials import bearer_metadata, channel_credentials, refuse_plaintext_token
from holdshelf.durations import Seconds, from_timestamp, seconds_of, to_duration
from holdshelf.errors import HoldshelfError
from holdshelf.heartbeat_stream import HeartbeatStream
from holdshelf.send_batcher import MAX_BATCH_BYTES, MAX_BATCH_MESSAGES, SendBatcher
from holdshelf.subscribe_stream import SubscribeStream
from holdshelf.values import (
    DeleteOutcome, EntryResult, Queue, QueueConfig, QueuePage, ReceivedMessage, SendBatchEntry, SendResult, TypedAttribute,
)
# gRPC's reconnect backoff starts at 1 s and grows to 120 s, so a Consumer
# whose broker restarted could wait minutes to reach it again while its
# leases run out; these cap it at 5 s.
_CHANNEL_DEFAULTS = (
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.min_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 5000),
)
# send's batching defaults: Pub/Sub's publisher batches by 10 ms and 1 MB;
# 1 ms costs a lone sender little and lets concurrent senders share a call: a
# thread that waits for each send sends at most once per delay and round trip
# (docs/performance.md, scenario 16).
DEFAULT_BATCH_DELAY = 0.001
DEFAULT_BATCH_MAX_BYTES = 1024 * 1024


class Client:
    """A connection to one broker (or a load balancer in front of a cluster).

    Every method blocks until its answer and raises HoldshelfError on
    failure. `timeout` (seconds) bounds a call; None waits as long as it
    takes. TLS is on by default, except to a loopback address
    (127.0.0.0/8, ::1, localhost, a Unix socket) without any of the files:
    `tls=True` turns it on there too, and `tls=False`, the explicit insecure
    option, sends plaintext to any address (a broker behind a
    TLS-terminating proxy beside the client, say). `ca_file` is the CA to
    trust the broker by, else the system's roots; `cert_file` and
    `key_file`, a client certificate for mutual TLS.
    `token` is sent as "authorization: Bearer <token>" on every call, but
    never in plaintext beyond loopback: with tls=False to such an address
    the constructor raises ValueError unless `allow_plaintext_token=True`
    says something else protects the path.
    `options` are grpcio channel options, ahead of the package's own
    reconnect backoff (see _CHANNEL_DEFAULTS), which they may override.

    send and send_with_result are batched: the sends of all threads to one
    queue are gathered into SendBatch calls of at most `batch_max_messages`
    entries (1 to 100) and `batch_max_bytes` bytes (up to 4 MiB), each sent
    at the latest `batch_delay` seconds after its first send (see
    SendBatcher). Each send still returns its own result or raises its own
    error. `batch_delay=0` turns batching off: every send is a unary Send.
    close() sends what is gathered and waits for the answers first.
    """

    def __init__(self, address: str, *, tls: bool | None = None, ca_file: str | None = None,
                 cert_file: str | None = None, key_file: str | None = None, token: str | None = None,
                 allow_plaintext_token: bool = False, options: Sequence[tuple[str, Any]] = (), batch_delay: Seconds = DEFAULT_BATCH_DELAY,
                 batch_max_messages: int = MAX_BATCH_MESSAGES, batch_max_bytes: int = DEFAULT_BATCH_MAX_BYTES) -> None:
        delay = seconds_of(batch_delay)
        if not isinstance(batch_max_messages, int) or not 1 <= batch_max_messages <= MAX_BATCH_MESSAGES:
            raise ValueError(f"batch_max_messages must be 1 to {MAX_BATCH_MESSAGES}, not {batch_max_messages!r}")
        if not isinstance(batch_max_bytes, int) or not 1 <= batch_max_bytes <= MAX_BATCH_BYTES:
            raise ValueError(f"batch_max_bytes must be 1 to {MAX_BATCH_BYTES}, not {batch_max_bytes!r}")
        self._metadata = bearer_metadata(token)
        credentials = channel_credentials(address, tls, ca_file, cert_file, key_file)
        refuse_plaintext_token(address, credentials, token, allow_plaintext_token)
        given = {key for key, _ in options}
        options = [*((key, value) for key, value in _CHANNEL_DEFAULTS if key not in given), *options]
        self._channel = (grpc.insecure_channel(address, options=options) if credentials is None
                         else grpc.secure_channel(address, credentials, options=options))
        self._stub = QueueServiceStub(self._channel)
        self._batcher = None if delay == 0 else SendBatcher(
            self._start_send_batch, delay=delay, max_messages=batch_max_messages, max_bytes=batch_max_bytes)

    def close(self) -> None:
        """Sends the batches gathered and waits for their answers, then closes the connection;
        calls still running fail with CANCELLED."""
        if self._batcher is not None:
            self._batcher.close()
        self._channel.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _call(self, method: Callable[..., Any], request: Any, timeout: float | None) -> Any:
        try:
            return method(request, timeout=timeout, metadata=self._metadata)
        except grpc.RpcError as error:
            raise HoldshelfError.from_rpc_error(error) from None

    def create_queue(self, name: str, config: QueueConfig | None = None, *, timeout: float | None = None) -> Queue:
        """Creates a queue; creating an existing one with the same configuration returns it."""
        request = service_pb2.CreateQueueRequest(name=name, config=config_to_wire(config))
        return queue_from_wire(self._call(self._stub.CreateQueue, request, timeout).queue)

    def get_queue(self, name: str, *, timeout: float | None = None) -> Queue:
        """A queue with its configuration and exact counts."""
        return queue_from_wire(self._call(self._stub.GetQueue, service_pb2.GetQueueRequest(name=name), timeout).queue)

    def list_queues(self, *, prefix: str = "", page_size: int = 0, page_token: str = "",
                    timeout: float | None = None) -> QueuePage:
        """One page of queues in name order (page_size 0 means 100)."""
        request = service_pb2.ListQueuesRequest(prefix=prefix, page_size=page_size, page_token=page_token)
        page = self._call(self._stub.ListQueues, request, timeout)
        return QueuePage(tuple(queue_from_wire(q) for q in page.queues), page.next_page_token)

    def update_queue(self, name: str, config: QueueConfig | None = None, *, fields: Sequence[str] | None = None,
                     tag_keys: Sequence[str] | None = None, timeout: float | None = None) -> Queue:
        """Changes a queue's configuration.

        Without fields or tag_keys, config replaces the whole configuration:
        unset fields take their defaults, not their current values (tags,
        access_policy and sqs_encryption included: a config read with
        get_queue and changed with dataclasses.replace keeps them). With
        fields (names of QueueConfig's fields, e.g. ["visibility_timeout"]),
        only those change, as an update_mask: every other field keeps the
        value it has when the broker takes the change, even one another caller
        changes meanwhile, and a named field left None takes its default
        (["redrive_policy"] with no policy removes it, ["tags"] with none
        removes every tag). With tag_keys, only those tags change (the path
        tags.<key>, AIP-161): each is set to its value in config.tags, or
        removed when config.tags lacks it; fields beside them may not name
        "tags". An empty list, an unknown name or "tags" beside tag_keys is a
        ValueError before any call. A broker before 0.2.0 ignores both and
        replaces everything.
        """
        request = service_pb2.UpdateQueueRequest(name=name, config=config_to_wire(config))
        if fields is not None or tag_keys is not None:
            request.update_mask.paths.extend(update_mask_paths(fields, tag_keys))
        return queue_from_wire(self._call(self._stub.UpdateQueue, request, timeout).queue)

    def delete_queue(self, name: str, *, timeout: float | None = None) -> None:
        """Deletes a queue and all its messages."""
        self._call(self._stub.DeleteQueue, service_pb2.DeleteQueueRequest(name=name), timeout)

    def purge_queue(self, name: str, *, timeout: float | None = None) -> int:
        """Removes every message of a queue; returns how many."""
        return int(self._call(self._stub.PurgeQueue, service_pb2.PurgeQueueRequest(name=name), timeout).purged_count)

    def send(self, queue: str, body: bytes | str, *, attributes: dict[str, str] | None = None,
             delay: Seconds | None = None, message_group_id: str | None = None,
             deduplication_id: str | None = None, typed_attributes: Mapping[str, TypedAttribute] | None = None,
             trace_header: str | None = None, timeout: float | None = None) -> str:
        """Stores one message (text as UTF-8); returns its id. delay None means the queue's.

        On a FIFO queue, message_group_id is required (a group's messages are
        delivered in send order), and so is deduplication_id unless the queue
        has content_based_deduplication; a send that repeats a deduplication
        id within five minutes stores nothing and returns the first send's
        id. A FIFO queue refuses a delay; a standard queue refuses both ids
        (NOT_A_FIFO_QUEUE). send_with_result also returns the sequence number.
        typed_attributes are Number, Binary and custom String attributes
        (TypedAttribute), as the SQS endpoint's MessageAttributes; a name is
        in attributes or here, not both. trace_header links the consumer's
        span to the producer's: SQS's AWSTraceHeader, as AWS X-Ray and
        OpenTelemetry's AWS X-Ray propagator write it (at most 512 characters
        of printable ASCII; it does not count toward the message size).
        """
        return self.send_with_result(queue, body, attributes=attributes, delay=delay, message_group_id=message_group_id,
                                     deduplication_id=deduplication_id, typed_attributes=typed_attributes,
                                     trace_header=trace_header, timeout=timeout).message_id

    def send_with_result(self, queue: str, body: bytes | str, *, attributes: dict[str, str] | None = None,
                         delay: Seconds | None = None, message_group_id: str | None = None,
                         deduplication_id: str | None = None,
                         typed_attributes: Mapping[str, TypedAttribute] | None = None,
                         trace_header: str | None = None, timeout: float | None = None) -> SendResult:
        """As send, returning the id and, on a FIFO queue, the sequence number (a duplicate's: the first send's)."""
        if self._batcher is not None:
            entry = batch_entry_to_wire(SendBatchEntry(body, attributes or {}, delay, message_group_id,
                                                       deduplication_id, dict(typed_attributes or {}), trace_header))
            size = entry.ByteSize()
            # One too large for a batch goes alone, as does one sent after close() (which then fails).
            batched = self._batcher.send(queue, entry, size, timeout) if self._batcher.fits(size) else None
            if batched is not None:
                return batched.result()
        request = service_pb2.SendRequest(queue=queue, body=body_bytes(body), attributes=attributes or {},
                                          typed_attributes=typed_attributes_to_wire(typed_attributes),
                                          message_group_id=message_group_id or "",
                                          deduplication_id=deduplication_id or "", trace_header=trace_header or "")
        if delay is not None:
            request.delay.CopyFrom(to_duration(delay))
        response = self._call(self._stub.Send, request, timeout)
        return SendResult(response.message_id, response.sequence_number)

    def send_batch(self, queue: str, entries: Sequence[SendBatchEntry | bytes | str], *,
                   timeout: float | None = None) -> list[str]:
        """Stores 1 to 100 messages atomically; returns their ids in entry order."""
        return [result.message_id for result in self.send_batch_with_results(queue, entries, timeout=timeout)]

    def send_batch_with_results(self, queue: str, entries: Sequence[SendBatchEntry | bytes | str], *,
                                timeout: float | None = None) -> list[SendResult]:
        """As send_batch, returning ids and, on a FIFO queue, sequence numbers, in entry order.

        A FIFO entry that repeats an earlier deduplication id (of this batch,
        or of a send within five minutes) is not stored and gets the first one's.
        """
        wire = [batch_entry_to_wire(e if isinstance(e, SendBatchEntry) else SendBatchEntry(e)) for e in entries]
        request = service_pb2.SendBatchRequest(queue=queue, entries=wire)
        response = self._call(self._stub.SendBatch, request, timeout)
        return send_results(response.message_ids, response.sequence_numbers)

    def _start_send_batch(self, request: service_pb2.SendBatchRequest, timeout: float | None) -> grpc.Future:
        return self._stub.SendBatch.future(request, timeout=timeout, metadata=self._metadata)

    def receive(self, queue: str, *, max_messages: int = 0, visibility_timeout: Seconds | None = None,
                wait_time: Seconds | None = None, timeout: float | None = None) -> list[ReceivedMessage]:
        """Leases up to max_messages messages, waiting up to wait_time for one; empty if none came."""
        return self.start_receive(queue, max_messages=max_messages, visibility_timeout=visibility_timeout,
                                  wait_time=wait_time, timeout=timeout).result()

    def start_receive(self, queue: str, *, max_messages: int = 0, visibility_timeout: Seconds | None = None,
                      wait_time: Seconds | None = None, timeout: float | None = None) -> PendingReceive:
        """A receive that runs in the background and can be cancelled: a cancelled one takes no message."""
        request = service_pb2.ReceiveRequest(queue=queue, max_messages=max_messages)
        if visibility_timeout is not None:
            request.visibility_timeout.CopyFrom(to_duration(visibility_timeout))
        if wait_time is not None:
            request.wait_time.CopyFrom(to_duration(wait_time))
        return PendingReceive(self._stub.Receive.future(request, timeout=timeout, metadata=self._metadata))

    def delete(self, queue: str, receipt_handle: str, *, timeout: float | None = None) -> DeleteOutcome:
        """Deletes the message a receipt handle names: the acknowledgement. Returns what it did:
        DEAD_LETTERED or RECEIVED_AGAIN mean the lease was lost first and nothing was deleted."""
        request = service_pb2.DeleteRequest(queue=queue, receipt_handle=receipt_handle)
        return delete_outcome_from_wire(self._call(self._stub.Delete, request, timeout).outcome)

    def delete_batch(self, queue: str, receipt_handles: Sequence[str], *,
                     timeout: float | None = None) -> list[EntryResult]:
        """Deletes several messages; one result per handle, in order, with its delete_outcome on success."""
        request = service_pb2.DeleteBatchRequest(queue=queue, receipt_handles=receipt_handles)
        return [entry_result_from_wire(r) for r in self._call(self._stub.DeleteBatch, request, timeout).results]

    def change_visibility(self, queue: str, receipt_handle: str, visibility_timeout: Seconds, *,
                          timeout: float | None = None) -> datetime:
        """Sets a lease's deadline to now + visibility_timeout (0 releases); returns the new deadline."""
        request = service_pb2.ChangeVisibilityRequest(
            queue=queue, receipt_handle=receipt_handle, visibility_timeout=to_duration(visibility_timeout))
        return from_timestamp(self._call(self._stub.ChangeVisibility, request, timeout).lease_deadline)

    def change_visibility_batch(self, queue: str, receipt_handles: Sequence[str], visibility_timeout: Seconds, *,
                                timeout: float | None = None) -> list[EntryResult]:
        """Sets several leases to the same visibility timeout; one result per handle, in order."""
        request = service_pb2.ChangeVisibilityBatchRequest(
            queue=queue, receipt_handles=receipt_handles, visibility_timeout=to_duration(visibility_timeout))
        return [entry_result_from_wire(r) for r in self._call(self._stub.ChangeVisibilityBatch, request, timeout).results]

    def heartbeat(self) -> HeartbeatStream:
        """Opens a raw Heartbeat stream (the Consumer on its Receive path manages one for you)."""
        return HeartbeatStream(self._stub.Heartbeat, self._metadata)

    def subscribe(self) -> SubscribeStream:
        """Opens a raw Subscribe stream; send its first request with open() (the Consumer manages one for you)."""
        return SubscribeStream(self._stub.Subscribe, self._metadata)

    def redrive_messages(self, dead_letter_queue: str, *, destination_queue: str = "", max_messages: int = 0,
                         max_per_second: int = 0, timeout: float | None = None) -> int:
        """Moves visible messages out of a dead-letter queue; returns how many moved."""
        request = service_pb2.RedriveMessagesRequest(
            dead_letter_queue=dead_letter_queue, destination_queue=destination_queue,
            max_messages=max_messages, max_per_second=max_per_second)
        return int(self._call(self._stub.RedriveMessages, request, timeout).moved_count)

class PendingReceive:
    """A receive under way: result() waits for its messages, cancel() ends it early."""

    def __init__(self, future: grpc.Future) -> None:
        self._future = future

    def cancel(self) -> None:
        """Ends the long poll; messages leased for it become visible again and the delivery does not count."""
        self._future.cancel()

    def result(self) -> list[ReceivedMessage]:
        """The messages; raises HoldshelfError (code CANCELLED once cancelled)."""
        try:
            response = self._future.result()
        except grpc.FutureCancelledError:
            raise HoldshelfError.of(grpc.StatusCode.CANCELLED, "", "the receive was cancelled") from None
        except grpc.RpcError as error:
            raise HoldshelfError.from_rpc_error(error) from None
        return [message_from_wire(m) for m in response.messages]
