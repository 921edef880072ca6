"""Statistics over index ranges: :func:`range_statistic`, on the one dispatcher."""

from collections.abc import Callable, Sequence
from typing import Any

import jax.numpy as jnp
import numpy as np

from ._core import (
    Array,
    ArrayLike,
    bucketing as _bucket,
    check_int_fits,
    check_nan_policy,
    device_array,
    host_array,
    nan_guard,
    now_or_traced,
    static_int,
)
from ._statistics import clip_ranges, median_capacity, range_bound, reduce_ranges
from .reduce import (
    DEFAULT_DDOF,
    RANGE_ROADS,
    Request,
    check_method,
    check_pairs,
    check_statistics,
    choose,
    needs_capacity as road_needs_capacity,
    result_shape,
    road,
    with_quantile,
)
from .resolve import Ranges, bucketed, pieces_of


def check_statistic(statistic: Any, func: str) -> str:
    return check_statistics(statistic, func)[0][0]


def needs_capacity(stats: tuple[str, ...], method: str, func: str) -> bool:
    """Whether any statistic runs on a road that needs a static capacity (a bound on counts)."""
    return any(road_needs_capacity(road("ranges", s, method, func), s) for s in stats)


def as_y(y: Any, func: str, keep_host: bool = False) -> Array:
    """``y`` checked (real numeric, at least 1-D) as a JAX array; ``keep_host``: concrete
    ``y`` stays NumPy's in the mode's dtype (:func:`host_array`), for an eager caller that
    pads it into a new array anyway."""

    def now(y: Any) -> Array:
        np_y = np.asarray(y)
        if np_y.dtype.kind not in "biuf" and not jnp.issubdtype(np_y.dtype, jnp.floating):
            raise TypeError(f"{func}: `y` must be real numeric, got dtype {np_y.dtype}")
        check_int_fits(np_y, "y", func)  # int64 in 32-bit mode: jnp.asarray would wrap it
        return host_array(y, np_y) if keep_host else device_array(y, np_y)

    def traced(y: Array) -> Array:
        if jnp.issubdtype(y.dtype, jnp.complexfloating):
            raise TypeError(f"{func}: `y` must be real numeric, got dtype {y.dtype}")
        return y

    y = now_or_traced(y, now, traced)
    if y.ndim < 1:
        raise ValueError(f"{func}: `y` must have a leading axis of length N, got a scalar")
    return y


