"""Rolling x-width window statistics with pandas offset-window semantics."""

from collections.abc import Sequence

import jax.numpy as jnp
import numpy as np

from ._kernels import _float_dtype
from ._ranges import Ranges, _bound_array, rolling_ranges
from ._rolling_kernels import _rolling_per_point, _window_bounds
from ._stats import _as_y, _check_statistic, _raise_on_nan, _range_stats, _static_capacity
from ._time import time_kind
from ._typing import Array, ArrayLike
from ._validate import as_x, check_closed, check_nan_policy, is_traced, static_int


# ---------------------------------------------------------------------------- rolling windows
ROLLING_STATISTICS = ("count", "sum", "mean", "var", "std", "min", "max", "median")


def rolling_statistic(
    x: ArrayLike,
    y: ArrayLike,
    width: ArrayLike,
    statistic: str | Sequence[str] = "mean",
    *,
    at: ArrayLike | None = None,
    closed: str = "right",
    min_periods: int = 1,
    ddof: int = 1,
    capacity: int | None = None,
    nan_policy: str = "omit",
) -> Array | dict[str, Array]:
    """Rolling x-width window statistics with pandas offset-window semantics, in O(N log N).

    Equals ``pandas.Series(y, index=x).rolling(width, closed=closed,
    min_periods=min_periods).<statistic>()`` for an offset (time-like) window: the window of
    point ``i`` holds the points with ``x[i] - width < x <= x[i]`` (``closed="right"``), and
    with ties in ``x`` only the points up to ``i`` itself (as pandas); NaN values are skipped
    (the default ``nan_policy="omit"``, pandas' behaviour) and ``count`` counts the others;
    fewer than ``min_periods`` of them gives NaN. With ``at``, one window ends at each anchor
    instead (every point at the anchor included).

    Args:
        x: ``(N,)`` sorted sample positions: numbers, or a time axis as ``numpy.datetime64``
            (converted once to exact int64 nanoseconds; needs JAX's 64-bit mode) or as integer
            nanoseconds.
        y: ``(N, *channels)`` values.
        width: window width in x units (scalar, may be traced); on a datetime64 axis a
            duration: ``numpy.timedelta64`` or a string such as ``"7D"``, ``"1h"`` (a plain
            number there is a TypeError: it would silently mean nanoseconds).
        statistic: ``"count"``, ``"sum"``, ``"mean"``, ``"var"``, ``"std"``, ``"min"``,
            ``"max"``, ``"median"``, or a tuple/list of them (then a dict is returned).
        at: optional ``(*batch)`` window end positions (dates on a datetime64 axis); default
            ``x`` (one window per point).
        closed: ``"right"`` (default), ``"left"``, ``"both"`` or ``"neither"``, as pandas.
        min_periods: static int >= 0, the fewest non-NaN points that give a result.
        ddof: static delta degrees of freedom of ``"var"``/``"std"`` (pandas' default 1).
        capacity: static padded window length, only for ``"median"`` (see
            :func:`range_statistic`).
        nan_policy: ``"omit"`` (default, as pandas): NaN readings are skipped per channel.
            ``"propagate"``: a window holding a NaN gives NaN, and ``"count"`` (and
            ``min_periods``) count every point of the window. ``"raise"``: ValueError if ``y``
            holds NaN (at run time under ``jit``).

    Returns:
        ``(N, *channels)`` (or ``(*batch, *channels)`` with ``at``) float, or a dict of them.

    Example:
        >>> import jax.numpy as jnp, jaxsubset
        >>> x = jnp.array([0.0, 1.0, 2.0, 5.0, 6.0])
        >>> y = jnp.array([1.0, 2.0, 3.0, 4.0, 5.0])
        >>> jaxsubset.rolling_statistic(x, y, 2.0, "sum").tolist()
        [1.0, 3.0, 5.0, 4.0, 9.0]
        >>> jaxsubset.rolling_statistic(x, y, 2.0, "std", min_periods=2).tolist()
        [nan, 0.707..., 0.707..., nan, 0.707...]
    """
    func = "rolling_statistic"
    single = isinstance(statistic, str)
    names = (statistic,) if single else statistic
    if not isinstance(names, tuple | list) or not names:
        raise TypeError(
            f"{func}: `statistic` must be a name or a non-empty tuple/list of names, "
            f"got {statistic!r}"
        )
    for s in names:
        _check_statistic(s, func)
    stats = tuple(names)
    closed = check_closed(closed, func)
    min_periods = static_int(min_periods, "min_periods", func, minimum=0)
    ddof = static_int(ddof, "ddof", func, minimum=0)
    nan_policy = check_nan_policy(nan_policy, func)
    tk = time_kind(x)
    x = as_x(x, func)
    y = _as_y(y, func)
    if y.shape[0] != x.shape[0]:
        raise ValueError(
            f"{func}: `x` and `y` must have the same length along the first axis, "
            f"got len(x)={x.shape[0]} and y.shape={tuple(y.shape)}"
        )
    if nan_policy == "raise":
        _raise_on_nan(y, func, "y")
    if not is_traced(width) and not isinstance(width, str) and np.ndim(width) != 0:
        raise ValueError(f"{func}: `width` must be a scalar, got shape {np.shape(width)}")
    # a time axis: "7D" / timedelta64 widths and datetime64 anchors as int64 nanoseconds
    if tk is not None and not is_traced(width) and not isinstance(width, str):
        if time_kind(width) is None:  # NumPy would take a bare number as a generic duration
            raise TypeError(
                f"{func}: `width` must be a duration on a time axis (numpy.timedelta64 or a "
                f"string such as '7D'), got {width!r}; a plain number would be read as "
                "nanoseconds"
            )
    width = _bound_array(width, "width", x, func, tk, width=True)
    if at is not None:
        at = _bound_array(at, "at", x, func, tk)
    r = rolling_ranges(x, width, at=at if at is not None else x[:0], closed=closed, _func=func)
    y2 = y.reshape(y.shape[0], int(np.prod(y.shape[1:])))
    omit = nan_policy == "omit"
    ch = tuple(y.shape[1:])
    if at is None:
        # one window per point: sorted queries (or a regular grid), prefix sums without a scan
        w = width if is_traced(width) else jnp.asarray(width)
        fast = tuple(s for s in stats if s != "median")
        res = _rolling_per_point(x, w, y2, closed, fast, ddof, omit, min_periods) if fast else {}
        if "median" in stats:
            start, stop = _window_bounds(x, w, closed)
            end = jnp.arange(1, x.shape[0] + 1, dtype=start.dtype) if stop is None else stop
            start = jnp.minimum(start, end)
            res["median"] = _masked_stats(
                y2, start, end - start, ("median",), ddof, capacity, omit, min_periods, func
            )["median"]
        batch = (x.shape[0],)
    else:
        start, count = jnp.broadcast_arrays(r.start, r.count)
        batch = tuple(count.shape)
        res = _masked_stats(
            y2, start.reshape(-1), count.reshape(-1), stats, ddof, capacity, omit, min_periods, func
        )
    res = {s: res[s].reshape(batch + ch) for s in stats}
    return res[stats[0]] if single else res


