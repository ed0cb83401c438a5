"""The stable reasons a failed call carries in HoldshelfError.reason (and a lost lease in LeaseLostError.reason).

The same names and values as the Go client's Reason constants
(clients/go/reasons.go) and the broker's list (src/protocol/error-reasons.ts),
each named after its value: compare `error.reason == reasons.QUEUE_NOT_FOUND`.
Reasons never change between versions; messages may. A reason this version
does not know still reaches HoldshelfError.reason as the broker sent it.
"""

from __future__ import annotations

from typing import Final

QUEUE_NOT_FOUND: Final = "QUEUE_NOT_FOUND"
QUEUE_ALREADY_EXISTS: Final = "QUEUE_ALREADY_EXISTS"
INVALID_ARGUMENT: Final = "INVALID_ARGUMENT"
MESSAGE_TOO_LARGE: Final = "MESSAGE_TOO_LARGE"
RECEIPT_HANDLE_INVALID: Final = "RECEIPT_HANDLE_INVALID"
LEASE_SUPERSEDED: Final = "LEASE_SUPERSEDED"
MESSAGE_NOT_FOUND: Final = "MESSAGE_NOT_FOUND"
LEASE_LIMIT_EXCEEDED: Final = "LEASE_LIMIT_EXCEEDED"
TOO_MANY_IN_FLIGHT: Final = "TOO_MANY_IN_FLIGHT"
SHUTTING_DOWN: Final = "SHUTTING_DOWN"
# Not sent by the broker as an error: a lease that ran out (a Heartbeat or
# Subscribe notice), or one stop() gave back, in LeaseLostError.reason.
LEASE_EXPIRED: Final = "LEASE_EXPIRED"
RELEASED: Final = "RELEASED"
# Go names it ReasonDeadLetterQueueMissing; the value is the same.
DEAD_LETTER_QUEUE_NOT_FOUND: Final = "DEAD_LETTER_QUEUE_NOT_FOUND"
# A send to a FIFO queue without a message_group_id (INVALID_ARGUMENT).
MESSAGE_GROUP_ID_REQUIRED: Final = "MESSAGE_GROUP_ID_REQUIRED"
# A send to a FIFO queue without content_based_deduplication names no deduplication_id (INVALID_ARGUMENT).
DEDUPLICATION_ID_REQUIRED: Final = "DEDUPLICATION_ID_REQUIRED"
# A send to a standard queue names a message_group_id or a deduplication_id (INVALID_ARGUMENT).
NOT_A_FIFO_QUEUE: Final = "NOT_A_FIFO_QUEUE"
# A Subscribe stream on a queue that already has the broker's
# --max-subscribers-per-queue (RESOURCE_EXHAUSTED); the Consumer retries it with backoff.
TOO_MANY_SUBSCRIBERS: Final = "TOO_MANY_SUBSCRIBERS"
# Capacity limits: the request was fine, the broker is full; it may succeed later.
TOO_MANY_STREAMS: Final = "TOO_MANY_STREAMS"
TOO_MANY_WAITING_RECEIVES: Final = "TOO_MANY_WAITING_RECEIVES"
TOO_MANY_QUEUES: Final = "TOO_MANY_QUEUES"
BROKER_FULL: Final = "BROKER_FULL"
# DeleteQueue of another queue's dead-letter queue (FAILED_PRECONDITION).
QUEUE_IN_USE: Final = "QUEUE_IN_USE"
MOVE_TASK_RUNNING: Final = "MOVE_TASK_RUNNING"
MOVE_TASK_NOT_FOUND: Final = "MOVE_TASK_NOT_FOUND"
BACKUP_NOT_SUPPORTED: Final = "BACKUP_NOT_SUPPORTED"
# The broker cannot write its data directory; it recovers by itself (UNAVAILABLE).
STORAGE_UNAVAILABLE: Final = "STORAGE_UNAVAILABLE"
# Cluster mode: the queue's shard has no serving owner this moment; a retry finds the new one (UNAVAILABLE).
QUEUE_MOVING: Final = "QUEUE_MOVING"
TOKEN_MISSING: Final = "TOKEN_MISSING"
TOKEN_INVALID: Final = "TOKEN_INVALID"
PERMISSION_DENIED: Final = "PERMISSION_DENIED"
INTERNAL: Final = "INTERNAL"
