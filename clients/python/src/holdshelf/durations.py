"""Seconds and datetimes to and from protobuf's Duration and Timestamp."""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone

from google.protobuf.duration_pb2 import Duration
from google.protobuf.timestamp_pb2 import Timestamp

Seconds = float | int | timedelta
"""A duration as the library takes it: seconds (fractions allowed) or a timedelta."""

# The largest Duration protobuf allows (10000 years); anything longer cannot be sent.
MAX_DURATION_SECONDS = 315_576_000_000


def seconds_of(value: Seconds) -> float:
    """A duration in seconds; values no Duration can carry (negative, NaN, infinite,
    over 10000 years) are refused here with ValueError, before any request is built."""
    seconds = value.total_seconds() if isinstance(value, timedelta) else float(value)
    if not (math.isfinite(seconds) and 0 <= seconds <= MAX_DURATION_SECONDS):
        raise ValueError(f"a duration must be 0 to {MAX_DURATION_SECONDS} seconds, not {value!r}")
    return seconds


def to_duration(value: Seconds) -> Duration:
    """A Duration of millisecond precision, the broker's (finer parts would be dropped)."""
    duration = Duration()
    duration.FromMilliseconds(round(seconds_of(value) * 1000))
    return duration


def from_duration(duration: Duration) -> float:
    """A Duration in seconds."""
    return float(duration.seconds + duration.nanos / 1e9)


def from_timestamp(timestamp: Timestamp) -> datetime:
    """A Timestamp as an aware datetime in UTC."""
    when: datetime = timestamp.ToDatetime(tzinfo=timezone.utc)
    return when
