"""Waits between retries of a failing call or a broken stream."""

import random

# Capped so a long outage is retried every few seconds, not every few minutes.
_BASE_SECONDS = 0.1
_MAX_SECONDS = 5.0


def backoff_seconds(attempt: int) -> float:
    """The wait before retry number `attempt` (0 first): exponential with equal jitter.

    Half fixed, half random, so that clients that failed together do not
    retry together, yet none retries in a hot loop.
    """
    ceiling = min(_MAX_SECONDS, _BASE_SECONDS * 2.0 ** min(attempt, 16))
    return ceiling / 2 + random.random() * ceiling / 2
