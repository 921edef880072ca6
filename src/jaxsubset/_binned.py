"""``scipy.stats.binned_statistic`` for 1-D x: a thin SciPy adapter over the statistics dispatcher.

Binning is SciPy's (``numpy.histogram`` edges, ``digitize``, the last edge closed with SciPy's
rounding rule, ``binnumber``); the statistics come from ONE place: sorted ``x`` makes every bin
an index range (``_statistics._dispatch.reduce_ranges``), unsorted or traced ``x`` gives every
point a bin label (``_statistics._labels.reduce_labels``).
"""

from collections.abc import Callable
from typing import Any, NamedTuple

import jax.numpy as jnp
import numpy as np

from ._bin_edges import binned_edges, period_bins, time_edges
from ._binned_roads import binned_run
from ._core import (
    Array,
    ArrayLike,
    as_x,
    bucketing,
    check_int_fits,
    check_nan_policy,
    device_array,
    host_array,
    nan_in_x,
    now_or_traced,
    time_kind,
    traced_array,
)
from ._stats import raise_on_nan
from .reduce import (
    LABEL_ROADS,
    RANGE_ROADS,
    check_method,
    check_pairs,
    with_quantile,
)
from .resolve import binned_exact, binned_wide


# ---------------------------------------------------------------------------- binned_statistic
BINNED_STATISTICS = (
    *("mean", "std", "median", "count", "sum", "min", "max"),  # SciPy's
    *("sem", "first", "last", "skew", "kurt", "quantile", "cov", "corr"),
)
ROADS = {**RANGE_ROADS, **LABEL_ROADS}  # method= names: "reference", "tree", "scatter", "sort"


class BinnedStatisticResult(NamedTuple):
    """What :func:`binned_statistic` returns, as ``scipy.stats.binned_statistic``.

    NumPy arrays when every argument was concrete (as SciPy's), JAX arrays under
    ``jit``/``vmap``/``grad``.

    Attributes:
        statistic: ``(*channels, nbins)`` the statistic of each bin.
        bin_edges: ``(nbins + 1,)`` the bin edges.
        binnumber: ``(N,)`` int, the bin of each point: ``1..nbins`` inside, 0 below the first
            edge and ``nbins + 1`` above the last (scipy's numbering).

    Example:
        >>> import jax.numpy as jnp, jaxsubset
        >>> x = jnp.array([-1.0, 0.5, 1.5, 2.0, 9.0])
        >>> res = jaxsubset.binned_statistic(x, x, "count", bins=[0.0, 1.0, 2.0])
        >>> statistic, edges, binnumber = res
        >>> statistic.tolist(), binnumber.tolist()
        ([1.0, 2.0], [0, 1, 2, 2, 3])
    """

    statistic: Array | np.ndarray
    bin_edges: Array | np.ndarray
    binnumber: Array | np.ndarray


