"""Rolling x-width window statistics with pandas offset-window semantics."""

import functools
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ._core import (
    Array,
    ArrayLike,
    all_blocks,
    as_x,
    bound_array,
    bucketing as _bucket,
    check_closed,
    check_nan_policy,
    eager,
    index_dtype,
    now_or_traced,
    on_device,
    static_int,
    time_kind,
    window_width,
)
from ._statistics import (
    finish,
    median_capacity,
    reduce_sliding,
)
from ._stats import as_y, bucketed_reduce, needs_capacity, public_names, raise_on_nan
from ._xwidth_rows import native_rows, native_windows, over_ranges
from .reduce import (
    DEFAULT_DDOF,
    RANGE_ROADS,
    SLIDING_ROADS,
    Choice,
    Request,
    check_method,
    check_pairs,
    check_statistics,
    choose,
    float_dtype,
    needs_capacity as road_needs_capacity,
    result_shape,
    road,
    with_quantile,
)
from .resolve import (
    Ranges,
    bucketed_ranges,
    once64,
    resolve_rolling,
    wide,
)


def rolling_statistic(
    x: ArrayLike | None,
    y: ArrayLike,
    width: ArrayLike | None = None,
    statistic: str | Sequence[str] = "mean",
    *,
    at: ArrayLike | None = None,
    closed: str = "right",
    center: bool = False,
    before: ArrayLike | None = None,
    after: ArrayLike | None = None,
    min_periods: int = 1,
    ddof: int = DEFAULT_DDOF,
    capacity: int | None = None,
    nan_policy: str = "omit",
    method: str = "auto",
    q: float | None = None,
    window: int | None = None,
) -> Array | dict[str, Array]:
    """Rolling x-width window statistics with pandas offset-window semantics, in O(N log N).

    Equals ``pandas.Series(y, index=x).rolling(width, closed=closed,
    min_periods=min_periods).<statistic>()`` for an offset (time-like) window: the window of point
    ``i`` holds the points with ``x[i] - width < x <= x[i]`` (``closed="right"``), and with ties in
    ``x`` only the points up to ``i`` itself (as pandas); NaN values are skipped (the default
    ``nan_policy="omit"``, pandas' behaviour) and ``count`` counts the others; fewer than
    ``min_periods`` of them gives NaN. ``+-inf`` is a value, as in NumPy (a window holding one has
    an infinite sum, mean and extreme, a NaN ``var``/``std``): pandas' rolling differs there,
    reading infinities as missing everywhere but ``count``; for its numbers replace them first,
    ``numpy.where(numpy.isinf(y), numpy.nan, y)``. With ``at``, one window ends at each anchor
    instead (every point at the anchor included). Eager calls pad ``N`` (and the anchors) to a
    bucket size, so data of similar lengths reuse one compiled program (docs: "Compile once");
    results are those of the unpadded call. On the CPU (the native road), one window per row
    with scalar widths (trailing, centred or ``before``/``after``) is found and reduced in one
    kernel call, eager or under ``jit`` (pointers over the sorted x, the same rule for ties and
    ``closed``), ``min_periods`` finished in the same pass. Elsewhere an eager call whose
    windows all hold the same number of points, cut only at the ends (evenly spaced x and a
    width a multiple of its step; checked on the resolved windows themselves), runs them as
    the fixed-count windows below, on the O(N) block road: the same windows, the same results
    up to rounding.

    Centred and asymmetric windows: ``center=True`` is pandas'
    ``rolling(width, center=True)`` (``x[i] - width/2 < x <= x[i] + width/2``, every row tied
    with ``x[i]`` in the window); ``before=b, after=f`` (instead of ``width``) is the window
    ``x[i] - b < x <= x[i] + f`` with ``closed`` deciding each end, its tied rows ruled as in
    :func:`jaxsubset.rolling` (``after=0`` is the trailing window ``width=b``).

    Fixed-count windows: use :func:`jaxsubset.window_statistic` (``window_statistic(y, w,
    statistic)``: the same windows, roads and results), as polars' ``rolling_mean`` beside
    ``rolling_mean_by``. ``window=w`` here (instead of ``width``/``before``/``after``/``at``)
    keeps working: pandas' ``Series(y).rolling(w)``, the last ``w`` points up to each row,
    ``x`` unused (pass ``None``, or an x of ``y``'s length); see
    :func:`jaxsubset.window_statistic` for its conventions and roads.

    Args:
        x: ``(N,)`` sorted sample positions (``None`` with ``window=``): numbers, or a time
            axis as ``numpy.datetime64`` (converted once to exact int64 nanoseconds; needs
            JAX's 64-bit mode) or as integer nanoseconds.
        y: ``(N, *channels)`` values.
        width: window width in x units (scalar, >= 0, may be traced: a negative or NaN
            traced width raises at run time, see :func:`jaxsubset.checked`); on a datetime64
            axis a duration: ``numpy.timedelta64`` or a string such as ``"7D"``, ``"1h"`` (a plain
            number there is a TypeError: it would silently mean nanoseconds).
        statistic: ``"count"``, ``"sum"``, ``"mean"``, ``"var"``, ``"std"``, ``"sem"``
            (``std / sqrt(n)``), ``"min"``, ``"max"``, ``"first"``, ``"last"`` (the
            window's first/last non-NaN reading; with ``nan_policy="propagate"`` its
            first/last point), ``"skew"``, ``"kurt"`` (pandas' ``rolling().skew()``/
            ``.kurt()``: bias-corrected, NaN below 3/4 points and for a constant window),
            ``"median"``, ``"quantile"`` (with ``q=``: pandas' ``rolling().quantile(q)``,
            linear interpolation), ``"cov"``, ``"corr"`` (between the channels of ``(N, C)``
            ``y``: pandas' pairwise ``DataFrame.rolling().cov()``/``.corr()``, each row's
            ``(C, C)`` matrix, NaN left out per pair, ``min_periods`` counting each pair's
            points; ``ddof=1`` for pandas' ``cov``), or a tuple/list of them (then a dict is
            returned).
        at: optional ``(*batch)`` window end positions (dates on a datetime64 axis); default
            ``x`` (one window per point).
        closed: ``"right"`` (default), ``"left"``, ``"both"`` or ``"neither"``, as pandas.
        center: static bool: centre ``width`` on each anchor (pandas' ``center=True``).
        before: instead of ``width``: scalar extent below each anchor (>= 0, may be traced; a
            duration on a datetime64 axis; default 0 when ``after`` is given).
        after: scalar extent above each anchor (>= 0, may be traced; default 0).
        min_periods: static int >= 0, the fewest non-NaN points that give a result
            (``"count"``, as pandas, compares it with the window's rows, NaN included: a
            window holding only NaN counts 0, an empty one is NaN).
        ddof: static delta degrees of freedom of ``"var"``/``"std"``/``"sem"``: 0 as
            everywhere in the library (NumPy/SciPy); pass ``ddof=1`` for pandas'
            ``rolling().std()``/``.sem()``.
        capacity: static bound on the points of a window for the median and quantiles (and
            the padded length of ``method="reference"``; see :func:`range_statistic`).
        nan_policy: ``"omit"`` (default, as pandas): NaN readings are skipped per channel.
            ``"propagate"``: a window holding a NaN gives NaN, and ``"count"`` (and
            ``min_periods``) count every point of the window. ``"raise"``: ValueError if ``y``
            holds NaN (at run time under ``jit``).
        method: ``"auto"``, ``"tree"``, ``"wavelet"`` or ``"reference"`` (see
            :func:`range_statistic`); with ``window=`` also ``"blocks"`` (the fixed-count
            road, the default there).
        q: static float in ``[0, 1]`` for ``statistic="quantile"`` (see
            :func:`range_statistic`); on the median's road (``capacity=``).
        window: static int >= 1: windows of the last ``window`` points (see above), instead
            of an x-width; ``capacity`` then defaults to ``window``.

    Returns:
        ``(N, *channels)`` (or ``(*batch, *channels)`` with ``at``) float (``"cov"``/``"corr"``:
        ``(N, C, C)``), or a dict of them.

    Example:
        >>> import jax.numpy as jnp, jaxsubset
        >>> x = jnp.array([0.0, 1.0, 2.0, 5.0, 6.0])
        >>> y = jnp.array([1.0, 2.0, 3.0, 4.0, 5.0])
        >>> jaxsubset.rolling_statistic(x, y, 2.0, "sum").tolist()
        [1.0, 3.0, 5.0, 4.0, 9.0]
        >>> jaxsubset.rolling_statistic(x, y, 2.0, "std", min_periods=2, ddof=1).tolist()
        [nan, 0.707..., 0.707..., nan, 0.707...]
        >>> jaxsubset.rolling_statistic(x, y, 2.0, "sum", center=True).tolist()
        [3.0, 5.0, 3.0, 9.0, 5.0]
        >>> jaxsubset.rolling_statistic(x, y, statistic="sum", before=2.0, after=1.0).tolist()
        [3.0, 6.0, 5.0, 9.0, 9.0]
        >>> jaxsubset.rolling_statistic(None, y, statistic="mean", window=2).tolist()
        [1.0, 1.5, 2.5, 3.5, 4.5]
        >>> jaxsubset.rolling_statistic(None, y, statistic="max", window=3, min_periods=3).tolist()
        [nan, nan, 3.0, 4.0, 5.0]
    """
    func = "rolling_statistic"
    names, single = check_statistics(statistic, func)
    stats = with_quantile(names, q, func)  # "quantile" -> "quantile(<q>)", q static
    closed = check_closed(closed, func)
    min_periods = static_int(min_periods, "min_periods", func, minimum=0)
    ddof = static_int(ddof, "ddof", func, minimum=0)
    nan_policy = check_nan_policy(nan_policy, func)
    if window is not None:
        check_count_windows(x, y, width, before, after, at, closed, func)
        return fixed_windows(
            y, window, stats, names, single, center, min_periods, ddof, nan_policy, method,
            capacity, func,
        )  # fmt: skip
    method = check_method(method, func, RANGE_ROADS)
    given = {"width": width, "before": before, "after": after, "at": at}
    if x is not None and wide(func, x, {}, computes=True, others=given, traced_ok=True):
        # positions JAX's 32-bit mode cannot hold: the whole call as in 64-bit mode on the
        # values a 32-bit call holds (concrete float y and bounds), else resolved as in
        # 64-bit mode and reduced in 32-bit mode (_exact)
        once = once64(
            lambda v: rolling_statistic(
                x, v, width, statistic, at=at, closed=closed, center=center, before=before,
                after=after, min_periods=min_periods, ddof=ddof, capacity=capacity,
                nan_policy=nan_policy, method=method, q=q,
            ),
            y, given,
        )  # fmt: skip
        if once is not None:
            return once
        y = y_args(np.shape(x)[0] if np.ndim(x) else None, y, stats, nan_policy, func)
        check_widths(time_kind(x), given, func)
        r = resolve_rolling(x, **given, closed=closed, center=center, func=func)
    else:
        # an eager call that the x-width kernel takes pads x and y into new arrays: host
        # data stays there until then (device arrays for every other road)
        keep = nan_policy != "raise" and at is None and _bucket.bucketed(x, y)
        x, y, widths, at = x_width_args(
            x, y, width, before, after, at, stats, nan_policy, func, keep_host=keep
        )
        omit = nan_policy == "omit"
        request = Request(func, "windows", stats, method, ddof, omit, capacity, min_periods)
        if at is None and native_rows(x, y, widths, request, center):
            choose(request, k=x.shape[0], n=x.shape[0])  # (recorded for explain: native)
            res = native_windows(x, y, widths, closed, request, center)
            return public_names(res[stats[0]] if single else res, names, stats, single)
        x, y = on_device(x), on_device(y)
        r = resolve_windows(x, y, widths, at, closed, center, func)
    omit = nan_policy == "omit"
    request = Request(func, "windows", stats, method, ddof, omit, capacity, min_periods)
    return reduce_windows(y, r, request, names, single, one_per_row=at is None)


