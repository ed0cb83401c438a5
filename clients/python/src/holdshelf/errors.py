"""The one exception a failed call raises, read from gRPC's rich status."""

from __future__ import annotations

from dataclasses import dataclass

import grpc

from holdshelf._wire import error_details_pb2, status_pb2

# The trailer holding a serialized google.rpc.Status with the details.
STATUS_DETAILS_KEY = "grpc-status-details-bin"


@dataclass(frozen=True)
class FieldViolation:
    """One invalid request field, named by its proto path (e.g. "entries[2].delay")."""

    field: str
    description: str


class HoldshelfError(Exception):
    """A failed call: the gRPC code, the stable reason, the message and any violated fields.

    Branch on `reason` (e.g. "QUEUE_NOT_FOUND"; a send to a FIFO queue
    without a group, "MESSAGE_GROUP_ID_REQUIRED", or without a deduplication
    id, "DEDUPLICATION_ID_REQUIRED"; FIFO ids sent to a standard queue,
    "NOT_A_FIFO_QUEUE"): reasons never change between versions, messages may.
    `reason` is "" when the status came from the gRPC layer rather than from
    holdshelf (UNAVAILABLE for an unreachable broker, DEADLINE_EXCEEDED,
    CANCELLED, ...).
    """

    def __init__(self, code: grpc.StatusCode, reason: str, message: str,
                 field_violations: tuple[FieldViolation, ...] = ()) -> None:
        super().__init__(f"{code.name}{f' {reason}' if reason else ''}: {message}")
        self.code = code
        self.reason = reason
        self.message = message
        self.field_violations = field_violations

    @classmethod
    def from_rpc_error(cls, error: grpc.RpcError) -> HoldshelfError:
        """Reads a grpcio error (a grpc.Call) with the google.rpc.Status it may carry."""
        code = error.code() if hasattr(error, "code") else grpc.StatusCode.UNKNOWN
        message = (error.details() if hasattr(error, "details") else None) or ""
        reason, violations = "", []
        trailers = error.trailing_metadata() if hasattr(error, "trailing_metadata") else None
        for key, value in trailers or ():
            if key != STATUS_DETAILS_KEY:
                continue
            for detail in status_pb2.Status.FromString(value).details:
                info, bad_request = error_details_pb2.ErrorInfo(), error_details_pb2.BadRequest()
                if detail.Unpack(info):
                    reason = info.reason
                elif detail.Unpack(bad_request):
                    violations += [FieldViolation(v.field, v.description) for v in bad_request.field_violations]
        return cls(code or grpc.StatusCode.UNKNOWN, reason, message, tuple(violations))

    @classmethod
    def from_entry(cls, code: int, reason: str, message: str) -> HoldshelfError:
        """The error of one failed entry of a batch, whose code comes as a number."""
        status = next((c for c in grpc.StatusCode if c.value[0] == code), grpc.StatusCode.UNKNOWN)
        return cls(status, reason, message)


class LeaseLostError(Exception):
    """A Consumer's lease ended before its handler settled the message.

    `reason` is the broker's (LEASE_EXPIRED, LEASE_SUPERSEDED,
    MESSAGE_NOT_FOUND, LEASE_LIMIT_EXCEEDED, QUEUE_NOT_FOUND, ...) or RELEASED
    when stop() gave the message back. Raised by HandlerContext.checkpoint;
    passed to on_error when the broker did not end a failed message's lease
    as asked (reason INVALID_ARGUMENT for a RetryLater over 12 h, say).
    """

    def __init__(self, receipt_handle: str, reason: str) -> None:
        super().__init__(f"the lease of this message was lost: {reason}")
        self.receipt_handle = receipt_handle
        self.reason = reason