def binned_statistic(
    x: ArrayLike,
    values: ArrayLike,
    statistic: str | Callable = "mean",
    bins: int | ArrayLike = 10,
    range: tuple[Any, Any] | None = None,  # noqa: A002 - scipy's name
    *,
    capacity: int | None = None,
    x_sorted: bool | None = None,
    nan_policy: str = "propagate",
    method: str = "auto",
    q: float | None = None,
) -> BinnedStatisticResult:
    """``scipy.stats.binned_statistic`` for 1-D ``x``: jit-, vmap- and grad-safe, in O(N).

    Same bins as SciPy (``numpy.histogram`` edges, every bin half-open but the last, which
    is closed, with SciPy's rounding at the last edge: ``numpy.around`` to SciPy's decimals;
    past 308 decimals, bins narrower than about 1e-302, where NumPy's rounding is NaN and
    SciPy leaves even a point on the last edge out, the rounding holds at 308 and the edge
    stays closed), same ``binnumber`` (0 below the range,
    ``nbins + 1`` above it), same results: NaN for empty bins (0 for ``"sum"`` and
    ``"count"``), ``"std"`` with ``ddof=0`` (a one-point or constant bin exactly 0), float
    ``"count"``. The statistics come from the library's one dispatcher: sorted ``x``
    (detected eagerly, or promised with ``x_sorted=True``) makes every bin a run of points,
    reduced by whole blocks (count/sum/mean/var/std/sem/min/max where the bins hold at least
    32 points each on average: a vectorised pass per statistic) or on the range roads;
    unsorted or traced ``x`` gives every point a bin label,
    reduced on the label roads (scatters into the bins on the CPU, one sort by bin on
    GPU/TPU). ``"std"`` takes two passes (deviations from each bin's mean), as SciPy.

    Args:
        x: ``(N,)`` sample positions, any order (NaN raises eagerly). Float ``x`` is compared
            with the edges in its own dtype (SciPy's edges take ``x``'s float dtype); integer
            ``x`` (e.g. int64 epoch milliseconds) is compared with the edges exactly, in
            integers, never through float64 or float32.
        values: ``(N,)`` or ``(*channels, N)`` values, channels leading as in SciPy; may be
            None for ``"count"`` (as SciPy). float16/bfloat16 values are computed in float32,
            results in their dtype.
        statistic: ``"mean"``, ``"std"``, ``"median"``, ``"count"``, ``"sum"``, ``"min"``,
            ``"max"`` (SciPy's names), ``"sem"`` (``std / sqrt(n)``, ddof 0 as SciPy's
            ``std``), ``"first"``, ``"last"`` (the first/last value of the bin in the input
            order, as pandas' groupby ``first()``/``last()``, which is x order for sorted
            ``x``; the first/last non-NaN one with ``nan_policy="omit"``), ``"skew"``,
            ``"kurt"`` (pandas' bias-corrected skewness and excess kurtosis), ``"quantile"``
            (with ``q=``: ``numpy.quantile``'s linear interpolation per bin, NaN for a bin
            holding a NaN unless omitted), ``"cov"``/``"corr"`` (between the channels of
            ``(C, N)`` values: ``statistic`` is ``(C, C, nbins)``, each bin's
            ``numpy.cov(ddof=0)``/``numpy.corrcoef`` matrix; see the docs' "Covariance
            and correlation"), or a callable ``fn(values, mask) -> scalar`` applied to every
            bin's values padded to ``capacity`` (``mask`` marks the real ones).
        bins: static int, the number of equal-width bins, or ``(nbins + 1,)`` increasing edges
            (values may be traced; ``nbins`` is static), or on a time axis a period:
            ``"1M"``, ``"3M"``/``"1Q"``, ``"1Y"`` calendar bins or ``"7D"``, ``"12h"`` fixed
            ones, with pandas ``resample``'s bins (see :func:`jaxsubset.bin_edges`; the
            edges are computed on the host, so ``x`` must be concrete dates).
        range: ``(lo, hi)`` (or ``[(lo, hi)]``) for int ``bins``; default ``(min(x), max(x))``.
            May be traced. Ignored with explicit edges.
        capacity: static padded bin size of the padded roads (a callable ``statistic``,
            ``method="reference"``); eagerly it defaults to the largest bin rounded up to a
            power of two; under jit a callable requires it and the reference road uses N.
            Bins with more points give NaN.
        x_sorted: ``True`` promises ascending ``x`` (the range roads under jit; concrete
            ``x`` that is not ascending raises ValueError); ``None`` checks concrete ``x``
            and assumes unsorted under jit; ``False`` takes the label roads.
        nan_policy: NaN in ``values``. ``"propagate"`` (default) is SciPy's own behaviour:
            ``"sum"``, ``"mean"``, ``"std"`` and ``"max"`` of a bin holding a NaN are NaN, the
            median is the middle of the values sorted with NaN last (NaN when a NaN reaches the
            middle), ``"min"`` skips NaN (NaN only for a bin of NaN) and ``"count"`` counts
            every point. ``"omit"``: NaN readings are removed per channel first, so every
            statistic, ``"count"`` included, equals SciPy's on the NaN-free data (a callable
            gets a ``mask`` without them); still O(N), the gradient zero at omitted readings.
            ``"raise"``: ValueError if ``values`` hold NaN (at run time under ``jit``).
        method: the road, keyword-only. ``"auto"`` (default): the backend's fast road.
            ``"reference"``: the padded masked reductions of :class:`jaxsubset.Subsets` (the
            ground truth, ``nbins x capacity`` work). ``"tree"``: the block tree over index
            ranges (unsorted ``x`` is sorted by bin first; no median). ``"wavelet"``: the
            median and quantiles only, over index ranges as ``"tree"`` (a bin may hold every
            point: one wavelet tree over the data, ``capacity`` as the reference road).
            ``"scatter"``: scatters into the bins by label (the median by a radix select).
            ``"sort"``: one sort by bin, then the range roads (the median and quantiles by a
            sort of (bin, value) pairs). Every road gives the same results within rounding.
        q: static float in ``[0, 1]``, keyword-only, for ``statistic="quantile"`` (as
            :func:`jaxsubset.range_statistic`).

    Time axes: ``x`` as ``numpy.datetime64`` (or ``timedelta64``) becomes exact int64
    nanoseconds (JAX's 64-bit mode); ``bins`` edges and ``range`` are then dates (datetime64,
    ISO strings), int ``bins`` split the range in exact integer arithmetic
    (``lo + (k * (hi - lo)) // nbins``: float64 cannot hold nanoseconds near 1e18), the last
    bin is closed exactly at its edge (no rounding), and ``bin_edges`` come back as
    ``datetime64[ns]``. A period ``bins="1M"`` gives the bins of
    ``pandas.Series(values, index=x).resample("MS")`` (``"1Q"``: ``"QS"``, ``"1Y"``: ``"YS"``,
    ``"7D"``: ``"7D"``), empty bins included; its last edge lies past the last date, so
    SciPy's closed last bin holds no date on its edge.

    Eager calls pad ``N`` to a bucket size with points outside every bin, and (named
    statistics) the number of bins with empty bins past the last edge, so data of
    similar lengths and bin counts reuse one compiled program (docs: "Compile once").
    Results, ``binnumber`` included, are those of the unpadded call.

    Gradients: with respect to ``values``, for every statistic: sum/mean/std as their
    formulas, min/max and the median at the point(s) holding the selected value(s) (a
    median of an even count: one half to each middle point).

    Returns:
        :class:`BinnedStatisticResult` ``(statistic, bin_edges, binnumber)``: ``statistic``
        ``(*channels, nbins)`` (``(nbins,)`` for 1-D ``values``), ``bin_edges``
        ``(nbins + 1,)``, ``binnumber`` ``(N,)`` int. NumPy arrays when every argument is
        concrete (as SciPy's named tuple), JAX arrays under ``jit``/``vmap``/``grad``.

    Raises:
        ValueError: concrete ``x`` holding NaN, ``range`` with ``lo > hi``, edges not strictly
            increasing, values not matching ``len(x)``, an unknown statistic, ``nan_policy``
            or ``method``, a road that cannot compute the statistic, ``values=None`` with a
            statistic other than ``"count"``, or NaN in ``values`` with
            ``nan_policy="raise"``. Traced edges (``bins``, ``range``, or int ``bins`` over
            traced ``x``) that are not finite and strictly increasing raise at run time (a
            check, see :func:`jaxsubset.checked`).
        TypeError: numbers as ``bins``/``range`` on a time axis, or dates on a numeric one.

    Example:
        >>> import jax.numpy as jnp, jaxsubset
        >>> x = jnp.array([0.0, 1.0, 2.0, 2.5, 4.0])
        >>> r = jaxsubset.binned_statistic(x, x, "sum", bins=2)
        >>> r.statistic.tolist(), r.bin_edges.tolist(), r.binnumber.tolist()
        ([1.0, 8.5], [0.0, 2.0, 4.0], [1, 1, 2, 2, 2])
        >>> jaxsubset.binned_statistic(x, None, "count", bins=[0.0, 1.0, 3.0]).statistic.tolist()
        [1.0, 3.0]
        >>> jaxsubset.binned_statistic(x, x, "median", bins=2, method="sort").statistic.tolist()
        [0.5, 2.5]
    """
    func = "binned_statistic"
    if binned_wide(func, x, bins, range):  # positions float32/int32 cannot hold: 64-bit bins
        return binned_exact(
            binned_statistic, x, values, statistic, bins, range, capacity=capacity,
            x_sorted=x_sorted, nan_policy=nan_policy, method=method, q=q,
        )  # fmt: skip
    fn, statistic, nan_policy, method = binned_args(statistic, q, nan_policy, method, func)
    tk = time_kind(x)
    if isinstance(bins, str):  # a period: its edges from the concrete dates, as dates
        bins = period_bins(x, tk, bins, range, func)
    x, vals = binned_values(x, values, statistic, nan_policy, func)
    if tk is not None:
        return host(
            binned_time(
                x, vals, statistic, fn, bins, range, tk, capacity, x_sorted, nan_policy, method
            )
        )
    if time_kind(bins) is not None or time_kind(range) is not None:
        raise TypeError(
            f"{func}: `bins`/`range` hold dates or durations but `x` is not a time axis"
        )
    if isinstance(range, str):
        raise TypeError(f"{func}: `range` must be (lo, hi) numbers, got {range!r}")
    edges, dec, uniform, proven = binned_edges(x, bins, range, func)
    res = binned_run(
        x, vals, statistic, fn, edges, dec, uniform, capacity, x_sorted, nan_policy, method,
        proven,
    )  # fmt: skip
    return host(BinnedStatisticResult(*res))


