"""``--before``/``--after`` and ``--every``/``--period``/``--offset``: asymmetric windows at
every point (pandas' offset windows) and hopping/tumbling windows (polars' group_by_dynamic).

The data-free checks (:func:`check_windows`) run before the input is read; :func:`window_ranges`
turns the options into numbers on the data's axis (int64 nanoseconds on a time axis) and into
:class:`jaxsubset.Ranges` with :func:`jaxsubset.ranges.rolling` / :func:`jaxsubset.ranges.dynamic`;
the table's bounds of ``--every`` windows are :func:`jaxsubset.dynamic_bounds` (the library's
own windows, never a copy); the streamed path (``_bigfile``) asks :func:`jaxsubset.stream` for
the same windows.
"""

import argparse
import re
from typing import Any

import numpy as np

import jaxsubset

from ._files import InputError
from ._options import PERIOD, parse_period, reason
from ._reader import XY


NUMBERS_HINT = "(for dates stored as numbers such as 20011229 pass --x-format %Y%m%d)"
INT = re.compile(r"^\s*[+-]?[0-9]+\s*$")


def number(text: str) -> float | None:
    try:
        v = float(text)
    except ValueError:
        return None
    return v if np.isfinite(v) else None


def extent_arg(minimum_exclusive: bool, signed: bool = False) -> Any:
    """An argparse ``type`` for ``--before``/``--after`` (``>= 0``), ``--every``/``--period``
    (``> 0``) and ``--offset`` (any sign): a number, or (checked against the axis later) a
    duration such as ``7D``."""

    def parse(text: str) -> str:
        v = number(text)
        body = text.strip()
        if v is None:
            if signed and body.startswith("-"):
                body = body[1:].strip()
            if PERIOD.match(body):
                return text.strip()
            what = "a number" if signed else "a positive number"
            raise argparse.ArgumentTypeError(
                f"expected {what}, or a duration such as 7D on a time axis, got {text!r}"
            )
        if not signed and (v < 0 or (minimum_exclusive and v == 0)):
            bound = "> 0" if minimum_exclusive else ">= 0"
            raise argparse.ArgumentTypeError(f"expected a number {bound}, got {text!r}")
        return text.strip()

    return parse


def period(text: str, option: str) -> tuple[str, int] | None:
    """``parse_period`` of a duration text (a leading ``-`` allowed for ``--offset``)."""
    body = text.strip()
    sign = 1
    if body.startswith("-"):
        sign, body = -1, body[1:].strip()
    p = parse_period(body, option)
    if p is None:
        return None
    return p[0], sign * p[1]


def _months(text: str, option: str) -> int:
    """The months of a calendar period (``check_windows`` has made sure it is one)."""
    p = period(text, option)
    if p is None or p[0] != "calendar":
        raise InputError(f"{option} {text}: not a calendar period (e.g. 1M, 3M, 1Y)")
    return p[1]


def check_windows(args: argparse.Namespace) -> None:
    """The window options' checks that need no data (which options go together, units)."""
    before, after = getattr(args, "before", None), getattr(args, "after", None)
    every = getattr(args, "every", None)
    if after is not None and before is None:
        raise InputError(
            "--after goes with --before (the window a - B < x <= a + A; --before 0 for none)"
        )
    for name in ("period", "offset"):
        if getattr(args, name, None) is not None and every is None:
            raise InputError(f"--{name} goes with --every only (hopping/tumbling windows)")
    for option, text in (("--before", before), ("--after", after)):
        if text is not None and number(text) is None:
            p = period(text, option)
            if p is not None and p[0] == "calendar":
                raise InputError(
                    f"{option} {text}: months and years have no fixed length; for calendar "
                    f"windows use --every {text}"
                )
    if every is not None:
        kinds = {
            name: None if number(t) is not None else (period(t, f"--{name}") or ("",))[0]
            for name, t in (("every", every), ("period", args.period), ("offset", args.offset))
            if t is not None
        }
        if kinds.get("offset") == "calendar":
            raise InputError(f"--offset {args.offset}: an offset is a fixed duration, e.g. 1D")
        if "period" in kinds and (kinds["every"] == "calendar") != (kinds["period"] == "calendar"):
            raise InputError(
                f"--every {every} --period {args.period}: give both as calendar periods "
                "(1M, 3M, 1Y) or both as fixed lengths"
            )


def is_calendar(args: argparse.Namespace) -> bool:
    """``--every`` in months or years (calendar windows: the whole file is read)."""
    every = getattr(args, "every", None)
    if every is None or number(every) is not None:
        return False
    p = period(every, "--every")
    return p is not None and p[0] == "calendar"


def axis_value(text: str, option: str, xy: XY, *, integer: bool = False) -> Any:
    """An extent on this axis: int64 nanoseconds on a time axis (``0`` may go without a
    unit); on a numeric axis a float, or an int for an integer text on an integer x."""
    v = number(text)
    if xy.x_time:
        if v is not None:
            if v == 0:
                return 0
            raise InputError(
                f"{option} {text}: x column {xy.x_name!r} holds dates, so the value needs a "
                "unit, e.g. 7D, 12h or 30min"
            )
        p = period(text, option)
        if p is None or p[0] != "fixed":
            raise InputError(f"{option} {text}: expected a fixed duration, e.g. 7D or 12h")
        return p[1]
    if v is None:
        raise InputError(
            f"{option} {text}: a duration needs a time axis, but x column {xy.x_name!r} holds "
            f"numbers {NUMBERS_HINT}"
        )
    if integer and INT.match(text) and xy.x.dtype.kind in "iu":
        return int(text)
    return v


