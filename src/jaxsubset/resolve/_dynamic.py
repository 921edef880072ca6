"""Hopping and tumbling windows on x: polars' ``group_by_dynamic`` (``every``, ``period``,
``offset``), resolved to index ranges by the one resolver (:func:`select_ranges`)."""

import re
from typing import Any

import jax.numpy as jnp
import numpy as np

from .._core import (
    ArrayLike,
    argument_guard,
    as_x,
    as_xy,
    check_closed,
    check_sorted_x,
    concrete_bound,
    concrete_only,
    datetime_to_ns,
    naive_utc,
    now_or_traced,
    static_int,
    time_kind,
    timedelta_to_ns,
)
from .._subsets import Subsets
from ._buckets import eager
from ._exact import exact_positions, exact_subsets
from ._hop import bound_dtype, check_step, float_count, float_windows, int_window_keys
from ._index import bucketed_gather, gather
from ._keys import sides, traced_key
from ._type import Ranges, real_length, to_subsets
from ._xranges import resolve_select, xrange


CALENDAR = re.compile(r"^\s*([0-9]+)\s*(mo|q|y)\s*$")
MONTHS = {"mo": 1, "q": 3, "y": 12}
DAY = 86400 * 10**9  # nanoseconds


def _months(value: Any, time: str | None) -> int | None:
    """Calendar ``every``/``period`` on a time axis (polars' ``"1mo"``, ``"1q"``, ``"1y"``)."""
    m = CALENDAR.match(value) if time is not None and isinstance(value, str) else None
    return None if m is None else int(m.group(1)) * MONTHS[m.group(2)]


