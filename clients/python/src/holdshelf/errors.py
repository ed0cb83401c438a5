"""The exceptions a failed call raises, read from gRPC's rich status: HoldshelfError and one subclass per family."""

from __future__ import annotations

from dataclasses import dataclass

import grpc

from holdshelf import reasons
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

    Branch on `reason` (a constant of holdshelf.reasons, e.g.
    reasons.QUEUE_NOT_FOUND), or catch the subclass of its family
    (NotFoundError, InvalidArgumentError, UnavailableError, ...): reasons
    never change between versions, messages may. `reason` is "" when the
    status came from the gRPC layer rather than from holdshelf (UNAVAILABLE
    for an unreachable broker, DEADLINE_EXCEEDED, CANCELLED, ...).
    Every error a call raises is an instance of the subclass that
    error_class names for its reason and code.
    """

    def __init__(self, code: grpc.StatusCode, reason: str, message: str,
                 field_violations: tuple[FieldViolation, ...] = ()) -> None:
        super().__init__(f"{code.name}{f' {reason}' if reason else ''}: {message}")
        self.code = code
        self.reason = reason
        self.message = message
        self.field_violations = field_violations

    @staticmethod
    def of(code: grpc.StatusCode, reason: str, message: str,
           field_violations: tuple[FieldViolation, ...] = ()) -> HoldshelfError:
        """The error of this reason and code, as an instance of its family's class (see error_class)."""
        return error_class(code, reason)(code, reason, message, field_violations)

    @staticmethod
    def from_rpc_error(error: grpc.RpcError) -> HoldshelfError:
        """Reads a grpcio error (a grpc.Call) with the google.rpc.Status it may carry."""
        code: grpc.StatusCode | None = error.code() if isinstance(error, grpc.Call) else None
        message: str = (error.details() if isinstance(error, grpc.Call) else None) or ""
        reason, violations = "", []
        trailers = error.trailing_metadata() if isinstance(error, grpc.Call) else None
        for key, value in trailers or ():
            if key != STATUS_DETAILS_KEY:
                continue
            for detail in status_pb2.Status.FromString(value).details:
                info, bad_request = error_details_pb2.ErrorInfo(), error_details_pb2.BadRequest()
                if detail.Unpack(info):
                    reason = info.reason
                elif detail.Unpack(bad_request):
                    violations += [FieldViolation(v.field, v.description) for v in bad_request.field_violations]
        return HoldshelfError.of(code or grpc.StatusCode.UNKNOWN, reason, message, tuple(violations))

    @staticmethod
    def from_entry(code: int, reason: str, message: str) -> HoldshelfError:
        """The error of one failed entry of a batch, whose code comes as a number."""
        status = next((c for c in grpc.StatusCode if c.value[0] == code), grpc.StatusCode.UNKNOWN)
        return HoldshelfError.of(status, reason, message)


class NotFoundError(HoldshelfError):
    """Something named does not exist: QUEUE_NOT_FOUND, MESSAGE_NOT_FOUND, DEAD_LETTER_QUEUE_NOT_FOUND, ..."""


class AlreadyExistsError(HoldshelfError):
    """QUEUE_ALREADY_EXISTS: a queue of that name exists with another configuration."""


class InvalidArgumentError(HoldshelfError):
    """The request is malformed (see field_violations): INVALID_ARGUMENT, MESSAGE_TOO_LARGE,
    RECEIPT_HANDLE_INVALID, and the FIFO reasons MESSAGE_GROUP_ID_REQUIRED, DEDUPLICATION_ID_REQUIRED,
    NOT_A_FIFO_QUEUE. Sent again unchanged, it fails again."""


class FailedPreconditionError(HoldshelfError):
    """The queue's state forbids the call: QUEUE_IN_USE, MOVE_TASK_RUNNING, BACKUP_NOT_SUPPORTED."""


class LeaseError(HoldshelfError):
    """A lease is no longer this caller's to settle: LEASE_SUPERSEDED (someone else received the
    message), LEASE_LIMIT_EXCEEDED (past the queue's max_lease_duration), and LeaseLostError."""


class ResourceExhaustedError(HoldshelfError):
    """A broker limit was reached (TOO_MANY_IN_FLIGHT, TOO_MANY_SUBSCRIBERS, BROKER_FULL, ...):
    the same request may succeed later."""


