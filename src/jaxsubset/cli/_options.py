"""What the ``stats`` options ask for: statistic names, periods, widths, bin edges and ranges.

The data-free checks (:func:`check_bins`, :func:`check_width`, :func:`parse_stats`) run before
the input is read; the rest turns an option into numbers on the data's own axis (int64
nanoseconds on a time axis) and then into :class:`jaxsubset.Ranges`.
"""

import argparse
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

import jaxsubset

from ._dates import is_iso_date, iso_strings, parse_dates
from ._files import InputError
from ._reader import XY, read_table
from ._table import to_numeric, to_time
from ._writer import format_value


# the library's statistics (one list: jaxsubset.STATISTICS); the quantile takes its q in the
# name, ``q0.9`` (see :func:`quantile_q`)
STATS = tuple(s for s in jaxsubset.STATISTICS if s != "quantile")
COUNTS = ("valid",)  # not a reduction: the number of real (non-missing) readings per subset
DEFAULT_STATS = "mean,std,min,max"
QUANTILE = re.compile(r"^q(0|1|0?\.[0-9]+|1\.0*)$")  # q0.9, q.25, q0, q1: the q-quantile
MAX_BINS = 10_000_000  # a period bin spec over a long time axis must stay a sane table

# how a period is spelled (a number, if any, then letters): told apart from a number of bins
# here, read by the library (jaxsubset.parse_period)
PERIOD = re.compile(r"^\s*([0-9]*\.?[0-9]+)?\s*([A-Za-z]+)\s*$")


def reason(error: ValueError) -> str:
    """The library's message without its function prefix (its ``reason``, where it has one)."""
    return str(getattr(error, "reason", error))


def parse_period(text: str, option: str) -> tuple[str, int] | None:
    """A time period: ``("calendar", months)`` for ``1Y``/``3M``/``1Q``, ``("fixed", ns)`` for
    durations (``7D``, ``1h``, ``30min``, ``10s``, ``1W`` = ``7D``), None for other text.

    Read by :func:`jaxsubset.parse_period` (a calendar period takes a whole multiple; lower-case
    ``m`` is refused as ambiguous: ``1M`` is a month, ``1min`` a minute).
    """
    if PERIOD.match(text) is None:
        return None
    try:
        return jaxsubset.parse_period(text)
    except ValueError as e:
        raise InputError(f"{option} {text}: {reason(e)}") from None


def parse_bins(text: str) -> int | np.ndarray:
    """``--bins``: a number of equal-width bins, or comma-separated increasing edges."""
    return _bin_edges(text) if "," in text else bin_count(text)


def bin_count(text: str) -> int:
    """``--bins`` without a comma: a number of equal-width bins."""
    text = text.strip()
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise InputError(
            "--bins takes a number of bins (e.g. --bins 10) or at least two "
            f"comma-separated edges (e.g. --bins 0,1,2.5,10), got {text!r}"
        )
    return n


def _bin_edges(text: str) -> np.ndarray:
    """``--bins`` with a comma: increasing, finite, at least two edges."""
    text = text.strip()
    try:
        edges = np.array([float(s) for s in text.split(",") if s.strip()], dtype=np.float64)
    except ValueError:
        raise InputError(f"--bins: the edges must be numbers, got {text!r}") from None
    if edges.size < 2:
        raise InputError(f"--bins needs at least two edges, got {text!r}")
    if not np.all(np.isfinite(edges)):
        raise InputError(f"--bins: the edges must be finite numbers, got {text!r}")
    if np.any(np.diff(edges) < 0):
        raise InputError(f"--bins: the edges must increase, got {text!r}")
    return edges


def check_bins(text: str) -> None:
    """``--bins`` syntax, checked before the data is read (the axis decides the rest later)."""
    stripped = text.strip()
    if "," in stripped:
        cells = [c.strip() for c in stripped.split(",") if c.strip()]
        if cells and all(is_iso_date(c) for c in cells):
            parse_dates(cells, f"--bins {stripped}", lambda i: f"edge {i}")
            return
    elif PERIOD.match(stripped):
        parse_period(stripped, "--bins")
        return
    parse_bins(text)