def _masked_stats(
    y: Array,
    start: Array,
    count: Array,
    stats: tuple[str, ...],
    ddof: int,
    capacity: int | None,
    omit: bool,
    min_periods: int,
    func: str,
) -> dict[str, Array]:
    """Statistics over flat index ranges via ``_range_stats``, masked by ``min_periods``.

    Args:
        y: ``(N, C)`` values.
        start: ``(K,)`` first index of each range.
        count: ``(K,)`` points per range.
        stats: statistic names.
        ddof: delta degrees of freedom of var/std.
        capacity: static padded window length for the median (None: from the counts).
        omit: leave NaN out.
        min_periods: fewest counted points that give a result (rows for ``"count"``).
        func: caller name for error messages.

    Returns:
        dict of ``(K, C)`` float arrays by statistic name.
    """
    cap = _static_capacity(Ranges(start, count), capacity, func) if "median" in stats else None
    want = tuple(sorted(set(stats) | {"count"}))
    out = _range_stats(y, start, count, want, ddof, cap, omit)
    ok = out["count"] >= min_periods
    # pandas' count compares min_periods with the rows of the window, NaN rows included
    ok_rows = (count >= min_periods)[:, None]
    res = {}
    for s in stats:
        v = out[s].astype(_float_dtype(y.dtype))
        res[s] = jnp.where(ok_rows if s == "count" else ok, v, jnp.nan)
    return res
