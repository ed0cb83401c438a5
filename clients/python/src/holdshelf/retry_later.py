"""The exception a Consumer handler raises to be retried after a chosen wait."""

from __future__ import annotations

from holdshelf.durations import Seconds, seconds_of


class RetryLater(Exception):
    """Raised by a handler: deliver the message again no sooner than `seconds` from now.

    It overrides the queue's retry_policy backoff, which any other exception
    gets. Subclass it to give an application's own errors a retry delay.
    `seconds` must be 0 or more and finite (at most 10000 years, a Duration's
    bound), else ValueError here; a wait the broker does not allow (over
    12 h) is its to refuse, and the Consumer reports that refusal to on_error.
    """

    def __init__(self, seconds: Seconds, message: str | None = None) -> None:
        # Checked here, not when the renewal is built: the lease keeper must never hold a delay it cannot send.
        self.seconds = seconds_of(seconds)
        super().__init__(message or f"retry in {self.seconds:g} s")