def check_count_windows(
    x: Any, y: Any, width: Any, before: Any, after: Any, at: Any, closed: str, func: str
) -> None:
    """``window=`` excludes the x-width arguments and ``closed``; ``x``, if given, fits ``y``."""
    given = {"width": width, "before": before, "after": after, "at": at}
    clash = [k for k, v in given.items() if v is not None]
    if clash:
        raise ValueError(
            f"{func}: `window` (a number of points) cannot be combined with "
            f"{', '.join(f'`{k}`' for k in clash)} (x-width windows); pass one or the other"
        )
    if closed != "right":
        raise ValueError(
            f"{func}: `window` windows are the last `window` points up to each row; "
            f"`closed` must be 'right' with them, got {closed!r}"
        )
    if x is not None and np.shape(x)[:1] != np.shape(y)[:1]:
        raise ValueError(
            f"{func}: `x` and `y` must have the same length along the first axis, "
            f"got len(x)={np.shape(x)[:1]} and y.shape={tuple(np.shape(y))}"
        )


def x_width_args(
    x: Any,
    y: Any,
    width: Any,
    before: Any,
    after: Any,
    at: Any,
    stats: tuple[str, ...],
    nan_policy: str,
    func: str,
    keep_host: bool = False,
) -> tuple[Array, Array, dict[str, Any], Any]:
    """Validated x-width window arguments: ``(x, y, widths, at)``, durations and dates on a
    time axis as exact int64 nanoseconds (``keep_host``: concrete numeric ``x`` and ``y``
    stay NumPy's, in the mode's dtypes)."""
    if x is None:
        raise TypeError(f"{func}: `x` is needed for x-width windows (only `window=` takes None)")
    tk = time_kind(x)
    x = as_x(x, func, keep_host=keep_host)
    y = y_args(x.shape[0], y, stats, nan_policy, func, keep_host)
    widths: dict[str, Any] = {"width": width, "before": before, "after": after}
    check_widths(tk, widths, func)
    for name, w in widths.items():
        if w is None:
            continue
        window_width(w, name, x, func, tk)  # the resolver's own check when concrete: >= 0
        with jax.ensure_compile_time_eval():  # concrete stays concrete inside a trace: the
            # decisions it allows are taken on the host (how windows end, no run-time guard)
            widths[name] = bound_array(w, name, x, func, tk, width=True)
    if at is not None:
        at = bound_array(at, "at", x, func, tk)
    return x, y, widths, at


