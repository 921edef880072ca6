"""``scipy.stats.binned_statistic`` for 1-D x: a thin SciPy adapter over the statistics dispatcher.

Binning is SciPy's (``numpy.histogram`` edges, ``digitize``, the last edge closed with SciPy's
rounding rule, ``binnumber``); the statistics come from ONE place: sorted ``x`` makes every bin
an index range (``_statistics._dispatch.reduce_ranges``), unsorted or traced ``x`` gives every
point a bin label (``_statistics._labels.reduce_labels``).
"""

import builtins
import functools
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from . import _bucket, _native
from ._axis import bound_array, period_edges, time_kind, to_datetime64, x_to_ns
from ._checks import error_if
from ._exact import binned_exact, binned_wide
from ._native import native_bins
from ._statistics._blocks import sorted_bins
from ._statistics._dispatch import reduce_ranges
from ._statistics._labels import clean_labels, group_by_label, reduce_labels
from ._statistics._registry import (
    BLOCK_BIN_STATISTICS,
    CAPACITY_ROADS,
    LABEL_ROADS,
    ORDER,
    PAIR_STATISTICS,
    RANGE_ROADS,
    base_name,
    check_method,
    check_pairs,
    float_dtype,
    is_count,
    with_quantile,
)
from ._stats import raise_on_nan
from ._subsets import gather_padded
from ._typing import Array, ArrayLike
from ._validate import (
    as_x,
    check_int_fits,
    check_nan_policy,
    device_array,
    index_dtype,
    is_traced,
    nan_in_x,
    static_int,
    traced_array,
)
from .reduce import Request, choose
from .reduce._choose import bins_layout, road as choose_road
from .resolve._keys import keys


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


POW10 = np.array([10.0**k for k in range(0, 40)])


def around(v: Array, dec: Array) -> Array:
    """``numpy.around(v, dec)`` for a traced integer ``dec`` (numpy's two formulas)."""
    top = int(np.floor(np.log10(float(jnp.finfo(v.dtype).max))))
    p = jnp.asarray(POW10[: top + 1], v.dtype)[jnp.clip(jnp.abs(dec), 0, top)]
    # a true division, as NumPy's: with a constant ``dec`` (edges closed over under jit) XLA
    # would otherwise divide by multiplying with the rounded reciprocal, one ulp off
    p = lax.optimization_barrier(p)
    return jnp.where(dec >= 0, jnp.rint(v * p) / p, jnp.rint(v / p) * p)


def bucketize(x: Array, edges: Array, nbins: Array | None = None) -> Array:
    """``searchsorted(edges, x, side="right")`` for many float ``x`` and few increasing edges.

    A lookup table over ``64 * len(edges)`` equal cells of ``[edges[0], edges[-1]]`` holds the
    answer at every cell's lower boundary; a cell rarely holds more than one edge, so the
    answer is the table's entry plus two comparisons with the next edges (an arithmetic
    guess, five gathers from small tables per point). Every answer is then verified against its
    two edges; a miss (clustered edges, or rounding at a cell boundary) sends the call to
    ``jnp.searchsorted`` under ``lax.cond``. ``jnp.searchsorted`` alone is log2(len(edges))
    dependent gathers per point.

    ``nbins`` (traced): the edges past ``edges[nbins]`` are padding (+inf, see
    :func:`binnumber`); a point above the last real edge still gets ``nbins + 1``.
    """
    k1 = edges.shape[0]
    m = min(64 * k1, 1 << 20)
    idt = jnp.int32
    lo = edges[0]
    hi = edges[-1] if nbins is None else edges[nbins]
    top = k1 if nbins is None else (nbins + 1).astype(idt)
    scale = m / (hi - lo)
    cells = lo + jnp.arange(m, dtype=edges.dtype) / scale
    table = jnp.searchsorted(edges, cells, side="right").astype(idt)
    table = jnp.concatenate([jnp.zeros((1,), idt), table, jnp.full((1,), top, idt)])
    t = jnp.clip((x - lo) * scale, -1, m)
    t = jnp.where(jnp.isnan(t), 0, jnp.floor(t)).astype(idt) + 1  # 0 below, m + 1 above
    a = table[t]
    ext = jnp.concatenate([edges, jnp.full((2,), jnp.inf, edges.dtype)])
    d = a + (ext[a] <= x).astype(idt) + (ext[a + 1] <= x).astype(idt)
    low = jnp.concatenate([jnp.array([-jnp.inf], edges.dtype), ext])
    ok = jnp.all(((low[d] <= x) & (x < low[d + 1])) | jnp.isnan(x))
    return lax.cond(ok, lambda: d, lambda: jnp.searchsorted(edges, x, side="right").astype(idt))