def range_statistic(
    y: ArrayLike,
    ranges: Ranges,
    statistic: str | Sequence[str] = "mean",
    *,
    ddof: int = DEFAULT_DDOF,
    capacity: int | None = None,
    nan_policy: str = "propagate",
    method: str = "auto",
    q: float | None = None,
) -> Array | dict[str, Array]:
    """A statistic of ``y`` over every index range, without padded copies where possible.

    count/sum/mean/var/std/min/max run on the block tree (``method="tree"``, the default
    road): each range is combined from partial results of its own points only, so a value
    outside a range (a huge one, an inf, a NaN) can never change it, and long float32 ranges
    keep the accuracy of a direct sum; O(N log N) work, never ``K x capacity``. The median
    and quantiles run on the wavelet road (``method="wavelet"``): the data is ranked once in
    overlapping rows of about ``4 * capacity`` points and each range's order statistics are
    read from a wavelet tree of those ranks in ``O(log capacity)`` steps, equal to the
    padded road's results (``method="reference"``, the padded masked reduction of
    :class:`jaxsubset.Subsets` that sorts ``capacity`` slots per range, which every road is
    tested against).
    Conventions are those of :class:`jaxsubset.Subsets`: an empty range gives NaN (0 for
    ``"sum"`` and ``"count"``), a range holding a NaN gives NaN unless ``nan_policy="omit"``,
    a range holding an infinite value has NaN ``"var"``/``"std"`` (``inf - inf``, as NumPy).

    Eager calls reuse compiled programs: ``N`` and the number of ranges are padded to a bucket
    size (padding never enters a statistic; docs: "Compile once"); under ``jit`` the
    shapes are yours.

    Args:
        y: ``(N, *channels)`` values, in the order of the sorted ``x`` the ranges index.
        ranges: :class:`jaxsubset.Ranges` with batch shape ``(*batch)`` (from
            :mod:`jaxsubset.ranges`); ranges are clipped to ``[0, N)``, never shifted.
        statistic: one of ``"count"``, ``"sum"``, ``"mean"``, ``"var"``, ``"std"``,
            ``"sem"`` (``std / sqrt(n)``, the same ``ddof``), ``"min"``, ``"max"``,
            ``"first"``, ``"last"`` (the first/last non-NaN reading with
            ``nan_policy="omit"``, the first/last point otherwise), ``"skew"``, ``"kurt"``
            (pandas' bias-corrected skewness and excess kurtosis: NaN below 3/4 points and
            for a constant range), ``"median"``, ``"quantile"`` (with ``q=``), ``"cov"``,
            ``"corr"`` (between the channels of ``(N, C)`` ``y``: each range's ``(C, C)``
            ``numpy.cov(rowvar=False, ddof=ddof)``/``numpy.corrcoef`` matrix, with
            ``"omit"`` each entry from the points where both channels are non-NaN), or a
            tuple/list of them (computed together).
        ddof: static delta degrees of freedom of ``"var"``/``"std"``/``"sem"``/``"cov"`` (divisor
            ``n - ddof``; NaN where ``n - ddof <= 0``); 0 as NumPy and SciPy (pandas'
            ``sem()`` and ``scipy.stats.sem`` use 1: pass ``ddof=1``).
        capacity: static bound on the points of a range for the median and quantiles (and
            the padded length of ``method="reference"``); default ``ranges.max_count``, or
            (eagerly) the largest count rounded up to a power of two. A range with more points
            than ``capacity`` gives NaN there (never a statistic of a truncated range).
        nan_policy: SciPy's names. ``"propagate"`` (default): a range holding a NaN gives NaN
            (``"count"`` counts every point). ``"omit"``: NaN readings are left out per channel,
            as NumPy's nan-functions (``"count"`` counts the real readings; a range of only NaN
            gives NaN, 0 for ``"sum"``); the gradient is zero at omitted readings.
            ``"raise"``: ValueError if ``y`` holds NaN (at run time under ``jit``).
        method: ``"auto"`` (default: the tree for every statistic but the median and
            quantiles, the wavelet road for those), ``"tree"``, ``"wavelet"`` (the median,
            quantiles and count only) or ``"reference"``, as ``jnp.searchsorted(method=)``
            exposes its algorithms; every road gives the same results up to rounding (the
            wavelet and padded roads the same bits).
        q: static float in ``[0, 1]``, keyword-only, for ``statistic="quantile"`` (as
            ``numpy.quantile(a, q)`` and pandas' ``quantile(q)``: linear interpolation
            between the sorted values, NaN where it reads an infinite value, as NumPy;
            ``q=0.5`` is the median). On the median's road (``capacity=``).

    Returns:
        ``(*batch, *channels)`` float (``"count"``: int; ``"cov"``/``"corr"``:
        ``(*batch, C, C)``), or a dict of them by statistic name when ``statistic`` is a
        tuple/list.

    Example:
        >>> import jax.numpy as jnp, jaxsubset
        >>> x = jnp.arange(10.0)
        >>> r = jaxsubset.ranges.chunks(x, 3)
        >>> jaxsubset.range_statistic(x, r, "mean").tolist()
        [1.5, 5.0, 8.0]
        >>> out = jaxsubset.range_statistic(x, r, ("min", "max", "std"))
        >>> out["min"].tolist(), out["max"].tolist()
        ([0.0, 4.0, 7.0], [3.0, 6.0, 9.0])
    """
    func = "range_statistic"
    if not isinstance(ranges, Ranges):
        raise TypeError(f"{func}: `ranges` must be a jaxsubset.Ranges, got {type(ranges).__name__}")
    check_ranges_shape(ranges, func)
    names, single = check_statistics(statistic, func)
    stats = with_quantile(names, q, func)  # "quantile" -> "quantile(<q>)", q static
    ddof = static_int(ddof, "ddof", func, minimum=0)
    nan_policy = check_nan_policy(nan_policy, func)
    method = check_method(method, func, RANGE_ROADS)
    # an eager call pads y into a new array anyway: host data stays there until then
    y = as_y(y, func, keep_host=nan_policy != "raise" and _bucket.bucketed(y, ranges))
    check_pairs(stats, y.shape, func)
    if nan_policy == "raise":
        y = raise_on_nan(y, func, "y")
    cap = None
    if needs_capacity(stats, method, func):
        cap = median_capacity(ranges.count, capacity, ranges.max_count, func)
    if _bucket.bucketed(y, ranges):
        if cap is not None and capacity is None:  # few distinct capacities: few programs
            cap = 1 << (cap - 1).bit_length()
        omit = nan_policy == "omit"
        res = bucketed_reduce(y, ranges, stats, single, ddof, omit, method, cap, func)
        return public_names(res, names, stats, single)
    ch = tuple(y.shape[1:])
    start, count = jnp.broadcast_arrays(ranges.start, ranges.count)
    batch = tuple(count.shape)
    y2 = y.reshape(y.shape[0], int(np.prod(y.shape[1:])))
    bound = range_bound(ranges.max_count, y.shape[0])
    request = Request(func, "ranges", stats, method, ddof, nan_policy == "omit", cap)
    padded = choose(request, k=count.size, n=y.shape[0], bound=bound, capacity=cap).padded
    out = reduce_ranges(
        y2,
        start.reshape(-1),
        count.reshape(-1),
        request.replace(bound=bound, padded=padded),
        pieces=pieces_of(ranges) if ranges.count.shape == ranges.start.shape else None,
    )
    res = {s: out[s].reshape(result_shape(s, batch, ch)) for s in stats}
    return public_names(res[stats[0]] if single else res, names, stats, single)


