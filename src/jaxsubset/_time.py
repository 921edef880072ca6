"""Time axes: ``numpy.datetime64`` x and ``timedelta64`` widths as exact integer nanoseconds.

JAX has no datetime dtype, so a time axis is converted ONCE to int64 nanoseconds since the epoch
(no float rounding of large epochs: float64 seconds cannot hold nanoseconds near 2e9 s). Bounds
given as dates and widths given as durations are converted the same way; results that report x
positions go back to ``datetime64`` with :func:`to_datetime64`. int64 needs JAX's 64-bit mode.
"""

import datetime as _dt
import re
from typing import Any

import jax
import numpy as np


_UNIT_ALIASES = {
    "w": "W", "week": "W", "weeks": "W",
    "d": "D", "day": "D", "days": "D",
    "h": "h", "hour": "h", "hours": "h",
    "min": "m", "minute": "m", "minutes": "m", "t": "m",
    "s": "s", "sec": "s", "second": "s", "seconds": "s",
    "ms": "ms", "us": "us", "ns": "ns",
}  # fmt: skip
_CALENDAR = {"m", "mo", "month", "months", "y", "a", "year", "years", "q", "quarter"}
_DURATION = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*([A-Za-z]+)\s*$")

# datetime64[ns] holds 1677-09-21 .. 2262-04-11; outside that nanoseconds overflow int64.
_NS_MIN = np.datetime64("1677-09-22", "s")
_NS_MAX = np.datetime64("2262-04-10", "s")


def time_kind(value: Any) -> str | None:
    """``"M"`` for datetime64 data, ``"m"`` for timedelta64 data, else None (never traced)."""
    if isinstance(value, jax.core.Tracer | jax.Array):
        return None
    if isinstance(value, np.datetime64 | _dt.datetime | _dt.date):
        return "M"
    if isinstance(value, np.timedelta64 | _dt.timedelta):
        return "m"
    dtype = getattr(value, "dtype", None)
    if dtype is None:
        try:
            dtype = np.asarray(value).dtype
        except (TypeError, ValueError):
            return None
    kind = np.dtype(dtype).kind if not hasattr(dtype, "kind") else dtype.kind
    return kind if kind in "Mm" else None


def _require_x64(func: str) -> None:
    if not jax.config.read("jax_enable_x64"):
        raise TypeError(
            f"{func}: time axes are held as int64 nanoseconds, which needs JAX's 64-bit mode: "
            "call `jax.config.update('jax_enable_x64', True)` at start-up"
        )


def _as_kind(value: Any, convert: Any, kind: str) -> np.ndarray:
    """``value`` as a NumPy array of dtype kind ``kind``; Python objects (``datetime``, pandas
    ``Timestamp``/``Timedelta``) converted one by one with ``convert``. TypeError otherwise."""
    if hasattr(value, "dtype") and not isinstance(value, _dt.datetime | _dt.timedelta):
        arr = np.asarray(value)
    else:
        obj = np.asarray(value, dtype=object)
        arr = np.asarray([convert(v) for v in obj.ravel()]).reshape(obj.shape)
    if arr.dtype.kind != kind:
        raise TypeError(f"expected dtype kind {kind!r}, got {arr.dtype}")
    return arr


def datetime_to_ns(value: Any, name: str, func: str) -> np.ndarray:
    """Dates (datetime64, ``datetime``, ISO strings, pandas Timestamps) as int64 nanoseconds."""
    try:
        if isinstance(value, str) or (isinstance(value, np.ndarray) and value.dtype.kind == "U"):
            arr = np.asarray(value, dtype="datetime64[ns]")
        else:
            arr = _as_kind(value, np.datetime64, "M")
    except (TypeError, ValueError):
        raise TypeError(
            f"{func}: `{name}` must be dates (numpy.datetime64 or ISO strings) on a time axis, "
            f"got {value!r}"
        ) from None
    if np.isnat(arr).any():
        raise ValueError(f"{func}: `{name}` holds NaT (a missing date); a date must be known")
    coarse = arr.astype("datetime64[s]")
    if (coarse < _NS_MIN).any() or (coarse > _NS_MAX).any():
        raise ValueError(
            f"{func}: `{name}` holds dates outside 1677-09-22 .. 2262-04-10, which int64 "
            "nanoseconds cannot represent"
        )
    return arr.astype("datetime64[ns]").view(np.int64)