def check_widths(tk: str | None, given: dict[str, Any], func: str) -> None:
    """Concrete widths are scalars; on a time axis durations (``"7D"``, ``timedelta64``)."""
    for name in ("width", "before", "after"):
        w = given[name]
        if w is not None and not isinstance(w, str):
            now_or_traced(w, lambda v: check_width(v, name, tk, func))  # noqa: B023 (called at once)


def check_width(w: Any, name: str, tk: str | None, func: str) -> None:
    """A concrete width: a scalar, on a time axis a duration."""
    if np.ndim(w) != 0:
        raise ValueError(f"{func}: `{name}` must be a scalar, got shape {np.shape(w)}")
    if tk is not None and time_kind(w) is None:  # NumPy would read a bare number as a
        raise TypeError(  # generic duration
            f"{func}: `{name}` must be a duration on a time axis (numpy.timedelta64 or "
            f"a string such as '7D'), got {w!r}; a plain number would be read as "
            "nanoseconds"
        )


def y_args(
    n_x: int | None,
    y: Any,
    stats: tuple[str, ...],
    nan_policy: str,
    func: str,
    keep_host: bool = False,
) -> Array:
    """``y`` checked against ``len(x)`` (``n_x``) and the statistics (``"raise"``: for NaN;
    ``keep_host``: see :func:`jaxsubset._stats.as_y`)."""
    y = as_y(y, func, keep_host=keep_host)
    check_pairs(stats, y.shape, func)
    if y.shape[0] != n_x:
        raise ValueError(
            f"{func}: `x` and `y` must have the same length along the first axis, "
            f"got len(x)={n_x} and y.shape={tuple(y.shape)}"
        )
    if nan_policy == "raise":
        y = raise_on_nan(y, func, "y")
    return y