def quantile_q(name: str) -> float | None:
    """``q`` of a quantile statistic name (``"q0.9"`` -> 0.9), None for other names."""
    return float(name[1:]) if QUANTILE.match(name) else None


def parse_stats(specs: Sequence[str] | None) -> tuple[str, ...]:
    """``--stat mean,std`` (repeatable) -> the statistic names, in order, without repeats.

    The names are the library's (:data:`jaxsubset.STATISTICS`) and ``valid``; the quantile is
    written with its q, ``q0.9`` (as ``numpy.quantile(..., 0.9)``).
    """
    names: list[str] = []
    known = STATS + COUNTS
    choices = f"choose from {', '.join(known)}, or q0.9 for a quantile"
    for spec in specs or [DEFAULT_STATS]:
        for s in spec.split(","):
            s = s.strip().lower()
            if not s:
                continue
            if s == "quantile":
                raise InputError(
                    "--stat quantile: say which one with its q, e.g. --stat q0.9 (the "
                    "0.9-quantile, numpy.quantile's linear interpolation) or q0.5"
                )
            if s in ("cov", "corr"):
                raise InputError(
                    f"--stat {s}: the command writes one column per statistic and channel; "
                    f"{s!r} is between channels (a matrix per subset) and is in the Python API "
                    f"only (jaxsubset.rolling_statistic(x, y, width, {s!r}), range_statistic, "
                    "binned_statistic)"
                )
            if s not in known and quantile_q(s) is None:
                hint = " (a quantile's q lies in [0, 1])" if s.startswith("q") else ""
                raise InputError(f"--stat: unknown statistic {s!r}{hint} ({choices})")
            if s not in names:
                names.append(s)
    if not names:
        raise InputError(f"--stat: give at least one statistic ({choices})")
    return tuple(names)


def range_dates(table: Any, j: int, role: str, x_format: str | None) -> np.ndarray:
    """Column ``j`` of a ranges file as int64 ns (ISO dates, or dates of ``x_format``)."""
    col = table.column(j)
    fmt = x_format
    if fmt is not None and col.dtype.kind == "U":
        filled = col[np.char.strip(col) != ""]
        if filled.size and is_iso_date(str(filled[0])):
            fmt = None  # ISO dates in the ranges file, whatever the data's own format
    ns = to_time(table, j, role, fmt)
    if ns is None:
        raise InputError(
            f"{table.path}: {role} column {table.names[j]!r} holds numbers, but x is a time "
            "axis: give the ranges as dates, e.g. 2001-12-29,2002-01-05"
        )
    return ns