def binnumber(
    x: Array, edges: Array, dec: Array, uniform: bool, nbins: Array | None = None
) -> Array:
    """scipy's bin numbers: ``digitize`` (0 below, ``nbins + 1`` above), the last edge closed.

    Float ``x`` is compared in the edges' dtype (SciPy's own rule: the edges take ``x``'s
    float dtype); integer ``x`` is compared with the edges exactly, in integers
    (:func:`int_binnumber`); a time axis (int64 nanoseconds, int64 edges) exactly too, its
    last edge closed exactly. A point "on" the last edge (above it but equal to it when both
    are rounded to ``dec`` decimals, SciPy's rule) goes to the last bin.

    ``nbins`` (traced, float ``x`` only): eager bucketing of the number of bins, the edges
    past ``edges[nbins]`` are +inf padding; the bin numbers are those of ``edges[:nbins + 1]``
    (``nbins + 1`` above the last real edge), so no point is in a padding bin.
    """
    idt = index_dtype()
    nb: Any = edges.shape[0] - 1 if nbins is None else nbins.astype(idt)
    last = edges[-1] if nbins is None else edges[nb]
    if jnp.issubdtype(edges.dtype, jnp.integer):
        d = jnp.searchsorted(edges, x, side="right").astype(idt)
        if nbins is not None:  # the padding edges (x's largest value) are at or above every x
            d = jnp.minimum(d, nb + 1)
        return jnp.where(x == last, d - 1, d)
    if jnp.issubdtype(x.dtype, jnp.integer):
        return int_binnumber(x, edges, dec, nbins)
    x = x.astype(edges.dtype)
    if uniform:
        lo, hi = edges[0], last
        scale = nb / (hi - lo)

        def guess() -> Array:
            g = jnp.floor((x - lo) * scale) + 1
            return jnp.clip(jnp.where(jnp.isnan(g), nb + 1, g), 0, nb + 1).astype(idt)

        def search() -> Array:  # no arithmetic guess: the search, exact
            return jnp.minimum(jnp.searchsorted(edges, x, side="right"), nb + 1).astype(idt)

        # the span or its reciprocal beyond the dtype (float32 edges near +-3e38, or 100 bins
        # over 1e-37) would make every guess 0 or NaN, further off than the steps below mend
        ok = (scale > 0) & jnp.isfinite(scale)
        g = lax.cond(ok, guess, search)
        # the guess is off by at most one bin; the four edges around it make it exact: with
        # e[-1] = -inf and e[nb + 1] = +inf, the bin number is the number of edges at or
        # below x, (g - 2) + those of e[g - 2 .. g + 1] (one read of four neighbours per
        # point, not two dependent steps of two reads each)
        ninf = jnp.full((2,), -jnp.inf, edges.dtype)
        table = jnp.concatenate([ninf, edges, -ninf]).astype(edges.dtype)
        window = jnp.stack([table[k : k + table.shape[0] - 3] for k in range(4)], axis=1)
        d = g - 2 + jnp.sum(window[g] <= x[:, None], axis=1, dtype=jnp.int32).astype(idt)
        d = jnp.clip(d, 0, nb + 1)
    else:
        d = bucketize(x, edges, nbins).astype(idt)
        if nbins is not None:  # +inf is above every real edge and at or below the padding
            d = jnp.minimum(d, nb + 1)
    d, kx, k_last = exact_bins(x, edges, d, nb)
    on_edge = (kx >= k_last) & (around(x, dec) == around(last, dec))
    d = jnp.where(on_edge, d - 1, d)
    return jnp.where(jnp.isnan(x), nb + 1, d)


def exact_bins(x: Array, edges: Array, d: Array, nb: Any) -> tuple[Array, Array, Array]:
    """``d`` (bin numbers from float arithmetic) verified in the order-preserving integer keys
    of ``x`` and the edges, and searched in them where any is off: float comparisons on the
    CPU flush subnormals to zero (NumPy's ``test_gh_23110``: -0.9e-308 in the first of two
    bins over ``(-1e-308, -2e-313)``), the keys never. Returns ``(d, keys(x), key of the
    last real edge)``."""
    kx, ke = keys(x), keys(edges)
    nb = jnp.asarray(nb, d.dtype)
    bottom = jnp.full((1,), jnp.iinfo(ke.dtype).min, ke.dtype)
    top = jnp.full((2,), jnp.iinfo(ke.dtype).max, ke.dtype)
    table = jnp.concatenate([bottom, ke, top])  # table[d]: the lower edge of bin d
    inside = (d <= nb) & (table[jnp.clip(d, 0, nb + 1)] <= kx)
    above = (d > nb) | (kx < table[jnp.clip(d + 1, 0, nb + 2)])
    # keys past edges[nb] (padding, +inf) count as above the last real edge
    ok = jnp.all(((d == 0) | inside) & ((d == nb + 1) | above | (d > nb)) | jnp.isnan(x))

    def search() -> Array:
        return jnp.minimum(jnp.searchsorted(ke, kx, side="right").astype(d.dtype), nb + 1)

    return lax.cond(ok, lambda: d, search), kx, ke[jnp.minimum(nb, ke.shape[0] - 1)]


POW10_INT = [10**k for k in range(19)]