def binned_args(
    statistic: Any, q: Any, nan_policy: Any, method: Any, func: str
) -> tuple[Callable | None, str, str, str]:
    """``(fn, statistic, nan_policy, method)`` checked: a callable statistic as ``fn``."""
    fn = None
    if callable(statistic):
        fn, statistic = statistic, "callable"
        if q is not None:
            raise ValueError(f"{func}: `q` is given but statistic 'quantile' is not asked for")
    elif not isinstance(statistic, str) or statistic not in BINNED_STATISTICS:
        raise ValueError(
            f"{func}: `statistic` must be one of {', '.join(map(repr, BINNED_STATISTICS))} "
            f"or a callable, got {statistic!r}"
        )
    else:
        statistic = with_quantile((statistic,), q, func)[0]  # "quantile" -> "quantile(<q>)"
    nan_policy = check_nan_policy(nan_policy, func)
    method = check_method(method, func, ROADS)
    if fn is not None and method not in ("auto", "reference"):
        raise ValueError(
            f"{func}: a callable `statistic` is applied to padded bins (the reference road); "
            f"method must be 'auto' or 'reference', got {method!r}"
        )
    return fn, statistic, nan_policy, method


def binned_values(
    x: Any, values: Any, statistic: str, nan_policy: str, func: str
) -> tuple[Array, Array]:
    """``(x, values)`` checked and converted (``values`` None: zeros, for ``"count"``).

    Eager calls keep numeric data on the host (NumPy, in the mode's dtypes): they pad it to
    a bucket, a copy of its own, so a device copy first would cost one copy more."""
    keep = nan_policy != "raise" and bucketing.bucketed(x, values)
    x = as_x(x, func, keep)
    n_pts = x.shape[0]
    if values is None:
        if statistic != "count":
            raise ValueError(
                f"{func}: `values` may be None only with statistic='count' (as SciPy), got "
                f"statistic={statistic!r}"
            )
        # on the host when x is concrete: no program per new length
        dt = jnp.result_type(float)
        values = now_or_traced(
            x, lambda _: np.zeros((n_pts,), dt), lambda _: jnp.zeros((n_pts,), dt)
        )
    now_or_traced(x, lambda v: host_nan_x(np.asarray(v), func))
    vals = now_or_traced(values, lambda v: host_values(v, func, keep), traced_array)
    if vals.ndim == 0 or vals.shape[-1] != n_pts:
        raise ValueError(
            f"{func}: `values` must have shape (N,) or (*channels, N) with N = len(x) = "
            f"{n_pts}, got {tuple(vals.shape)}"
        )
    check_pairs((statistic,), vals.shape, func, "values")
    if nan_policy == "raise":
        raise_on_nan(vals, func, "values")
    return x, vals