def check_ranges_shape(ranges: Ranges, func: str) -> None:
    """``ranges.start`` and ``ranges.count`` broadcast to one batch shape (a clear error)."""
    shapes = np.shape(ranges.start), np.shape(ranges.count)
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        raise ValueError(
            f"{func}: `ranges.start` and `ranges.count` must broadcast to one batch shape, got "
            f"shapes {shapes[0]} and {shapes[1]}"
        ) from None


def public_names(res: Any, names: tuple[str, ...], keys: tuple[str, ...], single: bool) -> Any:
    """Results keyed by the names the caller asked for (``"quantile"``, not its key)."""
    if single or names == keys:
        return res
    return {n: res[k] for n, k in zip(names, keys, strict=True)}


def bucketed_reduce(
    y: Array,
    ranges: Ranges,
    stats: tuple[str, ...],
    single: bool,
    ddof: int,
    omit: bool,
    method: str,
    cap: int | None,
    func: str,
    want: tuple[str, ...] | None = None,
    finish: Callable | None = None,
    finish_args: tuple = (),
    kind: str = "ranges",
) -> Array | dict[str, Array]:
    """An eager :func:`range_statistic`: :func:`eager_reduce`, one program per bucket of shapes.

    The eager decorator (:func:`jaxsubset.resolve.bucketed`) pads ``y`` with zero rows to
    ``bucket(N)`` and the ranges to ``bucket(K)`` (N's buckets when ``K == N``, a window per
    point); :func:`eager_reduce` clips the ranges to the real ``[0, N)`` (so no padding row
    is inside any range), and the results are cut back to the real batch. The road is chosen
    from the real K and N (``padded``), and every road's result for a range depends only on
    its own points (the padded road's sums in a fixed order), so the padding ranges change no
    bit. ``want`` (default ``stats``) are reduced, then ``finish(out, count, *finish_args)``
    (a module-level function: it is a static argument) turns them into ``stats`` in the same
    program (:func:`jaxsubset.rolling_statistic`'s ``min_periods``). ``kind``: the request's
    kind for the road choice (``"windows"`` from ``rolling_statistic``).
    """
    n = y.shape[0]
    start, count = np.broadcast_arrays(np.asarray(ranges.start), np.asarray(ranges.count))
    bound = range_bound(ranges.max_count, n)  # the unbucketed call's bound and road
    request = Request(func, kind, stats, method, ddof, omit, cap)
    padded = choose(request, k=count.size, n=n, bound=bound, capacity=cap).padded
    # what the program reduces: ``want``, over index ranges (one static argument)
    ranges_request = Request(
        func, "ranges", want or stats, method, ddof, omit, cap, bound=bound, padded=padded
    )
    res = eager_reduce(
        None, y, (start, count), request=ranges_request, stats=stats, finish=finish,
        finish_args=finish_args,
    )  # fmt: skip
    return res[stats[0]] if single else res


@bucketed(static_argnames=("request", "stats", "finish", "finish_args"), rows=True, ranges=True)
def eager_reduce(
    x: None,
    y: Array,
    ranges: tuple[Array, Array],
    n: Array,
    *,
    request: Request,
    stats: tuple[str, ...],
    finish: Callable | None = None,
    finish_args: tuple = (),
) -> dict[str, Array]:
    """:func:`reduce_ranges` of ``y`` ``(rows, *ch)`` past its ``n`` real rows over flat
    ``ranges`` (see :func:`bucketed_reduce`): ``{statistic: (K, *result)}``, ``request``'s
    statistics reduced, then ``finish``ed into ``stats``."""
    start, count = clip_ranges(ranges[0], ranges[1], n)
    ch = tuple(y.shape[1:])
    out = reduce_ranges(y.reshape(y.shape[0], int(np.prod(ch))), start, count, request)
    out = out if finish is None else finish(out, count, *finish_args)
    return {s: out[s].reshape(result_shape(s, count.shape, ch)) for s in stats}


def raise_on_nan(values: Array, func: str, name: str) -> Array:
    """``nan_policy="raise"``: ``values`` guarded by a check that costs nothing until it fires.

    A ValueError if ``values`` hold NaN, eagerly or at run time (see ``_checks.error_if``);
    the caller computes from the returned array, so the check cannot be dropped.
    """
    return nan_guard(values, func, name)
