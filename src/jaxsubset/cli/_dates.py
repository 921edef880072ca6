"""Dates of the command's time axes: ISO-8601 or ``strptime`` text as exact int64 nanoseconds,
and back to ISO-8601 text."""

import datetime as _dt
import re
import warnings
from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np

from ._files import InputError


ISO_DATE = re.compile(
    r"^[0-9]{4}-[0-9]{2}(-[0-9]{2}"
    r"([T ][0-9]{2}:[0-9]{2}(:[0-9]{2}([.,][0-9]{1,9})?)?\s*(Z|[+-][0-9]{2}(:?[0-9]{2})?)?)?)?$"
)
NS_FIRST = np.datetime64("1677-09-22", "s")  # datetime64[ns] holds 1677-09-21 .. 2262-04-11
NS_LAST = np.datetime64("2262-04-10", "s")


def is_iso_date(text: str) -> bool:
    """Whether ``text`` is an ISO-8601 date or datetime (``2001-12-29``, ``2001-12-29 06:00``)."""
    return bool(ISO_DATE.match(text.strip()))


def checked_ns(
    dates: np.ndarray,
    label: str,
    where: Callable[[int], str],
    rows: np.ndarray | None = None,
    cells: np.ndarray | None = None,
) -> np.ndarray:
    """datetime64 values (any unit) as int64 ns, or an error naming the first bad row (and
    quoting its text from ``cells``, the file's own text of every value, when given)."""
    rows = np.arange(len(dates)) if rows is None else rows
    nat = np.isnat(dates)
    if nat.any():
        i = int(rows[np.flatnonzero(nat)].min())
        raise InputError(f"{label} has a missing date at {where(i)}; every point needs a position")
    coarse = dates.astype("datetime64[s]")
    out = (coarse < NS_FIRST) | (coarse > NS_LAST)
    if out.any():
        k = int(np.flatnonzero(out)[np.argmin(rows[out])])
        shown = str(cells[k]) if cells is not None else str(dates[k])
        raise InputError(
            f"{label}: {where(int(rows[k]))} holds {shown!r}, outside "
            "1677-09-22 .. 2262-04-10 (the range of int64 nanoseconds)"
        )
    return dates.astype("datetime64[ns]").view(np.int64)


def parse_one(text: str, x_format: str | None) -> np.datetime64:
    """One date: by ``strptime(x_format)``, else ISO-8601 (an offset or ``Z`` converted to UTC)."""
    if x_format is None and not is_iso_date(text):
        raise ValueError(text)
    if x_format is None:
        t = text.replace(",", ".")
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            try:
                return np.datetime64(t)
            except (ValueError, UserWarning, DeprecationWarning):
                pass
        d = _dt.datetime.fromisoformat(t)  # offsets and "Z"
    else:
        d = _dt.datetime.strptime(text, x_format)
    if d.tzinfo is not None:
        d = d.astimezone(_dt.UTC).replace(tzinfo=None)
    return np.datetime64(d, "us")


FIELDS = {"Y": 4, "m": 2, "d": 2, "H": 2, "M": 2, "S": 2}


def fixed_width_dates(arr: np.ndarray, x_format: str) -> np.ndarray | None:
    """Dates of a fixed-width numeric ``strptime`` format (``%Y%m%d``, ``%Y-%m-%d %H:%M``...)
    parsed without a Python loop, as datetime64[s]; None when the format or a cell needs
    ``strptime`` itself (other directives, ragged widths, a bad or impossible date)."""
    layout: list[tuple[str, int]] = []  # (field or literal character, position)
    pos, i = 0, 0
    while i < len(x_format):
        c = x_format[i]
        if c == "%":
            key = x_format[i + 1 : i + 2]
            if key not in FIELDS:
                return None
            layout.append((key, pos))
            pos += FIELDS[key]
            i += 2
        else:
            layout.append(("=" + c, pos))
            pos += 1
            i += 1
    lengths = np.char.str_len(arr)
    if arr.size == 0 or lengths.min() != pos or lengths.max() != pos:
        return None
    codes = np.ascontiguousarray(arr.astype(f"U{pos}")).view(np.uint32).reshape(len(arr), pos)
    codes = codes.astype(np.int64)
    fields: dict[str, int | np.ndarray] = {"m": 1, "d": 1, "H": 0, "M": 0, "S": 0}
    for key, at in layout:
        if key.startswith("="):
            if np.any(codes[:, at] != ord(key[1])):
                return None
            continue
        digits = codes[:, at : at + FIELDS[key]] - ord("0")
        if np.any((digits < 0) | (digits > 9)):
            return None
        fields[key] = digits @ (10 ** np.arange(FIELDS[key] - 1, -1, -1))
    if "Y" not in fields:
        return None
    month = fields["m"]
    if np.any((month < 1) | (month > 12)):
        return None
    first = (np.asarray((fields["Y"] - 1970) * 12 + month - 1)).astype("datetime64[M]")
    days = (first + 1).astype("datetime64[D]") - first.astype("datetime64[D]")
    day = np.asarray(fields["d"])
    if np.any((day < 1) | (day > days.astype(np.int64))):
        return None
    hms = [np.asarray(fields[k]) for k in ("H", "M", "S")]
    if np.any(hms[0] > 23) or np.any(hms[1] > 59) or np.any(hms[2] > 59):
        return None
    secs = (hms[0] * 60 + hms[1]) * 60 + hms[2]
    return (
        first.astype("datetime64[D]").astype("datetime64[s]")
        + (day - 1) * np.timedelta64(86_400, "s")
        + secs * np.timedelta64(1, "s")
    )


