"""How :func:`jaxsubset.binned_statistic` computes: the bins' statistics from the dispatcher's
roads (whole blocks, labels, or index ranges, as the chooser's ``bins_layout`` rule says),
SciPy's NaN conventions on top, a callable on padded bins, and the eager padding of the points
and the bins to buckets around one compiled program (``_binned_core``).
"""

import functools
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from . import _native
from ._bin_numbers import binnumber, binnumber_jit, bounds
from ._core import Array, bucketing as _bucket, index_dtype, now_or_traced, static_int
from ._native import native_bins
from ._statistics import clean_labels, group_by_label, reduce_labels, reduce_ranges, sorted_bins
from ._subsets import gather_padded
from .reduce import (
    BLOCK_BIN_STATISTICS,
    CAPACITY_ROADS,
    ORDER,
    PAIR_STATISTICS,
    Request,
    base_name,
    bins_layout,
    choose,
    float_dtype,
    is_count,
    road as choose_road,
)


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
    request = Request(func, "bins", stats, method, 0, omit, capacity)
    if bins_layout(x_sorted, stats, method)[0] == "labels":
        # bin k is d == k + 1; 0 and nbins + 1 (the outlier bins) are in no bin
        return reduce_labels(v, d, nbins, request, resolve=resolve, offset=1)
    label = d - 1
    if x_sorted:
        ys, (start, count) = v, bounds(d, nbins)
    else:  # method="tree" on unsorted x: one sort by bin makes the bins ranges
        ys, _, start, count = group_by_label(v, clean_labels(label, nbins), nbins)
    cap = None
    # a bin may hold every point; the native road's median needs it for its pure-JAX branch
    order = any(base_name(s) in ORDER for s in stats)
    if method in CAPACITY_ROADS or (method in ("auto", "native") and order):
        cap = capacity if capacity is not None else max(v.shape[0], 1)
    return reduce_ranges(ys, start, count, request.replace(capacity=cap))


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