def resolve_windows(
    x: Array, y: Array, widths: dict[str, Any], at: Any, closed: str, center: Any, func: str
) -> Ranges:
    """The one resolver: pandas' rule for one window per point (the window of row i ends at
    row i, also with ties in x), the closed interval for explicit anchors."""
    if x.shape[0] > 0 and _bucket.bucketed(x, y, widths, at):
        return bucketed_ranges(x, widths, at, closed, center, func)
    return resolve_rolling(x, **widths, at=at, closed=closed, center=center, func=func)


def reduce_windows(
    y: Array,
    r: Ranges,
    request: Request,
    names: tuple[str, ...],
    single: bool,
    one_per_row: bool,
) -> Array | dict[str, Array]:
    """The statistics of x-width windows: as fixed-count windows where the chooser finds
    them so (eager, one window per row), else over their ranges."""
    func, stats, method = request.func, request.statistics, request.method
    ddof, omit, capacity, min_periods = (
        request.ddof, request.omit, request.capacity, request.min_periods or 0,
    )  # fmt: skip
    nan_policy = "omit" if omit else "propagate"  # "raise" was checked on y already
    if one_per_row and eager(y, r):  # the chooser reads the resolved ranges on the host
        n = y.shape[0]
        choice = choose(request, k=n, n=n, windows=(r.start, r.count))
        if choice.fixed is not None:
            window, lead = choice.fixed
            return _rolling_window(
                y, window, stats, names, single, False, min_periods, ddof, nan_policy,
                "auto", capacity, func, lead=lead, choice=choice,
            )  # fmt: skip
    want = tuple(dict.fromkeys((*stats, "count")))
    fdt = float_dtype(y.dtype)
    if _bucket.bucketed(y, r):
        cap = None
        if needs_capacity(stats, method, func):
            cap = median_capacity(r.count, capacity, None, func)
        args = (stats, min_periods, np.dtype(fdt))
        res = bucketed_reduce(
            y, r, stats, single, ddof, omit, method, cap, func, want, finish, args, "windows"
        )
        return public_names(res, names, stats, single)
    res = over_ranges(y, r, request)
    return public_names(res[stats[0]] if single else res, names, stats, single)


