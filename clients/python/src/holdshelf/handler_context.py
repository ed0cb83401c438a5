"""What a Consumer's handler gets besides its message."""

from __future__ import annotations

import threading

from holdshelf.errors import LeaseLostError
from holdshelf.lease_keeper import HeldLease
from holdshelf.subscription import SubscribedLease
from holdshelf.values import ReceivedMessage

# LeaseRenewal.checkpoint's bound (proto/holdshelf/v1/queue_service.proto).
MAX_CHECKPOINT_BYTES = 65536


class HandlerContext:
    """A handler's view of its delivery: cancellation, checkpoints.

    `cancelled` is set when the lease is lost (the message may now go to
    another consumer) or when stop() gave the message back after its grace
    period: the handler should then stop by raising (`raise ctx.lost`), since
    its work will be redone. Returning would still try the delete, which
    succeeds if nobody received the message since. `lost` then says why.
    """

    def __init__(self, message: ReceivedMessage) -> None:
        self.message = message
        self.cancelled = threading.Event()
        self._lost: LeaseLostError | None = None
        self._lease: HeldLease | SubscribedLease | None = None  # set by the Consumer right after the lease is held
        self._last_checkpoint = message.checkpoint

    @property
    def lost(self) -> LeaseLostError:
        """Why the lease was lost or given back, once `cancelled` is set: raise it to stop (`raise ctx.lost`).

        Never None, so that `raise ctx.lost` type-checks; read before
        `cancelled` is set, it raises RuntimeError, since there is no loss to
        tell (ask `ctx.cancelled.is_set()` first).
        """
        lost = self._lost
        if lost is None:
            raise RuntimeError("ctx.lost is read before the lease was lost: check ctx.cancelled first")
        return lost

    @property
    def last_checkpoint(self) -> bytes | None:
        """The latest checkpoint: the one this delivery brought, or the last this handler saved."""
        return self._last_checkpoint

    def checkpoint(self, data: bytes) -> None:
        """Stores progress (at most 64 KiB) durably with the message, at once.

        Returns once the broker has stored it, so a later delivery carries it.
        Raises LeaseLostError if the lease is lost first, and ValueError for
        more than 64 KiB, which the broker would refuse.
        """
        if len(data) > MAX_CHECKPOINT_BYTES:
            # Refused here: the broker's refusal would read as a lost lease and cancel the handler.
            raise ValueError(f"a checkpoint is at most {MAX_CHECKPOINT_BYTES} bytes, not {len(data)}")
        assert self._lease is not None
        self._lease.checkpoint(data).result()
        self._last_checkpoint = bytes(data)

    def _cancel(self, why: LeaseLostError) -> None:
        if self._lost is None:
            self._lost = why
        self.cancelled.set()