def host_nan_x(x: np.ndarray, func: str) -> None:
    """Concrete float ``x`` must hold no NaN (SciPy's rule: a point without a bin)."""
    if x.dtype.kind == "f":
        nan = np.isnan(x)
        if nan.any():
            raise nan_in_x(func, int(np.argmax(nan)), int(nan.sum()))


def host_values(values: Any, func: str, keep: bool = False) -> Array:
    """Concrete ``values`` checked on the host (real numeric, held by the mode), on device
    (``keep``: on the host, in the mode's dtype)."""
    np_v = np.asarray(values)
    # bfloat16 (an ml_dtypes extension type, NumPy kind "V") is a float like float16
    if np_v.dtype.kind not in "biuf" and not jnp.issubdtype(np_v.dtype, jnp.floating):
        raise TypeError(f"{func}: `values` must be real numeric, got dtype {np_v.dtype}")
    check_int_fits(np_v, "values", func)  # int64 in 32-bit mode: jnp.asarray would wrap
    return host_array(values, np_v) if keep else device_array(values, np_v)


def host(res: BinnedStatisticResult) -> BinnedStatisticResult:
    """An eager result (no traced field) as NumPy arrays, as SciPy's; traced ones stay JAX's.

    SciPy's named tuple holds ``numpy.ndarray`` fields, and NumPy's testing helpers
    (``assert_equal`` of ``res[0]`` and ``res.statistic``) compare only those elementwise.
    """
    return now_or_traced(
        tuple(res), lambda r: BinnedStatisticResult(*(np.asarray(a) for a in r)), lambda _: res
    )


def binned_time(
    x: Array,
    values: Array,
    statistic: str,
    fn: Callable | None,
    bins: Any,
    rng: Any,
    tk: str,
    capacity: int | None,
    x_sorted: bool | None,
    nan_policy: str,
    method: str,
) -> BinnedStatisticResult:
    """:func:`binned_statistic` on a time axis: ``x`` already int64 nanoseconds, edges exact
    (:func:`time_edges`). The edges come back as ``datetime64[ns]`` (``timedelta64[ns]`` for a
    duration axis) when they are concrete.
    """
    edges = time_edges(x, bins, rng, tk, "binned_statistic")
    dec = jnp.asarray(0, jnp.int32)  # unused: a time axis compares exactly
    res = BinnedStatisticResult(
        *binned_run(
            x, values, statistic, fn, edges, dec, False, capacity, x_sorted, nan_policy, method
        )
    )
    unit = "datetime64[ns]" if tk == "M" else "timedelta64[ns]"
    return now_or_traced(
        res.bin_edges,
        lambda e: res._replace(bin_edges=np.asarray(e, np.int64).view(unit)),
        lambda _: res,
    )