def fixed_windows(
    y: ArrayLike,
    window: Any,
    stats: tuple[str, ...],
    names: tuple[str, ...],
    single: bool,
    center: Any,
    min_periods: int,
    ddof: int,
    nan_policy: str,
    method: Any,
    capacity: Any,
    func: str,
) -> Array | dict[str, Array]:
    """Fixed-count windows (:func:`jaxsubset.window_statistic`, ``rolling_statistic(...,
    window=w)``): ``window`` and ``method`` checked, ``y`` converted, then the block road."""
    window = static_int(window, "window", func)
    method = check_method(method, func, SLIDING_ROADS)
    # an eager call pads y into a new array anyway: host data stays there until then
    y = as_y(y, func, keep_host=nan_policy != "raise" and _bucket.bucketed(y))
    check_pairs(stats, y.shape, func)
    if nan_policy == "raise":
        y = raise_on_nan(y, func, "y")
    return _rolling_window(
        y, window, stats, names, single, center, min_periods, ddof, nan_policy, method,
        capacity, func,
    )  # fmt: skip


def _rolling_window(
    y: Array,
    window: int,
    stats: tuple[str, ...],
    names: tuple[str, ...],
    single: bool,
    center: Any,
    min_periods: int,
    ddof: int,
    nan_policy: str,
    method: str,
    capacity: int | None,
    func: str,
    lead: int | None = None,
    choice: Choice | None = None,
) -> Array | dict[str, Array]:
    """``rolling_statistic(..., window=w)``: the last ``w`` points up to each row (pandas).

    ``center=True`` is pandas' centred int window: the trailing window ending ``(w - 1) // 2``
    rows later, or ``lead`` rows later when given (``y`` is read with that many absent rows
    appended). Eager calls pad ``y``
    with absent rows to a bucket size (one compiled program per bucket); a trailing window
    never reaches rows after its own, so the results are those of the unpadded call.
    ``choice``: the chooser's answer when the caller asked it (x-width windows found
    fixed-count), else it is asked here.
    """
    if not isinstance(center, bool | np.bool_):
        raise TypeError(f"{func}: `center` must be a bool, got {center!r}")
    if lead is None:  # x-width windows found fixed-count give their own lead
        lead = (window - 1) // 2 if center else 0
    n, ch = y.shape[0], tuple(y.shape[1:])
    if choice is None:
        omit = nan_policy == "omit"
        request = Request(func, "sliding", stats, method, ddof, omit, capacity, min_periods)
        choose(request, k=n, n=n)
    c = int(np.prod(ch))
    cap = None
    if needs_window_capacity(stats, method, func):
        cap = static_int(capacity, "capacity", func) if capacity is not None else window
    want = tuple(dict.fromkeys((*stats, "count")))
    native = all(road("sliding", s, method, func) == "native" for s in want)
    if native:
        want = stats  # the native kernel counts for min_periods itself (no "count" result)
    # what the program reduces: ``want``, finished for ``min_periods`` (one static argument)
    asked = Request(func, "sliding", want, method, ddof, nan_policy == "omit", cap, min_periods)
    kw = dict(window=window, request=asked, stats=stats, fdt=np.dtype(float_dtype(y.dtype)))
    if _bucket.bucketed(y):
        host = _bucket.on_host(y)
        y2 = np.asarray(y).reshape(n, c) if host else y.reshape(n, c)
        # host data known finite: the block road's program without the NaN/inf branch (the
        # same results; the native kernel has no such branch: not worth a pass over y)
        kw["finite"] = host and not native and _finite(np.asarray(y2))
        yp = _bucket.pad(y2, _bucket.bucket(n + lead))
        out = window_program(yp, jnp.asarray(n, index_dtype()), **kw)
        res = {s: _bucket.unpad(v[lead:], n, result_shape(s, (n,), ch)) for s, v in out.items()}
    else:
        y2 = y.reshape(n, c)
        if lead:
            y2 = jnp.pad(y2, [(0, lead), (0, 0)])
        length = jnp.asarray(n, index_dtype()) if lead else None  # None: every row present
        out = window_program(y2, length, **kw)
        res = {s: v[lead : lead + n].reshape(result_shape(s, (n,), ch)) for s, v in out.items()}
    return public_names(res[stats[0]] if single else res, names, stats, single)


def _finite(y: np.ndarray) -> bool:
    """Whether every value of host ``y`` is finite (integers always), in bounded memory."""
    if not np.issubdtype(y.dtype, np.inexact):
        return True
    return all_blocks(lambda c: np.isfinite(c).all(), y)


def needs_window_capacity(stats: tuple[str, ...], method: str, func: str) -> bool:
    """Whether any statistic of a ``window=`` call runs on a road that needs a capacity."""
    return any(road_needs_capacity(road("sliding", s, method, func), s) for s in stats)


@functools.partial(jax.jit, static_argnames=("window", "request", "stats", "fdt", "finite"))
def window_program(
    y: Array,
    length: Array | None,
    *,
    window: int,
    request: Request,
    stats: tuple[str, ...],
    fdt: Any,
    finite: bool = False,
) -> dict[str, Array]:
    """``request``'s statistics of the trailing windows of ``window`` points, as ``stats``
    in ``fdt``."""
    # finished (min_periods) by the road: the block road in the program computing them
    out = reduce_sliding(y, length, window, request, finite=finite)
    return {s: out[s].astype(fdt) for s in stats}