def parse_dates(
    cells: Sequence[str] | np.ndarray,
    label: str,
    where: Callable[[int], str] = lambda i: f"row {i}",
    x_format: str | None = None,
) -> np.ndarray:
    """Text dates as exact int64 nanoseconds since the epoch (UTC).

    Args:
        cells: the text of every row (stripped here).
        label: what the values are, for messages (``"data.csv: x column 't'"``).
        where: row index -> its place in the file, for messages.
        x_format: a ``strptime`` format (``"%Y%m%d"``); default ISO-8601.

    Returns:
        ``(N,)`` int64 nanoseconds.

    Raises:
        InputError: an empty cell, a cell that is not a date (of ``x_format``), or a date
            outside 1677-09-22 .. 2262-04-10; the message names the first such row.
    """
    arr = np.char.strip(np.asarray(cells, dtype=str))
    if arr.size == 0:
        raise InputError(f"{label} is empty")
    empty = arr == ""
    if empty.any():
        i = int(np.argmax(empty))
        raise InputError(f"{label} has a missing date at {where(i)}; every point needs a position")
    if x_format is None:  # the vectorised road: NumPy parses ISO-8601 itself
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a time zone warns: the careful road converts it
            try:
                dates = arr.astype("datetime64")
            except (ValueError, UserWarning, DeprecationWarning, OverflowError):
                dates = None
        if dates is not None:
            return checked_ns(dates, label, where, cells=arr)
    else:
        dates = fixed_width_dates(arr, x_format)
        if dates is not None:
            return checked_ns(dates, label, where, cells=arr)
    uniq, first, inv = np.unique(arr, return_index=True, return_inverse=True)
    values = np.empty(len(uniq), "datetime64[ns]")
    bad_rows, far_rows = [], []
    for j, text in enumerate(uniq.tolist()):
        try:
            v = parse_one(text, x_format)
        except (ValueError, OverflowError):
            bad_rows.append(int(first[j]))
            continue
        # Checked before the assignment: datetime64[ns] would wrap a far date silently.
        if not NS_FIRST <= v.astype("datetime64[s]") <= NS_LAST:
            far_rows.append(int(first[j]))
            continue
        values[j] = v
    if bad_rows:
        i = min(bad_rows)
        what = f"a date of --x-format {x_format!r}" if x_format else "an ISO-8601 date"
        raise InputError(f"{label} is not {what}: {where(i)} holds {str(arr[i])!r}")
    if far_rows:
        i = min(far_rows)
        raise InputError(
            f"{label}: {where(i)} holds {str(arr[i])!r}, outside 1677-09-22 .. 2262-04-10 "
            "(the range of int64 nanoseconds)"
        )
    return checked_ns(values[inv.reshape(-1)], label, where, None)


# the units iso_unit chooses from (a Literal: NumPy's datetime_as_string declares its units so)
IsoUnit = Literal["D", "s", "ms", "us", "ns"]


def iso_unit(*columns: np.ndarray) -> IsoUnit:
    """The coarsest ``datetime_as_string`` unit that shows every date of ``columns`` exactly:
    ``"D"`` for whole days, ``"s"`` for whole seconds, else ``"ms"``, ``"us"`` or ``"ns"``."""
    steps: tuple[tuple[IsoUnit, int], ...] = (
        ("D", 86_400 * 10**9),
        ("s", 10**9),
        ("ms", 10**6),
        ("us", 10**3),
    )
    for unit, step in steps:
        if not any(
            np.any(d[~np.isnat(d)].view(np.int64) % step)
            for d in (np.asarray(c).astype("datetime64[ns]") for c in columns)
        ):
            return unit
    return "ns"


def iso_strings(dates: np.ndarray, unit: IsoUnit | None = None) -> list[str | None]:
    """datetime64 values as ISO-8601 text, None for NaT.

    Whole days print as ``2001-12-29``, whole seconds as ``2001-12-29T06:00:00``, finer times
    with the fractional digits they need (see :func:`iso_unit`; pass ``unit`` to print several
    columns alike).
    """
    dates = np.asarray(dates).astype("datetime64[ns]")
    text = np.datetime_as_string(dates, unit=unit or iso_unit(dates)).tolist()
    return [None if t == "NaT" else t for t in text]
