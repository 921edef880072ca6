"""Time axes now live in :mod:`jaxsubset._axis`; this module keeps the old import path."""

from ._axis import (
    datetime_to_ns as datetime_to_ns,
    time_kind as time_kind,
    timedelta_to_ns as timedelta_to_ns,
    to_datetime64 as to_datetime64,
    to_ns as to_ns,
    x_to_ns as x_to_ns,
)