def timedelta_to_ns(value: Any, name: str, func: str) -> np.ndarray:
    """Durations (timedelta64, ``timedelta``, pandas Timedelta, "7D", "1h") as int64 ns."""
    if isinstance(value, str):
        m = _DURATION.match(value)
        unit = _UNIT_ALIASES.get(m.group(2).lower() if m else "", None)
        if m and m.group(2) in ("M", "Y", "A", "Q", "MS", "YS"):
            unit = None
        if m is None or unit is None:
            calendar = m is not None and m.group(2).lower() in _CALENDAR
            hint = (
                "months and years have no fixed length; use calendar bins instead"
                if calendar
                else "use a number and a unit such as '7D', '1h', '30min', '10s'"
            )
            raise ValueError(f"{func}: `{name}`={value!r} is not a fixed duration: {hint}")
        amount = float(m.group(1))
        one = np.timedelta64(1, unit)  # type: ignore[call-overload]  # a unit of the pattern
        ns = amount * one.astype("timedelta64[ns]").astype(np.int64)
        return np.asarray(round(ns), dtype=np.int64)
    try:
        arr = _as_kind(value, np.timedelta64, "m")
        if np.datetime_data(arr.dtype)[0] == "generic":
            raise TypeError("a duration without a unit")  # np.timedelta64(7): a bare number
    except (TypeError, ValueError):
        raise TypeError(
            f"{func}: `{name}` must be a duration on a time axis (numpy.timedelta64 or a string "
            f"such as '7D'), got {value!r}; a plain number would be read as nanoseconds"
        ) from None
    if np.isnat(arr).any():
        raise ValueError(f"{func}: `{name}` holds NaT (a missing duration)")
    return arr.astype("timedelta64[ns]").view(np.int64)


def x_to_ns(x: Any, func: str) -> np.ndarray:
    """A datetime64/timedelta64 x as int64 nanoseconds (checked for NaT and range)."""
    _require_x64(func)
    if time_kind(x) == "m":
        return timedelta_to_ns(np.asarray(x), "x", func)
    arr = np.asarray(x)
    if np.isnat(arr).any():
        i = int(np.argmax(np.isnat(arr)))
        raise ValueError(
            f"{func}: `x` holds NaT at index {i}; a point with no position cannot be placed"
        )
    return datetime_to_ns(arr, "x", func)


def to_ns(values: Any) -> np.ndarray:
    """Dates or durations as int64 nanoseconds: the form a time axis takes inside ``jit``.

    The constructors accept ``datetime64`` x and date bounds directly when called eagerly;
    inside ``jit`` everything is an array of numbers, so convert once with this function.

    Args:
        values: ``numpy.datetime64``/``timedelta64`` values (any unit), ISO date strings,
            ``datetime``/``timedelta`` objects, or duration strings like ``"7D"``.

    Returns:
        ``numpy.ndarray`` of int64 nanoseconds (since the epoch for dates).

    Example:
        >>> import numpy as np, jaxsubset
        >>> jaxsubset.to_ns(np.array(["1970-01-01T00:00:01", "2001-12-29"], "datetime64[s]"))
        array([          1000000000, 1009584000000000000])
        >>> int(jaxsubset.to_ns("7D"))
        604800000000000
    """
    if time_kind(values) == "m" or (isinstance(values, str) and _DURATION.match(values)):
        return timedelta_to_ns(values, "values", "to_ns")
    return datetime_to_ns(values, "values", "to_ns")


def to_datetime64(ns: Any) -> np.ndarray:
    """int64 nanoseconds since the epoch (e.g. ``Subsets.x`` of a time axis) as datetime64[ns].

    Args:
        ns: array of int64 nanoseconds.

    Returns:
        ``numpy.ndarray`` of ``datetime64[ns]``.

    Example:
        >>> import jaxsubset
        >>> jaxsubset.to_datetime64([1009584000000000000]).astype(str).tolist()
        ['2001-12-29T00:00:00.000000000']
    """
    arr = np.asarray(ns)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"to_datetime64: `ns` must hold integer nanoseconds, got dtype {arr.dtype}")
    return arr.astype(np.int64).view("datetime64[ns]")