def read_range_file(
    path: str, x_time: bool = False, x_format: str | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``--ranges FILE``: rows ``lo,hi`` of x values (half-open ``[lo, hi)``), header optional.

    On a time axis (``x_time``) the rows are dates (ISO-8601, or of ``x_format``) and come back
    as int64 nanoseconds; otherwise numbers, as float64.
    """
    table = read_table(path, x_format)
    if len(table.names) < 2:
        raise InputError(f"{path}: a ranges file needs two columns, lo and hi, on every row")
    if x_time:
        lo = range_dates(table, 0, "lo", x_format)
        hi = range_dates(table, 1, "hi", x_format)
    else:
        for j, role in enumerate(("lo", "hi")):
            col = table.column(j)
            if col.dtype.kind in "UO" and to_time(table, j, role) is not None:
                raise InputError(
                    f"{path}: the ranges are dates, but the x column holds numbers {NUMBERS_HINT}"
                )
        lo = to_numeric(table, 0, "lo").astype(np.float64)
        hi = to_numeric(table, 1, "hi").astype(np.float64)
    if len(lo) != len(hi):
        raise InputError(f"{path}: length mismatch: {len(lo)} lo values, {len(hi)} hi values")
    if not x_time:
        bad = np.isnan(lo) | np.isnan(hi)
        if bad.any():
            raise InputError(f"{path}: range {int(np.argmax(bad))} has a missing lo or hi value")
    back = hi < lo
    if back.any():
        i = int(np.argmax(back))
        if x_time:
            h, low = iso_strings(np.array([hi[i], lo[i]]).view("datetime64[ns]"))
        else:
            h, low = format_value(hi[i]), format_value(lo[i])
        raise InputError(f"{path}: range {i} ({table.where(i)}) has hi < lo ({h} < {low})")
    return lo, hi


NUMBERS_HINT = "(for dates stored as numbers such as 20011229 pass --x-format %Y%m%d)"


def is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def check_width(text: str) -> None:
    """``--width`` checks that need no data: a known unit, not a calendar period."""
    if is_number(text):
        return
    period = parse_period(text, "--width")
    if period is not None and period[0] == "calendar":
        raise InputError(
            f"--width {text}: months and years have no fixed length; for calendar periods "
            f"use bins, e.g. --bins {text}"
        )


def width_value(text: str, xy: XY) -> float | int:
    """``--width`` on this axis: a float on a numeric axis, int64 nanoseconds on a time axis."""
    check_width(text)
    period = None if is_number(text) else parse_period(text, "--width")
    if xy.x_time:
        if period is None:
            raise InputError(
                f"--width {text}: x column {xy.x_name!r} holds dates, so the width needs a "
                "unit, e.g. --width 7D, 12h or 30min"
            )
        return period[1]
    if period is not None:
        raise InputError(
            f"--width {text}: a duration needs a time axis, but x column {xy.x_name!r} holds "
            f"numbers {NUMBERS_HINT}"
        )
    return float(text)


def time_edges(x: np.ndarray, bins: int | str, text: str) -> np.ndarray:
    """:func:`jaxsubset.bin_edges` on the int64 ns axis, its errors as the option's."""
    try:
        # a period's count depends on the data; a count N was checked against memory already
        return jaxsubset.bin_edges(x, bins, max_bins=MAX_BINS if isinstance(bins, str) else None)
    except ValueError as e:
        raise InputError(f"--bins {text}: {reason(e)}") from None


def listed_edges(text: str, xy: XY, x_format: str | None = None) -> np.ndarray:
    """``--bins`` given as comma-separated edges, on this axis (int64 ns on a time axis)."""
    stripped = text.strip()
    cells = [c.strip() for c in stripped.split(",") if c.strip()]
    dates = bool(cells) and all(is_iso_date(c) for c in cells)
    if xy.x_time:
        fmt = None if dates else x_format
        if not dates and fmt is None:
            raise InputError(
                f"--bins {stripped}: x column {xy.x_name!r} holds dates: give the edges as "
                "dates (e.g. --bins 2001-01-01,2002-01-01) or a period (--bins 1M, 7D)"
            )
        edges = parse_dates(cells, f"--bins {stripped}", lambda i: f"edge {i}", fmt)
        if len(edges) < 2:
            raise InputError(f"--bins needs at least two edges, got {stripped!r}")
        if np.any(np.diff(edges) < 0):
            raise InputError(f"--bins: the edges must increase, got {stripped!r}")
        return edges
    if dates:
        raise InputError(
            f"--bins {stripped}: date edges need a time axis, but x column {xy.x_name!r} "
            f"holds numbers {NUMBERS_HINT}"
        )
    return _bin_edges(text)


def bins_period(text: str, xy: XY) -> tuple[str, int] | None:
    """``--bins`` as a period (None for a number of bins), which needs a time axis."""
    stripped = text.strip()
    period = parse_period(stripped, "--bins") if PERIOD.match(stripped) else None
    if period is not None and not xy.x_time:
        raise InputError(
            f"--bins {stripped}: a time period needs a time axis, but x column {xy.x_name!r} "
            f"holds numbers {NUMBERS_HINT}"
        )
    return period


def check_bins_axis(text: str, xy: XY, x_format: str | None = None) -> None:
    """``--bins`` against the axis of ``xy`` (its points are not read): the checks that
    :func:`bin_edges` makes before it needs the data."""
    if "," in text.strip():
        listed_edges(text, xy, x_format)
    else:
        bins_period(text, xy)


def bin_edges(text: str, xy: XY, x_format: str | None = None) -> tuple[np.ndarray, str]:
    """``--bins`` on this axis: the edges (int64 ns on a time axis) and a description."""
    stripped = text.strip()
    x = xy.x
    if "," in stripped:
        edges = listed_edges(text, xy, x_format)
        return edges, f"{len(edges) - 1} bins"
    period = bins_period(text, xy)
    if period is None:
        n = bin_count(text)
        edges = time_edges(x, n, text.strip()) if xy.x_time else np.histogram_bin_edges(x, n)
        return edges, f"{n} bins"
    edges = time_edges(x, stripped, stripped)
    if period[0] == "calendar":
        return edges, f"calendar bins of {stripped}"
    return edges, f"bins of {stripped}"


def x_request(
    xy: XY,
    *,
    width: str | None = None,
    bins: str | None = None,
    x_format: str | None = None,
    center: bool = False,
) -> tuple[Any, str, dict[str, np.ndarray]]:
    """``--width`` or ``--bins`` in x units: the width or the edges, a description, and the
    x bounds of every subset (``lo``/``hi``), on a time axis in int64 nanoseconds.

    Args:
        xy: the data (its x column decides the axis).
        width: the ``--width`` text; when given, ``bins`` is not read.
        bins: the ``--bins`` text.
        x_format: the ``--x-format`` of date edges that are not ISO-8601.
        center: ``--center``: windows ``(a - W/2, a + W/2]`` (on a time axis in whole
            nanoseconds: ``lo = a - ceil(W/2)``, ``hi = a + floor(W/2)``, the same points).
    """
    x = xy.x
    if width is not None and center:
        value = width_value(str(width), xy)
        if xy.x_time:
            w = int(value)
            what = f"centred time windows (a - {width}/2, a + {width}/2] at every point"
            return value, what, {"lo": x - np.int64(w - w // 2), "hi": x + np.int64(w // 2)}
        xf = x.astype(np.float64)
        what = f"centred x-width windows (a - {value!r}/2, a + {value!r}/2] at every point"
        return value, what, {"lo": xf - value / 2, "hi": xf + value / 2}
    if width is not None:
        value = width_value(str(width), xy)
        if xy.x_time:
            what = f"time windows (a - {width}, a] at every point"
            return value, what, {"lo": x - np.int64(value), "hi": x}
        lo = x.astype(np.float64) - value
        return value, f"x-width windows (a - {value!r}, a] at every point", {"lo": lo, "hi": x}
    if bins is None:
        raise TypeError("x_request: give `width` or `bins`")
    edges, what = bin_edges(bins, xy, x_format)
    return edges, what, {"lo": edges[:-1], "hi": edges[1:]}


INT64 = np.iinfo(np.int64)


def time_rolling_ranges(x: np.ndarray, width: int, center: bool = False) -> Any:
    """The windows ``a - W < x <= a`` (``center``: ``a - W/2 < x <= a + W/2``) at every point
    of a sorted int64 nanosecond axis, found on the host with ``numpy.searchsorted``.

    The same ranges as :func:`jaxsubset.ranges.rolling` (tests/test_cli_host_ranges.py), in
    exact integers and without a compiled program (pandas' rule for tied x: a trailing
    window ends at its own row): the command's statistics of ``--width``
    take the library's rolling road, which finds the windows itself, so the table's start and
    count need no program of their own. Bounds beyond int64 are clipped (no wrap-around).
    """
    w = int(width)
    below = w - w // 2 if center else w  # the window: a - below < x <= a + w // 2 (centred)
    lo = np.where(x >= INT64.min + below, x - np.int64(below), INT64.min)
    rows = np.arange(len(x), dtype=np.int64)
    # pandas' rule for ties: a trailing window ends AT its row (later rows tied with it are
    # out), a centred one by value; no window starts past its own row or its end
    if center:
        hi = np.where(x <= INT64.max - w // 2, x + np.int64(w // 2), INT64.max)
        stop = np.searchsorted(x, hi, side="right")
    else:
        stop = rows + 1
    start = np.minimum(np.minimum(np.searchsorted(x, lo, side="right"), rows), stop)
    return host_ranges(start, stop - start)


def time_bin_ranges(x: np.ndarray, edges: np.ndarray) -> Any:
    """The bins ``[e_i, e_{i+1})`` (the last closed, as ``numpy.histogram``) of a sorted int64
    nanosecond axis, found on the host with ``numpy.searchsorted``: the ranges of
    :func:`jaxsubset.ranges.bins` (tests/test_cli_host_ranges.py) without a compiled
    program."""
    e = np.asarray(edges, dtype=np.int64)
    below = np.searchsorted(x, e, side="left")
    stop = np.append(below[1:-1], np.searchsorted(x, e[-1], side="right"))
    start = below[:-1]
    return host_ranges(start, np.maximum(stop - start, 0))


def host_ranges(start: np.ndarray, count: np.ndarray) -> Any:
    """:class:`jaxsubset.Ranges` of int64 host arrays (the command reads them on the host, and
    the library's eager calls take them so)."""
    # Ranges declares the jax Arrays the library's own constructors return
    return jaxsubset.Ranges(start.astype(np.int64), count.astype(np.int64))  # type: ignore[arg-type]


def build_ranges(args: argparse.Namespace, xy: XY) -> tuple[Any, str, dict[str, np.ndarray]]:
    """The :class:`jaxsubset.Ranges` the options ask for, a description, and x bounds (if any).

    The bounds (``lo``/``hi`` columns) are reported for the requests made in x units
    (``--width``, ``--bins``, ``--ranges``); chunks and windows are index ranges. On a time
    axis x, the bounds and the widths are int64 nanoseconds.
    """
    x = xy.x
    n = x.shape[0]
    x_format = args.x_format
    if args.chunks is not None:
        return jaxsubset.ranges.chunks(x, args.chunks), f"{args.chunks} chunks", {}
    if args.size is not None:
        return jaxsubset.ranges.chunks(x, size=args.size), f"chunks of {args.size} points", {}
    if args.window is not None:
        if args.window > n:
            raise InputError(f"--window {args.window} is longer than the data ({n} points)")
        step = args.step or 1
        r = jaxsubset.ranges.sliding(x, args.window, step=step)
        return r, f"sliding windows of {args.window} points, step {step}", {}
    if args.width is not None:
        center = bool(getattr(args, "center", False))
        width, what, bounds = x_request(xy, width=args.width, center=center)
        if xy.x_time:  # exact int64 nanoseconds: the host's search, no program to compile
            return time_rolling_ranges(x, width, center), what, bounds
        return jaxsubset.ranges.rolling(x, width, center=center), what, bounds
    if args.bins is not None:
        edges, what, bounds = x_request(xy, bins=args.bins, x_format=x_format)
        if xy.x_time:
            return time_bin_ranges(x, edges), what, bounds
        return jaxsubset.ranges.bins(x, edges), what, bounds
    lo, hi = read_range_file(args.ranges, xy.x_time, x_format)
    r = jaxsubset.ranges.select(x, lo, hi, closed="left")
    return r, f"{len(lo)} ranges [lo, hi) from {args.ranges}", {"lo": lo, "hi": hi}