class UnavailableError(HoldshelfError):
    """No broker could serve the call this moment: unreachable (reason ""), SHUTTING_DOWN,
    QUEUE_MOVING (cluster mode), STORAGE_UNAVAILABLE. Transient: retry with backoff."""


class UnauthenticatedError(HoldshelfError):
    """The broker needs a token: TOKEN_MISSING, or TOKEN_INVALID for one it does not know."""


class PermissionDeniedError(HoldshelfError):
    """The token does not allow this call on this queue (PERMISSION_DENIED)."""


# Reasons whose family is not their code's: the others follow their code (_CODE_CLASSES).
_REASON_CLASSES: dict[str, type[HoldshelfError]] = {
    reasons.DEAD_LETTER_QUEUE_NOT_FOUND: NotFoundError,  # sent as FAILED_PRECONDITION
    reasons.LEASE_SUPERSEDED: LeaseError,
    reasons.LEASE_LIMIT_EXCEEDED: LeaseError,
    reasons.LEASE_EXPIRED: LeaseError,
    reasons.RELEASED: LeaseError,
}
_CODE_CLASSES: dict[grpc.StatusCode, type[HoldshelfError]] = {
    grpc.StatusCode.NOT_FOUND: NotFoundError,
    grpc.StatusCode.ALREADY_EXISTS: AlreadyExistsError,
    grpc.StatusCode.INVALID_ARGUMENT: InvalidArgumentError,
    grpc.StatusCode.FAILED_PRECONDITION: FailedPreconditionError,
    grpc.StatusCode.RESOURCE_EXHAUSTED: ResourceExhaustedError,
    grpc.StatusCode.UNAVAILABLE: UnavailableError,
    grpc.StatusCode.UNAUTHENTICATED: UnauthenticatedError,
    grpc.StatusCode.PERMISSION_DENIED: PermissionDeniedError,
}


def error_class(code: grpc.StatusCode, reason: str) -> type[HoldshelfError]:
    """The class an error of this reason and code is raised as: its reason's family, else its code's,
    else HoldshelfError itself (INTERNAL, CANCELLED, DEADLINE_EXCEEDED, UNIMPLEMENTED, ...)."""
    by_reason = _REASON_CLASSES.get(reason)
    return by_reason if by_reason is not None else _CODE_CLASSES.get(code, HoldshelfError)


# The code a lease loss reports, by reason: the code its RPC refusal travels with.
_LOSS_CODES = {
    reasons.INVALID_ARGUMENT: grpc.StatusCode.INVALID_ARGUMENT,
    reasons.QUEUE_NOT_FOUND: grpc.StatusCode.NOT_FOUND,
    reasons.MESSAGE_NOT_FOUND: grpc.StatusCode.NOT_FOUND,
    reasons.RELEASED: grpc.StatusCode.CANCELLED,
}


class LeaseLostError(LeaseError):
    """A Consumer's lease ended before its handler settled the message.

    `reason` is the broker's (LEASE_EXPIRED, LEASE_SUPERSEDED,
    MESSAGE_NOT_FOUND, LEASE_LIMIT_EXCEEDED, QUEUE_NOT_FOUND, ...), RELEASED
    when stop() gave the message back, or DEAD_LETTERED or RECEIVED_AGAIN
    when a handled message's delete came too late; `code` is the one its refusal travels
    with (FAILED_PRECONDITION for most, CANCELLED for RELEASED). Raised by
    HandlerContext.checkpoint, and it is HandlerContext.lost; passed to
    on_error when the broker did not end a failed message's lease as asked
    (reason INVALID_ARGUMENT for a RetryLater over 12 h, say). A LeaseError,
    so a HoldshelfError: `except HoldshelfError` catches it too.
    """

    def __init__(self, receipt_handle: str, reason: str) -> None:
        message = f"the lease of this message was lost: {reason}"
        super().__init__(_LOSS_CODES.get(reason, grpc.StatusCode.FAILED_PRECONDITION), reason, message)
        self.args = (message,)  # str() as before it was a HoldshelfError: no code in front
        self.receipt_handle = receipt_handle