def int_binnumber(x: Array, edges: Array, dec: Array, nbins: Array | None = None) -> Array:
    """:func:`binnumber` of integer ``x`` against float edges, exactly, in integers.

    For an integer ``x`` and a float edge ``e``, ``x >= e`` exactly when ``x >= ceil(e)``, so
    the edges become integer thresholds (those beyond the integer range hold no point) and
    every comparison is an integer one: int64 epoch milliseconds or nanoseconds never pass
    through float64 (exact only to 2**53) or float32. The last-edge rule rounds ``x`` to
    ``dec`` decimals as ``numpy.around`` rounds integers (half to even), in integers.

    ``nbins`` (traced): the edges past ``edges[nbins]`` are +inf padding (eager bucketing),
    thresholds that fit no integer, so they never count (``n_fit``); the last-edge rule
    reads ``edges[nbins]``.
    """
    idt = index_dtype()
    info = jnp.iinfo(x.dtype)
    bits = info.bits
    lim = float(2 ** (bits - 1)) if info.min < 0 else float(2**bits)
    ce = jnp.ceil(edges)
    fits = ce < lim
    t = jnp.where(fits, jnp.maximum(ce, float(info.min)), 0).astype(x.dtype)
    t = jnp.where(fits, t, info.max)  # beyond the range: a sorted suffix, clamped below
    n_fit = jnp.sum(fits).astype(idt)
    d = jnp.minimum(jnp.searchsorted(t, x, side="right").astype(idt), n_fit)
    li: Any = -1 if nbins is None else nbins.astype(idt)  # the last real edge
    # the last edge: x >= e_last and around(x, dec) == around(e_last, dec)
    target = around(edges[li], dec)
    whole = (target == jnp.floor(target)) & (target < lim) & (target >= float(info.min))
    tgt = jnp.where(whole, target, 0).astype(x.dtype)
    top = len(str(int(info.max))) - 1  # the largest power of ten x's dtype holds (int8: 100)
    p = jnp.asarray(POW10_INT[: top + 1], x.dtype)[jnp.clip(-dec, 0, top)]
    q = x // p
    rem = x - q * p
    up = (2 * rem > p) | ((2 * rem == p) & (q % 2 == 1))
    rounded = jnp.where(dec >= 0, x, (q + up.astype(x.dtype)) * p)
    rounded = jnp.where(-dec > top, 0, rounded)  # rounded to more digits than x has: 0
    on_edge = (d >= n_fit) & fits[li] & (x >= t[li]) & whole & (rounded == tgt)
    return jnp.where(on_edge, d - 1, d)


def bounds(d: Array, nbins: int) -> tuple[Array, Array]:
    """For sorted ``x``: each bin's index range, from the non-decreasing bin numbers ``d``.

    ``d`` is non-decreasing in sorted ``x`` (digitize is monotone, and the points moved into
    the last bin by SciPy's rounding rule are the first run at and above the last edge), so
    bin ``k`` (``d == k + 1``) is the run ``[searchsorted(d, k + 1), searchsorted(d, k + 2))``.
    """
    idt = index_dtype()
    b = jnp.searchsorted(d, jnp.arange(1, nbins + 2, dtype=d.dtype), side="left").astype(idt)
    return b[:-1], b[1:] - b[:-1]


def reduce(
    v: Array,
    d: Array,
    nbins: int,
    stats: tuple[str, ...],
    omit: bool,
    x_sorted: bool,
    method: str,
    capacity: int | None,
    label_of: Callable[[Array], Array] | None = None,
    resolve: tuple[Array, Array, Array, bool] | None = None,
) -> dict[str, Array]:
    """The dispatcher's statistics of ``v`` ``(N, C)`` in the bins (bin number ``d``).

    ``reduce.bins_layout`` (the chooser's rule for bins) decides: by whole blocks
    (``sorted_bins``: the boundary chose it on the real shapes and passes ``label_of(i)``,
    the bins of the points at indices ``i``), by labels (``reduce_labels``), or as index
    ranges (``reduce_ranges``: sorted ``x`` makes every bin one; with ``method="tree"`` on
    unsorted ``x`` one sort by bin first). ``resolve``: ``(x, edges, dec, x_sorted)`` that
    ``d`` came from, for the native road, which resolves the bins in its kernel.
    """
    func = "binned_statistic"
    if label_of is not None and all(base_name(s) in BLOCK_BIN_STATISTICS for s in stats):
        out = sorted_bins(v, label_of, nbins, stats, 0, omit, force=True)
        if out is not None:
            fdt = float_dtype(v.dtype)
            return {s: a if is_count(s) else a.astype(fdt) for s, a in out.items()}
    label = d - 1  # 0..nbins-1 inside; -1 and nbins (the outlier bins) in no bin
    if bins_layout(x_sorted, stats, method)[0] == "labels":
        return reduce_labels(
            v, label, nbins, stats, omit=omit, method=method, capacity=capacity, func=func,
            resolve=resolve,
        )  # fmt: skip
    if x_sorted:
        ys, (start, count) = v, bounds(d, nbins)
    else:  # method="tree" on unsorted x: one sort by bin makes the bins ranges
        ys, _, start, count = group_by_label(v, clean_labels(label, nbins), nbins)
    cap = None
    # a bin may hold every point; the native road's median needs it for its pure-JAX branch
    order = any(base_name(s) in ORDER for s in stats)
    if method in CAPACITY_ROADS or (method in ("auto", "native") and order):
        cap = capacity if capacity is not None else max(v.shape[0], 1)
    return reduce_ranges(ys, start, count, stats, omit=omit, method=method, capacity=cap, func=func)


