"""Periods and durations written as text (``"1M"``, ``"1Q"``, ``"7D"``, ``"12h"``), without JAX.

:func:`parse_period` and the duration units live here, apart from the time axes of
:mod:`jaxsubset._core._axis` (which uses them), so that the command can check ``--width 7D``
and ``--bins 1M`` against a file's header before it imports jax.
"""

import re
from typing import Any

import numpy as np


UNIT_ALIASES = {
    "w": "W", "week": "W", "weeks": "W",
    "d": "D", "day": "D", "days": "D",
    "h": "h", "hour": "h", "hours": "h",
    "min": "m", "minute": "m", "minutes": "m", "t": "m",
    "s": "s", "sec": "s", "second": "s", "seconds": "s",
    "ms": "ms", "us": "us", "ns": "ns",
}  # fmt: skip
CALENDAR = {"m", "mo", "month", "months", "y", "a", "year", "years", "q", "quarter"}
DURATION = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*([A-Za-z]+)\s*$")


def duration_ns(value: str, name: str, func: str) -> np.ndarray:
    """A fixed duration written as text (``"7D"``, ``"1h"``, ``"30min"``) as int64 nanoseconds
    (a 0-d array); a ValueError naming ``func`` and ``name`` for anything else."""
    m = DURATION.match(value)
    unit = UNIT_ALIASES.get(m.group(2).lower() if m else "", None)
    if m and m.group(2) in ("M", "Y", "A", "Q", "MS", "YS"):
        unit = None
    if m is None or unit is None:
        calendar = m is not None and m.group(2).lower() in CALENDAR
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


# ------------------------------------------------------------------------------ periods
PERIOD = re.compile(r"^\s*([0-9]*\.?[0-9]+)?\s*([A-Za-z]+)\s*$")
CALENDAR_MONTHS = {
    **dict.fromkeys(("Y", "YS", "YE", "A", "AS", "y", "year", "years"), 12),
    **dict.fromkeys(("Q", "QS", "QE", "q", "quarter", "quarters"), 3),
    **dict.fromkeys(("M", "MS", "ME", "mo", "month", "months"), 1),
}
MAX_NS = 2**63 - 1  # the longest duration int64 nanoseconds hold
MAX_MONTHS = 12 * 585  # longer than 1677..2262: no two dates of the axis are that far apart
DAY_NS = 86_400 * 10**9


class PeriodError(ValueError):
    """A period that cannot be read; ``reason`` is the message without the caller's prefix."""

    def __init__(self, prefix: str, reason: str) -> None:
        super().__init__(f"{prefix}: {reason}")
        self.reason = reason


def is_period(text: Any) -> bool:
    """Whether ``text`` is spelled as a period (a number, if any, then letters: ``"3M"``)."""
    return isinstance(text, str) and PERIOD.match(text) is not None


def read_period(text: str, prefix: str) -> tuple[str, int]:
    """:func:`parse_period` with the caller's error prefix (a :class:`PeriodError`)."""
    m = PERIOD.match(text) if isinstance(text, str) else None
    if m is None:
        raise PeriodError(
            prefix,
            f"{text!r} is not a period: give a number and a unit, e.g. 1M, 3M, 1Q, 1Y, 7D, 12h",
        )
    amount, unit = m.group(1) or "1", m.group(2)
    if unit == "m":
        raise PeriodError(prefix, "ambiguous unit 'm': use M for months or min for minutes")
    if unit in CALENDAR_MONTHS:
        if not amount.isdigit() or int(amount) < 1:
            raise PeriodError(prefix, "a calendar period takes a whole number, e.g. 3M")
        months = int(amount) * CALENDAR_MONTHS[unit]
        if months > MAX_MONTHS:
            raise PeriodError(
                prefix,
                "longer than the whole range of int64 nanosecond dates "
                "(1677-09-22 .. 2262-04-10, about 584 years)",
            )
        return "calendar", months
    ns: int | None
    try:
        ns = int(duration_ns(f"{amount}{unit}", "period", "parse_period"))
    except OverflowError:
        ns = None
    except (TypeError, ValueError):
        raise PeriodError(
            prefix,
            f"unknown time unit {unit!r} (use Y, Q or M for calendar years, quarters or "
            "months, or W, D, h, min, s, ms, us, ns)",
        ) from None
    if ns is None or ns > MAX_NS:
        raise PeriodError(
            prefix, "longer than the longest int64 nanosecond duration (about 292 years)"
        )
    if ns < 1:
        raise PeriodError(
            prefix,
            "shorter than 1 ns, the resolution of a time axis (int64 nanoseconds); give a "
            "positive duration of at least 1ns",
        )
    return "fixed", ns


def parse_period(text: str) -> tuple[str, int]:
    """A time period as ``("calendar", months)`` or ``("fixed", nanoseconds)``.

    Calendar periods take a whole number of ``M``/``MS`` (months), ``Q``/``QS`` (quarters,
    3 months) or ``Y``/``YS``/``A`` (years, 12 months); fixed ones any duration ``to_ns``
    reads (``W``, ``D``, ``h``, ``min``, ``s``, ``ms``, ``us``, ``ns``: ``"7D"``, ``"1.5h"``).
    A lower-case ``m`` is refused as ambiguous (``1M`` is a month, ``1min`` a minute).

    Args:
        text: the period, e.g. ``"1M"``, ``"3M"``, ``"1Q"``, ``"1Y"``, ``"7D"``, ``"12h"``.

    Returns:
        ``("calendar", months)`` or ``("fixed", ns)`` (Python ints).

    Raises:
        ValueError: for anything else (unknown unit, a fractional calendar period, a duration
            under 1 ns or beyond int64 nanoseconds); its ``reason`` attribute holds the
            message without the ``parse_period: '<text>'`` prefix.

    Example:
        >>> import jaxsubset
        >>> jaxsubset.parse_period("1Q"), jaxsubset.parse_period("12h")
        (('calendar', 3), ('fixed', 43200000000000))
    """
    return read_period(text, f"parse_period: {text!r}")
