"""Hopping and tumbling windows on x: polars' ``group_by_dynamic`` (``every``, ``period``,
``offset``), resolved to index ranges by the one resolver (:func:`select_ranges`)."""

import re
from typing import Any

import jax.numpy as jnp
import numpy as np

from ._axis import concrete_bound, time_kind
from ._ranges import Ranges, _to_subsets, select_ranges
from ._subsets import Subsets
from ._typing import ArrayLike
from ._validate import as_x, as_xy, check_closed, check_sorted_x, is_traced, static_int


_CALENDAR = re.compile(r"^\s*([0-9]+)\s*(mo|q|y)\s*$")
_MONTHS = {"mo": 1, "q": 3, "y": 12}


def _months(value: Any, time: str | None) -> int | None:
    """Calendar ``every``/``period`` on a time axis (polars' ``"1mo"``, ``"1q"``, ``"1y"``)."""
    m = _CALENDAR.match(value) if time is not None and isinstance(value, str) else None
    return None if m is None else int(m.group(1)) * _MONTHS[m.group(2)]


def _calendar_ranges(
    x: Any, every: int, period: int, offset: Any, closed: str, length: Any, func: str
) -> Ranges:
    """Windows of whole months: starts at the first point's month, truncated to a multiple of
    ``every`` months since 1970-01 (polars), plus a fixed ``offset``; each ``period`` months."""
    if is_traced((x, offset, length)):
        raise TypeError(f"{func}: calendar windows (months, years) need concrete `x` and `offset`")
    if period < 1 or every < 1:
        raise ValueError(f"{func}: calendar `every`/`period` must be >= 1 month")
    xc = np.asarray(x)
    if length is not None:
        xc = xc[: int(np.asarray(length))]
    if xc.size == 0:
        return select_ranges(x, np.zeros(0, np.int64), np.zeros(0, np.int64), closed=closed)
    off = int(offset)
    if not 0 <= off < 28 * 86400 * 10**9:  # polars adds months to the shifted date
        raise ValueError(
            f"{func}: with calendar windows `offset` must be in [0, 28D) (a shift of the month "
            f"starts), got {off} ns"
        )
    month = xc[[0, -1]].astype("datetime64[ns]").astype("datetime64[M]").astype(np.int64)
    m0 = (int(month[0]) // every) * every

    def ns(m: int) -> int:
        return int(np.datetime64(m, "M").astype("datetime64[ns]").astype(np.int64)) + off

    first = int(xc[0])
    while ns(m0) > first or (closed in ("right", "neither") and ns(m0) == first):
        m0 -= every
    k = 0
    while ns(m0 + k * every) <= int(xc[-1]):
        k += 1
    lo = np.asarray([ns(m0 + i * every) for i in range(k)], object)
    hi = np.asarray([ns(m0 + i * every + period) for i in range(k)], object)
    return select_ranges(x, lo, hi, closed=closed, length=length, _func=func)


def _step(value: Any, name: str, x: Any, func: str, time: str | None, positive: bool) -> Any:
    """``every``/``period``/``offset`` as an exact NumPy scalar (durations as int64 ns)."""
    if is_traced(value):
        return value
    if time is None and isinstance(value, str) and value.endswith("i"):
        value = int(value[:-1])  # polars' integer durations: "5i"
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
    return v


def _host_starts(xc: np.ndarray, every: Any, offset: Any, open_lo: bool) -> tuple[Any, int]:
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
        if s0 > lo or (open_lo and s0 == lo):
            s0 -= (-(-(s0 - lo) // e) or 1) * e
        return s0, (hi - s0) // e + 1
    flo, fhi, fe = float(xc[0]), float(xc[-1]), float(every)
    f0 = float(np.floor(flo / fe)) * fe + float(offset)
    if f0 > flo or (open_lo and f0 == flo):
        f0 -= (float(np.ceil((f0 - flo) / fe)) or 1.0) * fe
    return f0, int(np.floor((fhi - f0) / fe)) + 1


def _window_bounds(
    xc: np.ndarray, ev: Any, per: Any, off: Any, closed: str, num_windows: int | None
) -> tuple[Any, Any]:
    """The windows' ``(lo, hi)`` from concrete sorted ``x`` (only its ends are read): Python
    ints on integer axes, else float64; ``per`` may be traced (then ``hi`` is too)."""
    s0: Any
    s0, k = _host_starts(xc[[0, -1]] if xc.size else xc, ev, off, closed in ("right", "neither"))
    if num_windows is not None:
        k = num_windows
    if isinstance(s0, int) and not is_traced(per) and np.asarray(per).dtype.kind in "iuO":
        e, p = int(ev), int(per)
        lo = np.asarray([s0 + i * e for i in range(k)], object)
        hi = np.asarray([s0 + i * e + p for i in range(k)], object)
    else:
        lo = np.asarray(s0, np.float64) + np.arange(k) * np.float64(ev)
        hi = lo + (per if is_traced(per) else np.float64(per))
    return lo, hi


def _host_windows(
    ends: np.ndarray, every: Any, period: Any, offset: Any, closed: str, func: str
) -> tuple[Any, Any]:
    """``(lo, hi)`` of the windows of a numeric axis from its first and last point (what
    :func:`jaxsubset.stream` and :func:`jaxsubset.shard` resolve; concrete arguments only)."""
    closed = check_closed(closed, func)
    ev: Any = _step(every, "every", None, func, None, positive=True)
    per: Any = ev if period is None else _step(period, "period", None, func, None, positive=True)
    off: Any = _step(offset, "offset", None, func, None, positive=False)
    return _window_bounds(ends, ev, per, off, closed, None)


def dynamic_ranges(
    x: ArrayLike,
    every: ArrayLike,
    *,
    period: ArrayLike | None = None,
    offset: ArrayLike = 0,
    closed: str = "left",
    num_windows: int | None = None,
    length: ArrayLike | None = None,
    _func: str = "ranges.dynamic",
    _time: str | None = None,
) -> Ranges:
    """Index ranges of hopping/tumbling windows (see :func:`jaxsubset.dynamic`).

    Example:
        >>> import jax.numpy as jnp, jaxsubset
        >>> x = jnp.array([3, 4, 4, 7, 8, 12, 13])
        >>> r = jaxsubset.ranges.dynamic(x, 5)  # [0, 5), [5, 10), [10, 15)
        >>> r.start.tolist(), r.count.tolist()
        ([0, 3, 5], [3, 2, 2])
    """
    closed = check_closed(closed, _func)
    tk = _time or time_kind(x)
    if num_windows is not None:
        num_windows = static_int(num_windows, "num_windows", _func, minimum=0)
    x = as_x(x, _func)
    check_sorted_x(x, _func)
    cal = _months(every, tk)
    if cal is not None:
        pm = cal if period is None else _months(period, tk)
        if pm is None:
            raise ValueError(
                f"{_func}: with a calendar `every` ({every!r}), `period` must be calendar too "
                f"(e.g. '2mo'), got {period!r}"
            )
        off_ns = _step(offset, "offset", x, _func, tk, positive=False)
        return _calendar_ranges(x, cal, pm, off_ns, closed, length, _func)
    ev: Any = _step(every, "every", x, _func, tk, positive=True)
    per: Any = ev if period is None else _step(period, "period", x, _func, tk, positive=True)
    off: Any = _step(offset, "offset", x, _func, tk, positive=False)
    concrete = not is_traced((x, ev, off, length))
    if concrete:
        xc = np.asarray(x)
        if length is not None:
            xc = xc[: int(np.asarray(length))]
        lo, hi = _window_bounds(xc, ev, per, off, closed, num_windows)
        return select_ranges(x, lo, hi, closed=closed, length=length, _func=_func)
    if num_windows is None:
        raise TypeError(
            f"{_func}: the number of windows sets an array shape: pass `num_windows` (a static "
            "Python int) when `x`, `every`, `offset` or `length` is traced"
        )
    open_lo = closed in ("right", "neither")
    dt = jnp.promote_types(x.dtype, jnp.asarray(ev).dtype)
    ej = jnp.asarray(ev).astype(dt)
    first = x[0].astype(dt)
    if jnp.issubdtype(dt, jnp.integer):
        s0 = (first // ej) * ej + jnp.asarray(off).astype(dt)
        back = jnp.maximum(-((first - s0) // ej), 1 if open_lo else 0)
        s0 = jnp.where((s0 > first) | (open_lo & (s0 == first)), s0 - back * ej, s0)
    else:
        s0 = jnp.floor(first / ej) * ej + jnp.asarray(off).astype(dt)
        back = jnp.maximum(jnp.ceil((s0 - first) / ej), 1.0 if open_lo else 0.0)
        s0 = jnp.where((s0 > first) | (open_lo & (s0 == first)), s0 - back * ej, s0)
    lo = s0 + jnp.arange(num_windows, dtype=dt) * ej
    hi = lo + jnp.asarray(per).astype(dt)
    return select_ranges(x, lo, hi, closed=closed, length=length, _func=_func)


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
    (polars' ``"1w"`` starts weeks on Monday: ``every="7D", offset="4D"``). Calendar windows,
    polars' ``"1mo"``, ``"1q"``, ``"1y"`` (``"3mo"``...) for ``every`` and then ``period``, start
    on the first of a month (a multiple of ``every`` months since 1970-01) plus a fixed
    ``offset`` in ``[0, 28D)`` (concrete ``x`` only). polars' integer strings (``"5i"``)
    are accepted on numeric axes.

    Args:
        x: ``(N,)`` sorted sample positions (numbers or datetime64).
        y: ``(N, *channels)`` values.
        every: window spacing (> 0); traced only with ``num_windows``.
        capacity: static Python int, the padded length of every window.
        period: window length (> 0, default ``every``; may be traced).
        offset: shift of the window starts (may be negative; traced only with
            ``num_windows``).
        closed: ``"left"`` (default), ``"right"``, ``"both"`` or ``"neither"``.
        num_windows: static Python int: the number of windows. Computed from concrete ``x``
            when omitted; required when ``x``, ``every``, ``offset`` or ``length`` is traced
            (it sets the output shape, as ``bins`` does for edges).
        length: optional number of real points (see :func:`jaxsubset.pack`).

    Returns:
        :class:`Subsets` with batch shape ``(num_windows,)``.

    Raises:
        ValueError: if ``every`` or ``period`` is not > 0, or concrete ``x`` is unsorted.
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
    r = dynamic_ranges(
        x,
        every,
        period=period,
        offset=offset,
        closed=closed,
        num_windows=num_windows,
        length=length,
        _func="dynamic",
        _time=tk,
    )
    return _to_subsets(x, y, r, capacity)