def scipy_statistic(
    v: Array,
    d: Array,
    nbins: int,
    statistic: str,
    nan_policy: str,
    x_sorted: bool,
    method: str,
    capacity: int | None,
    label_of: Callable[[Array], Array] | None = None,
    resolve: tuple[Array, Array, Array, bool] | None = None,
) -> Array:
    """SciPy's statistic ``(nbins, C)`` from the dispatcher's registry statistics.

    ``label_of``: the bins of the points at given indices where the boundary chose whole
    blocks (``reduce.bins_layout``), else None.

    ``"omit"``: the registry's omit rule. ``"propagate"`` keeps SciPy's own NaN behaviour,
    which is the registry's ``omit=False`` except for two statistics: ``"min"`` skips NaN (the
    registry's omitted min: NaN only for a bin of NaN), and ``"median"`` is the middle of the
    bin's values sorted with NaN last, i.e. the median of the values with NaN read as +inf,
    NaN when a NaN reaches the upper middle (``n_nan >= ceil(n / 2)``).
    """
    func = "binned_statistic"
    omit = nan_policy == "omit"
    is_float = jnp.issubdtype(v.dtype, jnp.inexact)

    def run(vals: Array, stats: tuple[str, ...], omit_: bool) -> dict[str, Array]:
        return reduce(vals, d, nbins, stats, omit_, x_sorted, method, capacity, label_of, resolve)

    if statistic == "median" and not omit and is_float:

        def scipy_median(vals: Array, dd: Array, meth: str, res: Any) -> Array:
            held = jnp.isnan(vals)
            filled = jnp.where(held, jnp.asarray(jnp.inf, vals.dtype), vals)
            med = reduce(
                filled, dd, nbins, ("median",), False, x_sorted, meth, capacity, label_of, res
            )["median"]
            counts = reduce(
                held.astype(jnp.int32), dd, nbins, ("count", "sum"), False, x_sorted, "auto",
                None, resolve=res,
            )  # fmt: skip
            n, n_nan = counts["count"], counts["sum"]
            return jnp.where(n_nan >= n - n // 2, jnp.nan, med)

        native = label_of is None and bins_layout(x_sorted, ("median",), method)[0] == "labels"
        if native and choose_road("labels", "median", method, func) == "native":
            # the native kernel ranks NaN above every value itself: one call
            def pure(vals: Array, lab: Array) -> dict[str, Array]:
                meth = "auto" if method == "native" else method
                return {"median": scipy_median(vals, lab + 1, meth, None)}

            x, edges, dec, srt = resolve if resolve is not None else (None, None, None, False)
            return native_bins(
                v, d - 1, nbins, ("median",), omit=False, ddof=0, fallback=pure, x=x,
                edges=edges, dec=dec, x_sorted=srt, nan_last=True,
            )["median"]  # fmt: skip
        return scipy_median(v, d, method, resolve)
    if statistic == "min" and is_float:
        return run(v, ("min",), True)["min"]
    out = run(v, (statistic,), omit)[statistic]
    return out


binnumber_jit = jax.jit(binnumber, static_argnames=("uniform",))


@functools.partial(
    jax.jit,
    static_argnames=(
        "statistic", "uniform", "x_sorted", "capacity", "fn", "nan_policy", "method", "blocks"
    ),
)  # fmt: skip
def _binned_core(
    x: Array,
    v: Array,
    edges: Array,
    dec: Array,
    statistic: str,
    uniform: bool,
    x_sorted: bool,
    capacity: int | None,
    fn: Callable | None,
    nan_policy: str,
    method: str,
    nbins: Array | None = None,
    blocks: bool = False,
) -> tuple[Array, Array]:
    """Statistic ``(nbins, C)`` and binnumber ``(N,)``; ``v`` is ``(N, C)``.

    ``nbins`` (traced): the real number of bins of edges padded with +inf (eager bucketing);
    the points above the last real edge then fill the first padding bin, which is cut off.
    ``blocks``: the chooser's ``"blocks"`` layout (bins of sorted x by whole blocks; the bin
    numbers of a few points only, so the full ``binnumber`` is left to a caller who reads it).
    """
    nb = edges.shape[0] - 1
    # float x against float edges of its dtype: the native road resolves the bins in its
    # kernel, and the bin numbers (the result's ``binnumber``) by a kernel call of their own,
    # which XLA drops where they are not read (no XLA resolution traced on a first call)
    resolve = None
    if nbins is None and jnp.issubdtype(x.dtype, jnp.floating):
        xe = x.astype(edges.dtype)
        if _native.x_resolvable(xe, edges):
            resolve = (xe, edges, dec, x_sorted)
    if resolve is not None and _native.usable():
        d = _native.native_binnumber(
            resolve[0], edges, dec, lambda: binnumber(x, edges, dec, uniform, nbins)
        )
    else:
        d = binnumber(x, edges, dec, uniform, nbins)
    out_dtype = float_dtype(v.dtype)
    if fn is None:
        label_of = None
        if blocks:

            def label_of(i: Array) -> Array:  # the bins of a few points
                return binnumber(x[i], edges, dec, uniform, nbins) - 1

        stat = scipy_statistic(
            v, d, nb, statistic, nan_policy, x_sorted, method, capacity, label_of, resolve
        )
        if statistic == "count":  # SciPy's counts are floats (float32 for half floats)
            cdt = jnp.float32 if out_dtype in (jnp.float16, jnp.bfloat16) else out_dtype
            return stat.astype(cdt), d
        return stat.astype(out_dtype), d
    # a callable: padded subsets of every bin, in bin order
    assert capacity is not None  # for mypy: `binned_run` sets one for a callable
    if x_sorted:
        ys, (start, count) = v, bounds(d, nb)
    else:
        ys, _, start, count = group_by_label(v, clean_labels(d - 1, nb), nb)
    sub = gather_padded(
        jnp.zeros((v.shape[0],), out_dtype), ys.astype(out_dtype), start, count, capacity
    )
    omit = nan_policy == "omit"

    def per_bin(yb: Array, mb: Array) -> Array:
        def one(col: Array) -> Array:
            m = mb & ~jnp.isnan(col) if omit else mb  # "omit": the mask leaves NaN out
            return jnp.asarray(fn(col, m))

        return jax.vmap(one, in_axes=1)(yb)

    res = jnp.asarray(jax.vmap(per_bin)(sub.y, sub.mask))
    if res.shape != (nb, v.shape[1]):
        raise ValueError(
            "binned_statistic: a callable `statistic` must return a scalar per bin, got shape "
            f"{res.shape[2:] if res.ndim > 2 else ()}"
        )
    res = res.astype(jnp.promote_types(res.dtype, out_dtype))
    return jnp.where((count > capacity)[:, None], jnp.nan, res), d


def edges_dtype(x: Array) -> Any:
    return x.dtype if jnp.issubdtype(x.dtype, jnp.floating) else jnp.result_type(float)


def bin_count(bins: Any, func: str) -> int | None:
    """The static number of bins when ``bins`` is an int, None when it holds the edges."""
    if is_traced(bins) and traced_array(bins).ndim == 0:
        static_int(bins, "bins", func)  # raises: the number of bins sets a shape
    if isinstance(bins, int | np.integer) and not isinstance(bins, bool | np.bool_):
        return static_int(bins, "bins", func)
    return None


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
    is closed, with SciPy's rounding at the last edge), same ``binnumber`` (0 below the range,
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
    edges, dec, uniform = binned_edges(x, bins, range, func)
    return host(
        binned_run(
            x, vals, statistic, fn, edges, dec, uniform, capacity, x_sorted, nan_policy, method
        )
    )


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
    """``(x, values)`` checked and converted (``values`` None: zeros, for ``"count"``)."""
    x = as_x(x, func)
    n_pts = x.shape[0]
    if values is None:
        if statistic != "count":
            raise ValueError(
                f"{func}: `values` may be None only with statistic='count' (as SciPy), got "
                f"statistic={statistic!r}"
            )
        # on the host when x is concrete: no program per new length
        zeros = np.zeros if not is_traced(x) else jnp.zeros
        values = zeros((n_pts,), jnp.result_type(float))
    if not is_traced(x) and jnp.issubdtype(x.dtype, jnp.inexact):
        np_x = np.asarray(x)
        nan = np.isnan(np_x)
        if nan.any():
            raise nan_in_x(func, int(np.argmax(nan)), int(nan.sum()))
    if isinstance(values, list | tuple) and not is_traced(values):
        values = np.asarray(values)
    if is_traced(values):
        vals = traced_array(values)
    else:
        np_v = np.asarray(values)
        # bfloat16 (an ml_dtypes extension type, NumPy kind "V") is a float like float16
        if np_v.dtype.kind not in "biuf" and not jnp.issubdtype(np_v.dtype, jnp.floating):
            raise TypeError(f"{func}: `values` must be real numeric, got dtype {np_v.dtype}")
        check_int_fits(np_v, "values", func)  # int64 in 32-bit mode: jnp.asarray would wrap
        vals = device_array(values, np_v)
    if vals.ndim == 0 or vals.shape[-1] != n_pts:
        raise ValueError(
            f"{func}: `values` must have shape (N,) or (*channels, N) with N = len(x) = "
            f"{n_pts}, got {tuple(vals.shape)}"
        )
    check_pairs((statistic,), vals.shape, func, "values")
    if nan_policy == "raise":
        raise_on_nan(vals, func, "values")
    return x, vals


def binned_edges(x: Array, bins: Any, range: Any, func: str) -> tuple[Array, Array, bool]:
    """``(edges, dec, uniform)``: SciPy's edges of ``bins`` (a number of equal bins over
    ``range`` or the extremes of ``x``, or the edges themselves), checked (a run-time guard
    for traced ones), and the decimals SciPy rounds ``x`` to near an edge."""
    edt = edges_dtype(x)
    nbins = bin_count(bins, func)
    uniform = nbins is not None
    if nbins is not None:  # `uniform`
        if range is not None:
            rg: Any = range  # a pair, or an array of shape (2,) (also traced)
            if not is_traced(rg) and len(rg) == 1:
                rg = rg[0]
            if is_traced(rg) or not isinstance(rg, tuple | list) or len(rg) != 2:
                rg = jnp.asarray(rg).reshape(-1)
                if rg.shape != (2,):
                    raise ValueError(f"{func}: `range` must be (lo, hi), got shape {rg.shape}")
            lo, hi = rg[0], rg[1]
        else:
            if x.shape[0] == 0:
                raise ValueError(f"{func}: `x` is empty; pass `range` to define the bins")
            lo, hi = extremes(x)
        if not is_traced((lo, hi)):
            flo, fhi = float(lo), float(hi)
            if not (np.isfinite(flo) and np.isfinite(fhi)):
                raise ValueError(f"{func}: `range` must be finite, got ({flo}, {fhi})")
            if fhi < flo:
                raise ValueError(f"{func}: in `range`, start must be <= stop, got ({flo}, {fhi})")
            if flo == fhi:
                flo, fhi = flo - 0.5, fhi + 0.5
            np_edges = np.linspace(flo, fhi, nbins + 1, dtype=np.dtype(edt))
            edges = jax.device_put(np_edges)  # edt already; no program per shape
        else:
            wdt = jnp.promote_types(edt, jnp.result_type(float))
            lo = jnp.asarray(lo, wdt)
            hi = jnp.asarray(hi, wdt)
            same = lo == hi
            lo, hi = jnp.where(same, lo - 0.5, lo), jnp.where(same, hi + 0.5, hi)
            # a true division, as numpy.linspace's: XLA multiplies by the rounded 1 / nbins
            # where the divisor is a constant or (under vmap) a broadcast scalar, one ulp off
            # (3.8e22 for linspace's 0.0 on a range of +-3e38); `lo - lo` (0 for the finite
            # lo here; XLA does not fold it for floats) makes the divisor data of lo's shape
            step = (hi - lo) / (nbins + (lo - lo))
            edges = (jnp.arange(nbins + 1, dtype=wdt) * step + lo).at[-1].set(hi).astype(edt)
    else:
        edges = traced_array(bins) if is_traced(bins) else jax.device_put(np.asarray(bins, float))
        if edges.ndim != 1 or edges.shape[0] < 2:
            raise ValueError(
                f"{func}: `bins` must be an int or a 1-D array of at least 2 edges, got shape "
                f"{tuple(edges.shape)}"
            )
        edges = edges.astype(edt)
        nbins = edges.shape[0] - 1
    if is_traced(edges):
        edges = guard_edges(edges, func, traced_range=uniform)
        dmin = jnp.min(jnp.diff(edges))
        dec = (jnp.trunc(-jnp.log10(dmin)) + 6).astype(jnp.int32)
    else:
        # in the edges' dtype, as SciPy (and the traced branch above): float32 edges 0.1
        # apart have log10 exactly -1 in float32 but -0.99999999 in float64, one decimal less
        gap = np.min(np.diff(np.asarray(edges)))
        if not gap > 0:
            raise ValueError(
                f"{func}: `bins` edges must increase strictly; the smallest edge difference "
                f"is {float(gap)!r}"
            )
        dec = jnp.asarray(int(-np.log10(gap)) + 6, jnp.int32)
    return edges, dec, uniform


def guard_edges(edges: Array, func: str, *, traced_range: bool) -> Array:
    """Traced bin edges guarded by a run-time check: finite and strictly increasing.

    Concrete edges and ranges are checked on the host; traced ones (edges, a ``range``, or
    the extremes of traced ``x``) cannot be, and descending or NaN edges would put points in
    the wrong bins silently. The check (:func:`error_if`) costs only its predicate until it
    fires, and its message names the first pair of edges that does not increase.
    """
    d = jnp.diff(edges)
    bad = ~(d > 0)
    if jnp.issubdtype(edges.dtype, jnp.inexact):
        bad = bad | ~jnp.isfinite(edges[1:]) | ~jnp.isfinite(edges[:1])
    source = "the bins of `range` (or of the extremes of `x`)" if traced_range else "`bins`"

    def message(e: np.ndarray) -> str:
        e = np.asarray(e)
        fails = ~(e[1:] > e[:-1]) | ~np.isfinite(e[1:]) | ~np.isfinite(e[:-1])
        i = int(np.argmax(fails))
        return (
            f"{func}: {source}: the edges must be finite and increase strictly, but "
            f"edges[{i}]={e[i].item()!r}, edges[{i + 1}]={e[i + 1].item()!r}"
        )

    return error_if(edges, jnp.any(bad), message, edges)


def extremes(x: Array) -> tuple[Any, Any]:
    """``(min(x), max(x))``: on the host for concrete ``x`` (no program per new length)."""
    if is_traced(x):
        return jnp.min(x), jnp.max(x)
    h = np.asarray(x)
    return h.min(), h.max()


def host(res: BinnedStatisticResult) -> BinnedStatisticResult:
    """An eager result (no traced field) as NumPy arrays, as SciPy's; traced ones stay JAX's.

    SciPy's named tuple holds ``numpy.ndarray`` fields, and NumPy's testing helpers
    (``assert_equal`` of ``res[0]`` and ``res.statistic``) compare only those elementwise.
    """
    if is_traced(tuple(res)):
        return res
    return BinnedStatisticResult(*(np.asarray(a) for a in res))


def binned_run(
    x: Array,
    values: Array,
    statistic: str,
    fn: Callable | None,
    edges: Array,
    dec: Array,
    uniform: bool,
    capacity: int | None,
    x_sorted: bool | None,
    nan_policy: str,
    method: str,
) -> BinnedStatisticResult:
    """The shared tail of :func:`binned_statistic`: sortedness, capacity, channels, the core."""
    func = "binned_statistic"
    n_pts = x.shape[0]
    nbins = edges.shape[0] - 1
    if x_sorted is None:
        if is_traced(x):
            x_sorted = False
        else:
            np_x = np.asarray(x)
            x_sorted = bool(np_x.size < 2 or np.all(np_x[1:] >= np_x[:-1]))
    elif x_sorted and not is_traced(x):  # a promise checked where it is free: no wrong bins
        np_x = np.asarray(x)
        down = np_x[1:] < np_x[:-1]
        if down.any():
            i = int(np.argmax(down))
            a, b = np_x[i].item(), np_x[i + 1].item()
            raise ValueError(
                f"{func}: `x_sorted=True` promises ascending `x`, but x[{i}]={a!r} > "
                f"x[{i + 1}]={b!r}; pass x_sorted=None (detected) or False"
            )
    x_sorted = bool(x_sorted) and n_pts > 0  # no points: the scatter road handles it simply
    blocks = False
    if fn is None:  # the road choice, asked here at the boundary (recorded by explain)
        request = Request(func, "bins", (statistic,), method, 0, nan_policy == "omit", capacity)
        blocks = choose(request, x_sorted=x_sorted, n=n_pts, k=nbins).layout == "blocks"
    ch = tuple(values.shape[:-1])
    fill = None
    if n_pts > 0 and _bucket.bucketed(x, values, edges, dec):
        fill = outside(x, edges)
    padded: tuple[Array, Array, Array | None] | None = None
    if fill is not None:
        # eagerly, one program per bucket of lengths: padding points lie outside every bin,
        # and the bins too are padded: edges past the last one (+inf, or x's largest value on
        # a time axis) give empty bins that are cut off. A callable's capacity is found on
        # the padded bins, but the callable runs on the real ones: it is compiled for the
        # batch of bins, and XLA may round its reductions differently for another batch
        # size (the last bits of a sum), so padded bins could change its results
        xp = _bucket.pad(x, _bucket.bucket(n_pts), fill)
        pad_to = _bucket.bucket(nbins, _bucket.MIN_K) + 1
        top = np.inf if jnp.issubdtype(edges.dtype, jnp.floating) else fill
        padded = xp, _bucket.pad(edges, pad_to, top), jnp.asarray(nbins, index_dtype())
    if fn is not None or method == "reference":
        if capacity is None and not is_traced((x, edges, dec)):
            # the largest bin, rounded up to a power of two (few distinct compilations)
            if padded is None:
                d = np.asarray(binnumber_jit(x, edges, dec, uniform))
            else:
                d = np.asarray(binnumber_jit(padded[0], padded[1], dec, uniform, padded[2]))
            d = d[:n_pts]
            big = int(np.bincount(d, minlength=nbins + 2)[1:-1].max(initial=1))
            capacity = 1 << (max(big, 1) - 1).bit_length()
        elif capacity is None and fn is not None:
            raise TypeError(
                f"{func}: a callable `statistic` needs a static `capacity` under jit; "
                "compute it eagerly (the largest bin count) and pass capacity=..."
            )
        if capacity is not None:
            capacity = static_int(capacity, "capacity", func)
    else:
        capacity = None  # only the padded roads read it
    if padded is not None:
        xp, edges_p, nb = padded
        if fn is not None:  # the callable on the real bins (see above)
            edges_p, nb = edges, None
        c, size = int(np.prod(ch)), xp.shape[0]
        on_host = _bucket.on_host(values)
        vh = np.asarray(values) if on_host else values
        v = vh.reshape((c, n_pts)).T if on_host else jnp.moveaxis(vh.reshape((c, n_pts)), 0, 1)
        vp = _bucket.pad(v, size)
        st, dp = _binned_core(
            xp, vp, edges_p, dec, statistic, uniform, x_sorted, capacity, fn, nan_policy,
            method, nb, blocks=blocks,
        )  # fmt: skip
        stat_h = channels_first(np.asarray(st)[:nbins], statistic, ch)
        return BinnedStatisticResult(stat_h, edges, np.asarray(dp)[:n_pts])
    v = jnp.moveaxis(values.reshape((int(np.prod(ch)), n_pts)), 0, 1)
    stat, d = _binned_core(
        x, v, edges, dec, statistic, uniform, x_sorted, capacity, fn, nan_policy, method,
        blocks=blocks,
    )  # fmt: skip
    stat = channels_first(stat, statistic, ch)
    return BinnedStatisticResult(stat, edges, d)


def channels_first(stat: Any, statistic: str, ch: tuple[int, ...]) -> Any:
    """``(nbins, C)`` (``(nbins, C, C)`` for cov/corr) as SciPy's ``(*channels, nbins)``."""
    xp = np if isinstance(stat, np.ndarray) else jnp
    nbins = stat.shape[0]
    if statistic in PAIR_STATISTICS:
        return xp.moveaxis(stat, 0, -1)
    return xp.moveaxis(stat, 0, -1).reshape(ch + (nbins,))


def outside(x: Array, edges: Array) -> Any:
    """A padding value of ``x`` outside every bin (bin number ``nbins + 1``), or None.

    NaN for float ``x`` (binned above the range, after every value in sorted order); the
    largest integer for integer ``x`` while the last edge lies well below it.
    """
    if jnp.issubdtype(x.dtype, jnp.floating):
        return np.nan
    top = np.iinfo(np.dtype(x.dtype)).max
    last = np.asarray(edges)[-1]
    return top if float(last) < float(top // 4) else None


def period_bins(x: Any, tk: str | None, bins: str, rng: Any, func: str) -> np.ndarray:
    """The ``datetime64[ns]`` edges of a period ``bins`` (``"1M"``, ``"7D"``) over concrete
    dates ``x``: pandas ``resample``'s bins (:func:`jaxsubset.bin_edges`)."""
    if tk != "M":
        if is_traced(x):
            raise TypeError(
                f"{func}: `bins`={bins!r} is a period, whose edges are computed on the host "
                "from concrete dates, but `x` is traced (inside jit/vmap): compute the edges "
                f"outside first, `edges = jaxsubset.to_ns(jaxsubset.bin_edges(dates, {bins!r}))`, "
                "and pass `bins=edges`"
            )
        what = "holds durations, not dates" if tk == "m" else "is not a time axis"
        raise TypeError(
            f"{func}: `bins`={bins!r} is a period, but `x` {what}: periods such as '1M', '1Y', "
            "'7D' need numpy.datetime64 x"
        )
    if rng is not None:
        raise ValueError(
            f"{func}: `range` goes with an int `bins`; the bins of a period ({bins!r}) cover "
            "the data"
        )
    ns = x_to_ns(x, func)
    if ns.size == 0:
        raise ValueError(f"{func}: `x` is empty; a period's bins need at least one date")
    edges = period_edges(int(ns.min()), int(ns.max()), bins, f"{func}: `bins`={bins!r}")
    return edges.view("datetime64[ns]")


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
    """:func:`binned_statistic` on a time axis: ``x`` already int64 nanoseconds, edges exact.

    Int ``bins`` split ``range`` (dates, default the first and last time) in exact integer
    arithmetic, ``lo + floor(k * (hi - lo) / nbins)``: float64 cannot hold nanoseconds near
    1e18. The edges come back as ``datetime64[ns]`` (``timedelta64[ns]`` for a duration axis)
    when they are concrete.
    """
    func = "binned_statistic"
    nbins = bin_count(bins, func)
    if nbins is not None:  # uniform bins
        if rng is not None:
            if not is_traced(rng) and len(rng) == 1 and not isinstance(rng, str):
                rng = rng[0]
            if is_traced(rng):
                pair = jnp.asarray(rng).reshape(-1)
            else:
                if not isinstance(rng, tuple | list | np.ndarray) or len(rng) != 2:
                    raise ValueError(f"{func}: `range` must be (lo, hi) dates, got {rng!r}")
                lo_v = bound_array(rng[0], "range", x, func, tk)
                hi_v = bound_array(rng[1], "range", x, func, tk)
                pair = jnp.stack([jnp.asarray(lo_v).reshape(()), jnp.asarray(hi_v).reshape(())])
            if pair.shape != (2,):
                raise ValueError(f"{func}: `range` must be (lo, hi), got shape {pair.shape}")
            lo, hi = pair[0], pair[1]
        else:
            if x.shape[0] == 0:
                raise ValueError(f"{func}: `x` is empty; pass `range` to define the bins")
            lo, hi = extremes(x)
        if not is_traced((lo, hi)):
            ilo, ihi = int(lo), int(hi)
            if ihi < ilo:
                raise ValueError(
                    f"{func}: in `range`, start must be <= stop, got "
                    f"({to_datetime64([ilo])[0]}, {to_datetime64([ihi])[0]})"
                )
            if ilo == ihi:  # scipy widens an empty range by half a unit each side
                ilo, ihi = ilo - nbins, ihi + nbins
            if ihi - ilo < nbins:
                raise ValueError(
                    f"{func}: `range` spans {ihi - ilo} ns, fewer than bins={nbins}; the edges "
                    "must increase strictly"
                )
            np_edges = np.array(
                [ilo + (k * (ihi - ilo)) // nbins for k in builtins.range(nbins + 1)]
            )
            edges = jax.device_put(np_edges.astype(np.int64))  # no program per shape
        else:
            lo, hi = jnp.asarray(lo, jnp.int64), jnp.asarray(hi, jnp.int64)
            same = lo == hi
            lo, hi = jnp.where(same, lo - nbins, lo), jnp.where(same, hi + nbins, hi)
            span = hi - lo
            q, r = span // nbins, span % nbins
            k = jnp.arange(nbins + 1, dtype=jnp.int64)
            edges = guard_edges(lo + k * q + (k * r) // nbins, func, traced_range=True)
    else:
        if is_traced(bins):
            edges = jnp.asarray(bins)
        else:
            edges = jnp.asarray(bound_array(bins, "bins", x, func, tk))
        if edges.ndim != 1 or edges.shape[0] < 2:
            raise ValueError(
                f"{func}: `bins` must be an int or a 1-D array of at least 2 edges, got shape "
                f"{tuple(edges.shape)}"
            )
        edges = edges.astype(jnp.int64)
        if is_traced(edges):
            edges = guard_edges(edges, func, traced_range=False)
        else:
            e = np.asarray(edges)
            bad = e[1:] <= e[:-1]
            if bad.any():
                i = int(np.argmax(bad))
                raise ValueError(
                    f"{func}: `bins` edges must increase strictly, but bins[{i}]="
                    f"{to_datetime64(e[i : i + 1])[0]} >= bins[{i + 1}]="
                    f"{to_datetime64(e[i + 1 : i + 2])[0]}"
                )
    dec = jnp.asarray(0, jnp.int32)  # unused: a time axis compares exactly
    res = binned_run(
        x, values, statistic, fn, edges, dec, False, capacity, x_sorted, nan_policy, method
    )
    if not is_traced(res.bin_edges):
        unit = "datetime64[ns]" if tk == "M" else "timedelta64[ns]"
        res = res._replace(bin_edges=np.asarray(res.bin_edges, np.int64).view(unit))
    return res
