"""Seconds and datetimes to and from protobuf's Duration and Timestamp."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from google.protobuf.duration_pb2 import Duration
from google.protobuf.timestamp_pb2 import Timestamp

Seconds = float | int | timedelta
"""A duration as the library takes it: seconds (fractions allowed) or a timedelta."""


def seconds_of(value: Seconds) -> float:
    """A duration in seconds; negative values are refused here, not by the broker."""
    seconds = value.total_seconds() if isinstance(value, timedelta) else float(value)
    if seconds < 0 or seconds != seconds:  # the second test catches NaN
        raise ValueError(f"a duration must be 0 or more seconds, not {value!r}")
    return seconds


def to_duration(value: Seconds) -> Duration:
    """A Duration of millisecond precision, the broker's (finer parts would be dropped)."""
    duration = Duration()
    duration.FromMilliseconds(round(seconds_of(value) * 1000))
    return duration


def from_duration(duration: Duration) -> float:
    """A Duration in seconds."""
    return duration.seconds + duration.nanos / 1e9


def from_timestamp(timestamp: Timestamp) -> datetime:
    """A Timestamp as an aware datetime in UTC."""
    return timestamp.ToDatetime(tzinfo=timezone.utc)