def rolling_request(args: argparse.Namespace, xy: XY) -> tuple[Any, Any, str, dict]:
    """``--before``/``--after`` on this axis: ``(before, after, description, bounds)``."""
    b = axis_value(args.before, "--before", xy, integer=True)
    a = 0 if args.after is None else axis_value(args.after, "--after", xy, integer=True)
    x = xy.x
    if xy.x_time:
        what = f"time windows (a - {args.before}, a + {args.after or 0}] at every point"
        bounds = {"lo": x - np.int64(b), "hi": x + np.int64(a)}
    else:
        what = f"x windows (a - {b!r}, a + {a!r}] at every point"
        xf = x.astype(np.float64)
        bounds = {"lo": xf - b, "hi": xf + a}
    return b, a, what, bounds


MAX_WINDOWS = 10_000_000  # a short --every over a long axis must stay a sane table


def dynamic_args(args: argparse.Namespace, xy: XY) -> tuple[dict[str, Any], str]:
    """``--every``/``--period``/``--offset`` on this axis, without its points: the keyword
    arguments of :func:`jaxsubset.ranges.dynamic` (``every`` first) and a description."""
    what = f"windows every {args.every}" + (f" of {args.period}" if args.period else "")
    what += f" from offset {args.offset}" if args.offset else ""
    if is_calendar(args):
        months = _months(args.every, "--every")
        per_months = months if args.period is None else _months(args.period, "--period")
        off = 0 if args.offset is None else axis_value(args.offset, "--offset", xy)
        if not 0 <= off < 28 * 86_400 * 10**9:
            raise InputError(
                f"--offset {args.offset}: with calendar windows the offset must be in [0, 28D) "
                "(a shift of the month starts)"
            )
        kw: dict[str, Any] = dict(
            every=f"{months}mo", period=f"{per_months}mo", offset=np.timedelta64(off, "ns")
        )
        return kw, "calendar " + what
    every = axis_value(args.every, "--every", xy, integer=True)
    per = every if args.period is None else axis_value(args.period, "--period", xy, integer=True)
    off = 0 if args.offset is None else axis_value(args.offset, "--offset", xy, integer=True)
    if not all(isinstance(v, int) for v in (every, per, off)):  # one fraction: all floats
        every, per, off = float(every), float(per), float(off)
    return dict(every=every, period=per, offset=off), what


def check_windows_axis(args: argparse.Namespace, xy: XY) -> None:
    """The window options against the axis of ``xy`` (its points are not read): units on a
    time axis, numbers on a numeric one, a calendar offset's range."""
    if getattr(args, "before", None) is not None:
        axis_value(args.before, "--before", xy, integer=True)
        if args.after is not None:
            axis_value(args.after, "--after", xy, integer=True)
    if getattr(args, "every", None) is not None:
        dynamic_args(args, xy)


def dynamic_request(args: argparse.Namespace, xy: XY) -> tuple[dict[str, Any], str, dict]:
    """``--every``/``--period``/``--offset`` on this axis: the keyword arguments of
    :func:`jaxsubset.ranges.dynamic` (``every`` first), a description and the bounds."""
    x = xy.x
    if x.shape[0] == 0:
        raise InputError("--every: the data hold no points")
    kw, what = dynamic_args(args, xy)
    if is_calendar(args):
        lo, hi = jaxsubset.dynamic_bounds(x.view("datetime64[ns]"), **kw)
        return kw, what, {"lo": lo.view(np.int64), "hi": hi.view(np.int64)}
    try:  # the library's windows (only x's first and last point are read: x may be mapped)
        lo, hi = jaxsubset.dynamic_bounds(x, **kw, max_windows=MAX_WINDOWS)
    except ValueError as e:
        raise InputError(f"--every {args.every} {reason(e)}") from None
    if not xy.x_time:  # the table's x bounds of a numeric axis are floats
        lo, hi = lo.astype(np.float64), hi.astype(np.float64)
    return kw, what, {"lo": lo, "hi": hi}


def window_ranges(args: argparse.Namespace, xy: XY) -> tuple[Any, str, dict[str, np.ndarray]]:
    """The in-memory :class:`jaxsubset.Ranges` of ``--before``/``--after`` or ``--every``."""
    if args.before is not None:
        b, a, what, bounds = rolling_request(args, xy)
        return jaxsubset.ranges.rolling(xy.x, before=b, after=a), what, bounds
    kw, what, bounds = dynamic_request(args, xy)
    x = xy.x.view("datetime64[ns]") if is_calendar(args) else xy.x
    every = kw.pop("every")
    r = jaxsubset.ranges.dynamic(x, every, **kw)
    if np.asarray(r.start).shape[0] != bounds["lo"].shape[0]:  # pragma: no cover - a bug
        raise RuntimeError("--every: the windows' bounds disagree with jaxsubset.dynamic's")
    return r, what, bounds


def wants_windows(args: argparse.Namespace) -> bool:
    return getattr(args, "before", None) is not None or getattr(args, "every", None) is not None