@functools.partial(
    jax.jit,
    static_argnames=(
        "statistic", "uniform", "x_sorted", "capacity", "fn", "nan_policy", "method", "blocks",
        "proven",
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
    proven: bool | None = None,
) -> tuple[Array, Array]:
    """Statistic ``(nbins, C)`` and binnumber ``(N,)``; ``v`` is ``(N, C)``.

    ``nbins`` (traced): the real number of bins of edges padded with +inf (eager bucketing);
    the points above the last real edge then fill the first padding bin, which is cut off.
    ``blocks``: the chooser's ``"blocks"`` layout (bins of sorted x by whole blocks; the bin
    numbers of a few points only, so the full ``binnumber`` is left to a caller who reads it).
    ``proven``: ``_bin_numbers.host_proven`` of concrete edges (None: decided at run time).
    """
    nb = edges.shape[0] - 1
    idt = index_dtype()  # the result's binnumber (int32 inside: bin numbers fit)
    # float x against float edges of its dtype: the native road resolves the bins in its
    # kernel, and the bin numbers (the result's ``binnumber``) by a kernel call of their own,
    # which XLA drops where they are not read (no XLA resolution traced on a first call);
    # eager buckets hand the kernels the real number of bins after the decimals
    resolve = None
    if jnp.issubdtype(x.dtype, jnp.floating):
        xe = x.astype(edges.dtype)
        if _native.x_resolvable(xe, edges):
            dk = jnp.asarray(dec, jnp.int32).reshape(())
            if nbins is not None:
                dk = jnp.stack([dk, jnp.asarray(nbins, jnp.int32)])
            resolve = (xe, edges, dk, x_sorted)
    if resolve is not None and _native.usable():
        # (in the result's dtype: on the CPU only the result reads it, the kernel resolving
        # the statistics' bins itself)
        d = _native.native_binnumber(
            resolve[0], edges, resolve[2],
            lambda: binnumber(x, edges, dec, uniform, nbins, proven=proven), idt,
        )  # fmt: skip
    else:
        d = binnumber(x, edges, dec, uniform, nbins, proven=proven)
    out_dtype = float_dtype(v.dtype)
    if fn is None:
        label_of = None
        if blocks:

            def label_of(i: Array) -> Array:  # the bins of a few points
                return binnumber(x[i], edges, dec, uniform, nbins, search=True) - 1

        stat = scipy_statistic(
            v, d, nb, statistic, nan_policy, x_sorted, method, capacity, label_of, resolve
        )
        if statistic == "count":  # SciPy's counts are floats (float32 for half floats)
            cdt = jnp.float32 if out_dtype in (jnp.float16, jnp.bfloat16) else out_dtype
            return stat.astype(cdt), d.astype(idt)
        return stat.astype(out_dtype), d.astype(idt)
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
    return jnp.where((count > capacity)[:, None], jnp.nan, res), d.astype(idt)


def sortedness(x: Array, x_sorted: bool | None, func: str) -> bool:
    """Whether ``x`` is ascending: detected when ``x_sorted`` is None, a promise checked where
    it is free (concrete ``x``: no wrong bins), and False for a traced ``x`` not promised."""

    def on_host(v: Array) -> bool:
        if x_sorted is False:
            return False
        np_x = np.asarray(v)
        down = np_x[1:] < np_x[:-1]
        if x_sorted is None:
            return not bool(down.any())
        if down.any():
            i = int(np.argmax(down))
            a, b = np_x[i].item(), np_x[i + 1].item()
            raise ValueError(
                f"{func}: `x_sorted=True` promises ascending `x`, but x[{i}]={a!r} > "
                f"x[{i + 1}]={b!r}; pass x_sorted=None (detected) or False"
            )
        return True

    return now_or_traced(x, on_host, lambda _: bool(x_sorted))


def largest_bin(
    x: Array,
    edges: Array,
    dec: Array,
    uniform: bool,
    padded: tuple[Array, Array, Array | None] | None,
) -> int:
    """The most points of a bin of concrete positions, rounded up to a power of two (few
    distinct compilations); ``padded``: the eager buckets' ``(x, edges, nbins)``."""
    if padded is None:
        d = np.asarray(binnumber_jit(x, edges, dec, uniform))
    else:
        d = np.asarray(binnumber_jit(padded[0], padded[1], dec, uniform, padded[2]))
    d = d[: x.shape[0]]
    big = int(np.bincount(d, minlength=edges.shape[0] + 1)[1:-1].max(initial=1))
    return 1 << (max(big, 1) - 1).bit_length()


def none(_: Any) -> None:
    """The traced side of a value only the host can compute: none (the caller decides)."""
    return None


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
    proven: bool | None = None,
) -> tuple[Any, Array, Any]:
    """The shared tail of :func:`jaxsubset.binned_statistic`: sortedness, capacity, channels,
    the core. ``proven``: ``binned_edges``' proof for edges known on the host. Returns
    ``(statistic, bin_edges, binnumber)``."""
    func = "binned_statistic"
    n_pts = x.shape[0]
    nbins = edges.shape[0] - 1
    x_sorted = sortedness(x, x_sorted, func)
    x_sorted = bool(x_sorted) and n_pts > 0  # no points: the scatter road handles it simply
    blocks = False
    if fn is None:  # the road choice, asked here at the boundary (recorded by explain)
        request = Request(func, "bins", (statistic,), method, 0, nan_policy == "omit", capacity)
        # the kernel finds the bins from float x itself; an integer or time axis' bin
        # numbers come from XLA first, every point's, where whole blocks read a few
        xf = jnp.issubdtype(x.dtype, jnp.floating)
        resolved = bool(xf and _native.x_resolvable(edges, edges))  # (x in the edges' dtype)
        choice = choose(request, x_sorted=x_sorted, n=n_pts, k=nbins, resolved=resolved)
        blocks = choice.layout == "blocks"
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
        if capacity is None:  # the largest bin when the positions are concrete
            capacity = now_or_traced(
                (x, edges, dec), lambda _: largest_bin(x, edges, dec, uniform, padded), none
            )
        if capacity is None and fn is not None:
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
        return stat_h, edges, np.asarray(dp)[:n_pts]
    v = jnp.moveaxis(values.reshape((int(np.prod(ch)), n_pts)), 0, 1)
    stat, d = _binned_core(
        x, v, edges, dec, statistic, uniform, x_sorted, capacity, fn, nan_policy, method,
        blocks=blocks, proven=proven,
    )  # fmt: skip
    stat = channels_first(stat, statistic, ch)
    return stat, edges, d


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