def calendar_bounds(
    ends: np.ndarray,
    every: int,
    period: int,
    offset: Any,
    closed: str,
    func: str,
    max_windows: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Windows of whole months from the first and last point (int64 ns): starts at the first
    point's month, truncated to a multiple of ``every`` months since 1970-01 (polars), plus a
    fixed ``offset``; each ``period`` months. ``(lo, hi)`` as Python ints (object arrays)."""
    if period < 1 or every < 1:
        raise ValueError(f"{func}: calendar `every`/`period` must be >= 1 month")
    if ends.size == 0:
        return np.zeros(0, object), np.zeros(0, object)
    off = int(offset)
    if not 0 <= off < 28 * 86400 * 10**9:  # polars adds months to the shifted date
        raise ValueError(
            f"{func}: with calendar windows `offset` must be in [0, 28D) (a shift of the month "
            f"starts), got {off} ns"
        )
    month = ends[[0, -1]].astype("datetime64[ns]").astype("datetime64[M]").astype(np.int64)
    m0 = (int(month[0]) // every) * every

    def ns(m: int) -> int:  # exact Python ints: months before 1677-10 never wrap around int64
        return int(np.datetime64(m, "M").astype("datetime64[D]").astype(np.int64)) * DAY + off

    first = int(ends[0])
    while ns(m0) > first or (closed in ("right", "neither") and ns(m0) == first):
        m0 -= every
    k = 0  # at most 12 * 585 months between two int64 nanosecond dates
    while ns(m0 + k * every) <= int(ends[-1]):
        k += 1
    check_count(k, max_windows, func)
    lo = np.asarray([ns(m0 + i * every) for i in range(k)], object)
    hi = np.asarray([ns(m0 + i * every + period) for i in range(k)], object)
    return lo, hi


def calendar_ranges(
    x: Any, every: int, period: int, offset: Any, closed: str, length: Any, func: str
) -> Ranges:
    """Ranges of the calendar windows (:func:`calendar_bounds`) of concrete ``x``."""
    concrete_only(
        (x, offset, length),
        f"{func}: calendar windows (months, years) need concrete `x` and `offset`",
    )
    xc = np.asarray(x)
    if length is not None:
        xc = xc[: int(np.asarray(length))]
    if xc.size == 0:
        if period < 1 or every < 1:
            raise ValueError(f"{func}: calendar `every`/`period` must be >= 1 month")
        return resolve_select(x, np.zeros(0, np.int64), np.zeros(0, np.int64), closed=closed)
    lo, hi = calendar_bounds(xc[[0, -1]], every, period, offset, closed, func)
    return resolve_select(x, lo, hi, closed=closed, length=length, func=func)


class TooManyWindows(ValueError):
    """More windows than ``max_windows``; ``reason`` is the message without the prefix."""

    def __init__(self, func: str, reason: str) -> None:
        super().__init__(f"{func}: `every` {reason}")
        self.reason = reason


# more windows than any index holds in 32-bit mode (and bounds of some 32 GiB): a mistake
MAX_WINDOWS = 2**31 - 1


def check_count(k: int, max_windows: int | None, func: str) -> None:
    if k > (MAX_WINDOWS if max_windows is None else min(max_windows, MAX_WINDOWS)):
        raise TooManyWindows(func, f"gives {k} windows over the data; choose a longer one")


def step(value: Any, name: str, x: Any, func: str, time: str | None, positive: bool) -> Any:
    """``every``/``period``/``offset`` as an exact NumPy scalar (durations as int64 ns).

    A traced value cannot be checked here: it comes back guarded by a run-time check
    (:func:`error_if`) with the same rules, so a zero, negative or NaN ``every`` never makes
    windows silently.
    """
    return now_or_traced(
        value,
        lambda v: host_step(v, name, x, func, time, positive),
        lambda v: guard_step(v, name, func, positive),
    )


def host_step(value: Any, name: str, x: Any, func: str, time: str | None, positive: bool) -> Any:
    """:func:`step` of a concrete value."""
    if time is None and isinstance(value, str) and value.endswith("i"):
        value = int(value[:-1])  # polars' integer durations: "5i"
    if time is not None and type(value) is int and value == 0:
        return np.asarray(0, np.int64)  # the default `offset=0`: no shift, on any axis
    sign = 1
    if not positive and isinstance(value, str) and value.strip().startswith("-"):
        sign, value = -1, value.strip()[1:]  # a negative offset: "-3h"
    v = concrete_bound(value, name, x, func, time, width=True)
    if sign < 0:
        v = -v
    if v.ndim != 0:
        raise ValueError(f"{func}: `{name}` must be a scalar, got shape {v.shape}")
    if positive and not v > 0:
        raise ValueError(f"{func}: `{name}` must be > 0, got {v.item()!r}")
    if name != "period" and v.dtype.kind == "f" and not np.isfinite(v):
        raise ValueError(f"{func}: `{name}` must be finite, got {v.item()!r}")
    return v


def guard_step(value: Any, name: str, func: str, positive: bool) -> Any:
    """A traced ``every``/``period``/``offset`` guarded by the rules :func:`step` applies."""
    v = jnp.asarray(value)
    if not jnp.issubdtype(v.dtype, jnp.number):
        return value
    finite = name != "period" and jnp.issubdtype(v.dtype, jnp.inexact)
    bad = jnp.zeros(v.shape, bool)
    if positive:
        bad = ~(v > 0)
    if finite:
        bad = bad | ~jnp.isfinite(v)
    rule = " and ".join(r for r, on in (("> 0", positive), ("finite", finite)) if on)
    return argument_guard(v, bad, func, name, rule) if rule else value


def steps(
    every: Any, period: Any, offset: Any, x: Any, func: str, time: str | None
) -> tuple[bool, Any, Any, Any]:
    """``(calendar, every, period, offset)``: calendar windows (months, on a time axis) give
    ``every``/``period`` in months, else the exact steps of :func:`step`; ``offset`` always
    as :func:`step` (durations as int64 ns)."""
    months = _months(every, time)
    if months is not None:
        per_months = months if period is None else _months(period, time)
        if per_months is None:
            raise ValueError(
                f"{func}: with a calendar `every` ({every!r}), `period` must be calendar too "
                f"(e.g. '2mo'), got {period!r}"
            )
        return True, months, per_months, step(offset, "offset", x, func, time, positive=False)
    ev = step(every, "every", x, func, time, positive=True)
    per = ev if period is None else step(period, "period", x, func, time, positive=True)
    off = step(offset, "offset", x, func, time, positive=False)
    if time == "M" and isinstance(every, str) and WEEKS.match(every):
        off = off + MONDAY  # polars' "1w": weeks start on Monday (1970-01-05), not Thursday
    return False, ev, per, off


# polars' week unit, lower-case as all of its duration strings ("2w"); "7D", "1W" (the
# command's spelling) stay fixed durations counted from the epoch, as polars' "7d"
WEEKS = re.compile(r"^\s*[0-9]+\s*w\s*$")
MONDAY = np.int64(4 * DAY)  # 1970-01-01 was a Thursday


def host_starts(
    xc: np.ndarray, every: Any, offset: Any, open_lo: bool, func: str = "dynamic"
) -> tuple[Any, int]:
    """The first window start and the number of windows, from concrete sorted ``x``.

    As polars (``start_by="window"``): the first point truncated to a multiple of ``every``,
    plus ``offset``, moved back by whole ``every`` while it lies past the first point (or on
    it, for windows open at their start: ``open_lo``); windows start every ``every`` up to the
    last point. Integers (time axes too) in Python ints.
    """
    if xc.size == 0:
        return 0, 0
    exact = (np.asarray(every).dtype.kind in "iuO") and (np.asarray(offset).dtype.kind in "iuO")
    if xc.dtype.kind in "iu" and exact:  # a fractional offset: the float rule, never truncated
        lo, hi, e, off = int(xc[0]), int(xc[-1]), int(every), int(offset)
        s0 = (lo // e) * e + off
        if s0 > lo or (open_lo and s0 == lo):  # back to <= lo (< lo for an open start)
            s0 -= ((s0 - lo) // e + 1 if open_lo else -(-(s0 - lo) // e)) * e
        return s0, (hi - s0) // e + 1
    dt = bound_dtype(xc.dtype, every, offset)  # the traced road's dtype and arithmetic
    check_step(every, dt, func)
    f0, _ = float_windows(xc[0], every, offset, open_lo, 0, dt, np)
    return f0, float_count(f0, xc[-1], every, dt)


def window_bounds(
    xc: np.ndarray,
    ev: Any,
    per: Any,
    off: Any,
    closed: str,
    num_windows: int | None,
    func: str = "dynamic",
    max_windows: int | None = None,
) -> tuple[Any, Any]:
    """The windows' ``(lo, hi)`` from concrete sorted ``x`` (only its ends are read): Python
    ints on integer axes, else float64; ``per`` may be traced (then ``hi`` is too)."""
    s0: Any
    if xc.dtype.kind == "f" and xc.size and not np.isfinite(xc[[0, -1]]).all():
        bad = xc[0] if not np.isfinite(xc[0]) else xc[-1]
        raise ValueError(
            f"{func}: `x` holds {bad.item()!r}: hopping windows need finite positions (windows "
            "up to it would be infinitely many); drop or clip such points first"
        )
    ends = xc[[0, -1]] if xc.size else xc
    s0, k = host_starts(ends, ev, off, closed in ("right", "neither"), func)
    if num_windows is not None:
        k = num_windows
    check_count(k, max_windows, func)
    whole = now_or_traced(per, lambda p: np.asarray(p).dtype.kind in "iuO", lambda _: False)
    if isinstance(s0, int) and whole:
        e, p = int(ev), int(per)
        lo = np.asarray([s0 + i * e for i in range(k)], object)
        hi = np.asarray([s0 + i * e + p for i in range(k)], object)
    else:
        dt = bound_dtype(xc.dtype, ev, off, per)
        first = xc[0] if xc.size else np.zeros((), xc.dtype)
        _, lo = float_windows(first, ev, off, closed in ("right", "neither"), k, dt, np)
        lo = np.asarray(lo, dt)
        hi = lo + now_or_traced(per, lambda p: np.asarray(p).astype(dt))
    return lo, hi


def host_windows(
    ends: np.ndarray, every: Any, period: Any, offset: Any, closed: str, func: str
) -> tuple[Any, Any]:
    """``(lo, hi)`` of the windows of a numeric axis from its first and last point (what
    :func:`jaxsubset.stream` and :func:`jaxsubset.shard` resolve; concrete arguments only)."""
    closed = check_closed(closed, func)
    _, ev, per, off = steps(every, period, offset, None, func, None)
    return window_bounds(ends, ev, per, off, closed, None, func)


def dynamic_ranges(
    x: ArrayLike,
    every: ArrayLike,
    *,
    period: ArrayLike | None = None,
    offset: ArrayLike = 0,
    closed: str = "left",
    num_windows: int | None = None,
    length: ArrayLike | None = None,
) -> Ranges:
    """Index ranges of hopping/tumbling windows (see :func:`jaxsubset.dynamic`).

    Example:
        >>> import jax.numpy as jnp, jaxsubset
        >>> x = jnp.array([3, 4, 4, 7, 8, 12, 13])
        >>> r = jaxsubset.ranges.dynamic(x, 5)  # [0, 5), [5, 10), [10, 15)
        >>> r.start.tolist(), r.count.tolist()
        ([0, 3, 5], [3, 2, 2])
    """
    return resolve_dynamic(
        x,
        every,
        period=period,
        offset=offset,
        closed=closed,
        num_windows=num_windows,
        length=length,
        func="ranges.dynamic",
    )


def host_bounds(
    x: Any, ev: Any, per: Any, off: Any, closed: str, length: Any, num: int | None, func: str
) -> tuple[Any, Any]:
    """``(lo, hi)`` of the windows of concrete ``x`` (its ``length`` real points) and steps."""
    xc = np.asarray(x)
    if length is not None:
        xc = xc[: int(np.asarray(length))]
    return window_bounds(xc, ev, per, off, closed, num, func)


@exact_positions(computes=True, others=("every", "period", "offset"))
def resolve_dynamic(
    x: ArrayLike,
    every: ArrayLike,
    *,
    period: ArrayLike | None = None,
    offset: ArrayLike = 0,
    closed: str = "left",
    num_windows: int | None = None,
    length: ArrayLike | None = None,
    func: str = "ranges.dynamic",
    time: str | None = None,
) -> Ranges:
    """:func:`dynamic_ranges` with the caller's name (``func``) for messages."""
    closed = check_closed(closed, func)
    tk = time or time_kind(x)
    if num_windows is not None:
        num_windows = static_int(num_windows, "num_windows", func, minimum=0)
    x = as_x(x, func)
    check_sorted_x(x, func)
    calendar, ev, per, off = steps(every, period, offset, x, func, tk)
    if calendar:
        return calendar_ranges(x, ev, per, off, closed, length, func)
    bounds = now_or_traced(
        (x, ev, off, length),
        lambda _: host_bounds(x, ev, per, off, closed, length, num_windows, func),
        lambda _: None,
    )
    if bounds is not None:  # every position concrete: the windows resolved on the host
        return resolve_select(x, *bounds, closed=closed, length=length, func=func)
    if num_windows is None:
        raise TypeError(
            f"{func}: the number of windows sets an array shape: pass `num_windows` (a static "
            "Python int) when `x`, `every`, `offset` or `length` is traced"
        )
    open_lo = closed in ("right", "neither")
    # one dtype for every bound (a fractional offset or period on an integer axis makes the
    # bounds float, as eagerly, never truncated) and the eager road's arithmetic (_hop)
    ev, off, per = (now_or_traced(v, jnp.asarray) for v in (ev, off, per))
    dt = bound_dtype(x.dtype, ev, off, per)
    if np.dtype(dt).kind in "iu":
        lo_v, hi_v = int_window_keys(x[0], ev, off, per, open_lo, num_windows, dt)
        lo_side, hi_side = sides(closed)
        n_real = real_length(length, x.shape[0], func)
        lo_k, hi_k = (
            flagged_key(v, np.dtype(x.dtype), side)
            for v, side in ((lo_v, lo_side), (hi_v, hi_side))
        )
        return xrange(x, lo_k, hi_k, closed, n_real)
    check_step(ev, dt, func)
    _, lo = float_windows(x[0], ev, off, open_lo, num_windows, dt, jnp)
    hi = lo + jnp.asarray(per).astype(dt)
    return resolve_select(x, lo, hi, closed=closed, length=length, func=func)


def flagged_key(bound: tuple[Any, Any, Any], xdt: np.dtype, side: str) -> tuple[Any, Any, Any]:
    """A traced bound ``(value, below, above)`` as a key of x's dtype, the flags kept."""
    value, below, above = bound
    key, below2, above2 = traced_key(value, xdt, side)
    below = below if below2 is None else below | below2
    above = above if above2 is None else above | above2
    return key, below & ~above, above


@exact_subsets(resolve_dynamic, gather, computes=True, others=("every", "period", "offset"))
def dynamic(
    x: ArrayLike,
    y: ArrayLike,
    every: ArrayLike,
    *,
    capacity: int,
    period: ArrayLike | None = None,
    offset: ArrayLike = 0,
    closed: str = "left",
    num_windows: int | None = None,
    length: ArrayLike | None = None,
) -> Subsets:
    """Hopping/tumbling windows on x with polars' ``group_by_dynamic`` semantics.

    Window ``k`` starts at ``s_k = s_0 + k * every`` and holds the points with
    ``s_k <= x < s_k + period`` (``closed="left"``, polars' default; ``"right"``
    ``s_k < x <= s_k + period``, ``"both"``, ``"neither"`` = polars' ``"none"``). ``period``
    defaults to ``every`` (tumbling windows); ``period > every`` overlaps (hopping), ``period
    < every`` leaves gaps. As polars' ``start_by="window"``: ``s_0`` is the first point
    truncated down to a multiple of ``every`` plus ``offset``, moved back by whole ``every``
    while it lies past the first point (or on it, for ``closed`` "right"/"neither": the first
    window then holds the first point, as polars); the last window is the last start
    ``<= x[-1]``. Unlike polars, empty windows are kept (count 0), so window ``k`` is always
    ``s_0 + k * every``.

    On a datetime64 axis ``every``/``period``/``offset`` are fixed durations (``"1D"``,
    ``"6h"``, ``timedelta64``) and multiples of ``every`` are counted from the Unix epoch
    (``"7D"``: 7-day windows from Thursday 1970-01-01, as polars' ``"7d"``); polars' week
    strings ``"1w"``, ``"2w"`` start on Monday, as polars (``every="7D", offset="4D"``;
    an ``offset`` is added to that). Calendar windows,
    polars' ``"1mo"``, ``"1q"``, ``"1y"`` (``"3mo"``...) for ``every`` and then ``period``, start
    on the first of a month (a multiple of ``every`` months since 1970-01) plus a fixed
    ``offset`` in ``[0, 28D)`` (concrete ``x`` only). polars' integer strings (``"5i"``)
    are accepted on numeric axes.

    Args:
        x: ``(N,)`` sorted sample positions (numbers or datetime64).
        y: ``(N, *channels)`` values.
        every: window spacing (> 0, finite); traced only with ``num_windows``.
        capacity: static Python int, the padded length of every window.
        period: window length (> 0, default ``every``; may be traced).
        offset: shift of the window starts (finite, may be negative; traced only with
            ``num_windows``). Traced ``every``/``period``/``offset`` that break these rules
            raise at run time (a check, see :func:`jaxsubset.checked`).
        closed: ``"left"`` (default), ``"right"``, ``"both"`` or ``"neither"``.
        num_windows: static Python int: the number of windows. Computed from concrete ``x``
            when omitted; required when ``x``, ``every``, ``offset`` or ``length`` is traced
            (it sets the output shape, as ``bins`` does for edges).
        length: optional number of real points (see :func:`jaxsubset.pack`).

    Returns:
        :class:`Subsets` with batch shape ``(num_windows,)``.

    Raises:
        ValueError: if ``every`` or ``period`` is not > 0, ``every`` or ``offset`` is not
            finite, they give more than ``2**31 - 1`` windows, or concrete ``x`` is unsorted.
        TypeError: if ``num_windows`` is needed (traced inputs) and missing.

    Example:
        >>> import jax.numpy as jnp, jaxsubset
        >>> x = jnp.array([3, 4, 4, 7, 8, 12, 13])
        >>> s = jaxsubset.dynamic(x, 1.0 * x, 5, capacity=4)
        >>> s.count.tolist(), s.sum().tolist()
        ([3, 2, 2], [11.0, 15.0, 25.0])
        >>> jaxsubset.dynamic(x, x, 3, period=7, capacity=8).count.tolist()  # hopping
        [5, 3, 2, 2]
    """
    capacity = static_int(capacity, "capacity", "dynamic")
    tk = time_kind(x)
    x, y = as_xy(x, y, "dynamic")
    r = resolve_dynamic(
        x,
        every,
        period=period,
        offset=offset,
        closed=closed,
        num_windows=num_windows,
        length=length,
        func="dynamic",
        time=tk,
    )
    if eager(length, x, y, r) and x.shape[0] > 0:  # one program per bucket of shapes
        return bucketed_gather(x, y, r.start, r.count, capacity)
    return to_subsets(x, y, r, capacity)


def dynamic_bounds(
    x: ArrayLike,
    every: Any,
    *,
    period: Any = None,
    offset: Any = 0,
    closed: str = "left",
    max_windows: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The x bounds ``(lo, hi)`` of :func:`jaxsubset.dynamic`'s windows, computed on the host.

    Window ``k`` holds the points with ``lo[k] <= x < hi[k]`` (``closed="left"``; the other
    ``closed`` as in :func:`jaxsubset.dynamic`): the windows that ``jaxsubset.dynamic``,
    ``jaxsubset.ranges.dynamic`` and ``jaxsubset.stream(..., "dynamic")`` cut for the same
    arguments (one computation: polars' ``group_by_dynamic`` start rule, calendar windows
    ``"1mo"``/``"1q"``/``"1y"`` on a datetime64 axis, empty windows kept), for labelling them.
    Only the first and the last point of ``x`` are read, so a memory-mapped ``x`` stays on
    disk; ``x`` is taken as sorted (the functions cutting the windows check it).

    Args:
        x: ``(N,)`` sorted positions (numbers or datetime64), concrete; ``N = 0`` gives no
            window.
        every: window spacing (> 0), as :func:`jaxsubset.dynamic`'s.
        period: window length (> 0, default ``every``).
        offset: shift of the window starts.
        closed: ``"left"`` (default), ``"right"``, ``"both"`` or ``"neither"``: which bound
            the first window must lie beyond (as :func:`jaxsubset.dynamic`).
        max_windows: refuse more windows than this (``None``: no limit), checked before any
            bound is made.

    Returns:
        ``(lo, hi)``, two ``(K,)`` ``numpy.ndarray``: ``datetime64[ns]`` for datetime64 ``x``
        (``timedelta64[ns]`` for timedelta64), int64 for integer ``x`` with integer
        ``every``/``period``/``offset`` (float64 if a bound lies beyond int64), else float64.
        It needs no 64-bit JAX mode (NumPy only).

    Raises:
        ValueError: ``every``/``period`` not > 0, ``every``/``offset`` not finite, a calendar
            ``offset`` outside ``[0, 28D)``, more than ``max_windows`` (or ``2**31 - 1``)
            windows (with a ``reason`` attribute: the message without the function's prefix),
            a bound outside 1677-09-22 .. 2262-04-11 on a time axis, NaT in ``x``.
        TypeError: traced ``x`` (inside ``jit``), a duration on a numeric axis.

    Example:
        >>> import numpy as np, jaxsubset
        >>> lo, hi = jaxsubset.dynamic_bounds(np.array([3, 4, 4, 7, 8, 12, 13]), 5)
        >>> lo.tolist(), hi.tolist()
        ([0, 5, 10], [5, 10, 15])
        >>> t = np.array(["2001-01-30", "2001-03-02"], "datetime64[D]")
        >>> lo, hi = jaxsubset.dynamic_bounds(t, "1mo", period="2mo")
        >>> lo.astype("datetime64[D]").astype(str).tolist()
        ['2001-01-01', '2001-02-01', '2001-03-01']
    """
    func = "dynamic_bounds"
    concrete_only(
        x,
        f"{func}: the bounds are computed on the host from concrete `x`, but `x` is traced "
        "(inside jit/vmap): compute them before, outside the traced function",
    )
    for name, v in (("every", every), ("period", period), ("offset", offset)):
        concrete_only(
            v,
            f"{func}: the bounds are computed on the host, but `{name}` is traced (inside "
            "jit/vmap): pass a concrete value, or call jaxsubset.dynamic/ranges.dynamic "
            "with `num_windows` under jit",
        )
    closed = check_closed(closed, func)
    if max_windows is not None:
        max_windows = static_int(max_windows, "max_windows", func)
    tk = time_kind(x)
    arr = np.asarray(naive_utc(x))
    if arr.ndim != 1:
        raise ValueError(f"{func}: `x` must be 1-D, got shape {arr.shape}")
    ends = arr[[0, -1]] if arr.shape[0] else arr[:0]
    if tk == "M":
        ends = datetime_to_ns(ends, "x", func)
    elif tk == "m":
        ends = timedelta_to_ns(ends, "x", func)
    elif ends.dtype.kind not in "biuf":
        raise TypeError(f"{func}: `x` must be numbers or datetime64, got dtype {arr.dtype}")
    calendar, ev, per, off = steps(every, period, offset, None, func, tk)
    if calendar:
        lo, hi = calendar_bounds(ends, ev, per, off, closed, func, max_windows)
    else:
        lo, hi = window_bounds(ends, ev, per, off, closed, None, func, max_windows)
    out = []
    for v in (lo, hi):
        v = np.asarray(v)
        if v.dtype.kind == "f":  # computed in the windows' own dtype, exact in float64
            v = v.astype(np.float64)
        if v.dtype == object or v.dtype.kind in "iu":
            try:
                v = np.asarray(v.tolist(), np.int64).reshape(v.shape)
            except OverflowError:
                if tk is not None:
                    raise ValueError(
                        f"{func}: a window bound lies beyond the int64 nanoseconds of a time "
                        "axis (1677-09-22 .. 2262-04-11)"
                    ) from None
                v = v.astype(np.float64)  # numbers past int64 (the windows saturate there)
        if tk is not None:
            v = v.view(f"{'datetime64' if tk == 'M' else 'timedelta64'}[ns]")
        out.append(v)
    return out[0], out[1]
