"""Statistics over subsets given by LABELS: a bin per point, points in any order.

Roads (``_registry.LABEL_ROADS``, chosen only by ``reduce.road("labels", ...)``):

- ``"scatter"`` (the pure-JAX CPU road): scatters into the bins with the folds of
  ``reduce``'s table (``Sum`` by scatter-add, ``Extreme`` by scatter-min/max), then the finishes
  every road shares (``reduce``: mean, extremes, spread). ``M2`` in TWO passes about a
  per-bin shift that is one of the bin's own values (the mean of the shifted values first,
  then the scatter of squared deviations from it), so a constant or one-point bin has
  deviations of exactly zero and a variance of exactly 0; the median by a radix select
  (``_median.segment_median``). Statistics it has no formula for (first/last) take the sort
  road.
- ``"sort"`` (backend-neutral, the GPU/TPU road): one stable sort by label makes every bin a
  contiguous index range, then the range dispatcher (``reduce_ranges``); the median and the
  quantiles by one sort of (label, value) pairs and the elements of their ranks read by index.
- ``"reference"``: the same sort, then the padded reference road over the ranges.

Every road follows the registry's conventions (``_registry``): empty bins NaN except
count/sum 0, ``omit`` leaves NaN readings out per channel, a held NaN makes a statistic NaN
otherwise, var/std NaN where ``n - ddof <= 0`` or a value is infinite, and no NaN gradient
reaches a finite result (non-finite bins are masked before every product).
"""

from typing import Any

import jax
import jax.numpy as jnp
from jax import lax

from .._core import Array, index_dtype, now_or_traced
from ..reduce import (
    LABEL_ROADS,
    ORDER,
    Extreme,
    Fold,
    Request,
    Sum,
    base_name,
    check_method,
    extreme_statistic,
    float_dtype,
    fold_of,
    is_count,
    key_dtype,
    mean_statistic,
    quantile_q,
    road as choose_road,
    segment_median,
    sorted_median,
    sorted_quantile,
    spread_statistics,
)
from ._reference import reference_ranges


def work_dtype(dtype: Any) -> Any:
    """The float dtype statistics are accumulated in: float64 with x64, else float32.

    float16/bfloat16 values are computed in float32 (their results are cast back), so a sum
    or count of many points does not saturate a 10-bit mantissa.
    """
    return jnp.float64 if jax.config.read("jax_enable_x64") else jnp.float32


def clean_labels(label: Array, nbins: int) -> Array:
    """``label`` in ``[0, nbins)`` kept, every other value mapped to ``nbins`` (no bin), as
    int32 (a bin index fits whatever the number of points: half the bytes of int64 for the
    scatters and gathers that read them)."""
    label = jnp.asarray(label)
    inside = (label >= 0) & (label < nbins)
    return jnp.where(inside, label, nbins).astype(jnp.int32)


def group_by_label(y: Array, lab: Array, nbins: int) -> tuple[Array, Array, Array, Array]:
    """``(ys, slab, start, count)``: ``y`` in stable label order and each bin's index range.

    ``lab`` is clean (``[0, nbins]``, ``nbins`` for no bin); the points in no bin sort last.
    """
    idt = index_dtype()
    order = jnp.argsort(lab, stable=True)
    slab = lab[order]
    bounds = jnp.searchsorted(slab, jnp.arange(nbins + 1, dtype=idt), side="left").astype(idt)
    return y[order], slab, bounds[:-1], bounds[1:] - bounds[:-1]


def per_bin(fold: Fold, lab: Array, upd: Array, nbins: int, offset: int = 0) -> Array:
    """``(nbins, C)``: the rows of ``upd`` ``(N, C)`` combined into their bins by ``fold`` (an
    elementwise one: ``Sum``, ``Extreme``).

    The fold's combination as a scatter from its identity (``reduce``'s folds: the tree and the
    sliding road combine with the same folds). One 1-D scatter per column (XLA's CPU scatter
    of multi-column rows takes a much slower path than one scatter per column; the results are
    the same). Bin ``k`` is label ``offset + k``; every other label is dropped (scattered
    into ``nbins + offset`` slots, the first ``offset`` cut off).
    """
    size = nbins + offset
    cols = []
    for i in range(upd.shape[1]):
        acc = jnp.full((size,), fold.ident, upd.dtype)
        cols.append(scatter(fold.scatter, acc, lab, upd[:, i])[offset:])
    return jnp.stack(cols, axis=1)


def per_point(table: Array, lab: Array, nbins: int, offset: int, fill: Any) -> Array:
    """``(N, C)``: each point's row of the per-bin ``table`` ``(nbins, C)`` (bin ``k`` is label
    ``offset + k``), ``fill`` for a point in no bin. A gather that fuses into the pass
    reading it."""
    pad = jnp.full((1, table.shape[1]), fill, table.dtype)
    ext = jnp.concatenate([pad, table, pad])
    return ext[jnp.clip(lab - (offset - 1), 0, nbins + 1)]


SCATTERS = {"add": lax.scatter_add, "min": lax.scatter_min, "max": lax.scatter_max}
ONE_INDEX = lax.ScatterDimensionNumbers(
    update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,)
)


def scatter(how: str, acc: Array, lab: Array, upd: Array) -> Array:
    """``acc.at[lab].<how>(upd, mode="drop")`` with every label outside ``[0, len(acc))``
    dropped, negative ones too: no cleaning or wrapping of the labels first (XLA's CPU
    scatter takes its indices as an array, so either would be one more pass writing every
    label again)."""
    mode = lax.GatherScatterMode.FILL_OR_DROP
    return SCATTERS[how](acc, lab[:, None], upd, ONE_INDEX, mode=mode)


def scatter_road(
    y: Array,
    lab: Array,
    nbins: int,
    stats: tuple[str, ...],
    ddof: int,
    omit: bool,
    offset: int = 0,
) -> dict[str, Array]:
    """The scatter road (see the module docstring); ``y`` ``(N, C)``, bin ``k`` is label
    ``offset + k`` (any other label: no bin; the labels are read as they are, no cleaning
    pass).

    The partials (counts, sums, extremes, ``M2``) by scatters; the statistics from them by
    the finishes every road shares (``reduce``: ``mean_statistic``, ``extreme_statistic``,
    ``spread_statistics``).
    """
    idt = index_dtype()
    num, c = y.shape
    wdt = work_dtype(y.dtype)
    is_float = jnp.issubdtype(y.dtype, jnp.inexact)
    yw = y.astype(wdt)
    nan = jnp.isnan(yw) if is_float else jnp.zeros(yw.shape, bool)
    # extremes (and the variance's shift) are exact in the input's own float dtype: scattered
    # from it, no pass writing the work-dtype copy XLA's scatter would read (float32 in
    # 64-bit mode); the sums are accumulated in the work dtype
    ye = y if is_float else yw
    # the points and (where a statistic needs them) the NaN readings per bin: integer
    # scatter-adds, exact. A held NaN reaches sum/mean/var through the arithmetic itself;
    # min/max/median need the count (scatter-min/max need not propagate NaN)
    # (int32 ones where every count fits: half the bytes of the scatter's updates)
    one = jnp.ones((), jnp.int32 if num < 2**31 else idt)
    ones = jnp.broadcast_to(one, lab.shape)
    n_all = scatter("add", jnp.zeros((nbins + offset,), one.dtype), lab, ones)[offset:]
    n_all = n_all.astype(idt)
    n_all = jnp.broadcast_to(n_all[:, None], (nbins, c))
    if is_float and (omit or {"min", "max", "median"} & set(stats)):
        n_nan = per_bin(Sum(), lab, nan.astype(idt), nbins, offset)
    else:
        n_nan = jnp.zeros((nbins, c), idt)
    n = n_all - n_nan if omit else n_all
    held_nan = (n_nan > 0) & (not omit)
    out: dict[str, Array] = {}
    if "count" in stats:
        out["count"] = n
    if {"sum", "mean"} & set(stats):
        zero_nan = jnp.where(nan, 0, yw) if omit else yw  # omitted readings add nothing
        total = per_bin(Sum(), lab, zero_nan, nbins, offset)
        if "sum" in stats:
            out["sum"] = total
        if "mean" in stats:  # a held NaN: already NaN through the sum
            out["mean"] = mean_statistic(n, total)
    for s in ("min", "max"):
        if s in stats:
            fold = fold_of(s)
            ext = per_bin(fold, lab, jnp.where(nan, fold.ident, ye), nbins, offset)  # NaN: counted
            ext = ext.astype(wdt)
            out[s] = extreme_statistic(n, ext, held_nan)
    if {"var", "std", "sem"} & set(stats):
        m2, bad = scatter_m2(yw, lab, nbins, nan, n, omit, offset, ye)
        out.update(spread_statistics(stats, n, m2, ddof, bad | held_nan))
    if "median" in stats:
        kdt = key_dtype(wdt)
        lab = clean_labels(lab - offset, nbins)
        n_ext = jnp.concatenate([n, jnp.zeros((1, c), idt)])  # the no-bin segment: unused
        med = jnp.stack(
            [segment_median(lab, yw[:, i].astype(kdt), nbins + 1, n_ext[:, i]) for i in range(c)],
            axis=1,
        )[:nbins]
        out["median"] = jnp.where(held_nan, jnp.nan, med.astype(wdt))
    return out


def scatter_m2(
    yw: Array,
    lab: Array,
    nbins: int,
    nan: Array,
    n: Array,
    omit: bool,
    offset: int = 0,
    ye: Array | None = None,
) -> tuple[Array, Array]:
    """``(M2, bad)`` per bin in two passes of scatters, about a shift that is one of the bin's
    values; ``bad``: a bin holding an infinite value (its variance is NaN).

    The shift (the bin's largest real reading, no gradient: the variance does not depend on
    it) makes a constant or one-point bin's deviations exactly zero. Pass 1: the mean of the
    shifted values; pass 2: the sum of the squared deviations from it (a rounded mean adds
    ``n * err**2`` with ``err`` a rounding of the shifted mean, relatively ``eps**2`` times
    (spread / std)**2: no correction pass pays for itself). A bin holding an infinite value
    has a non-finite first sum; its points are masked before the squares so that no NaN
    reaches the gradient of another bin.
    """
    wdt = yw.dtype
    # without omit a NaN makes the bin's variance NaN whatever its shift: the values as they
    # are (no pass writing a NaN-free copy); a non-finite shift is replaced below
    ye = yw if ye is None else ye  # the values in a dtype whose max is theirs exactly
    fill = jnp.where(nan, -jnp.inf, ye) if omit else ye
    shift = per_bin(Extreme("max"), lab, lax.stop_gradient(fill), nbins, offset)
    shift = jnp.where(jnp.isfinite(shift), shift, 0).astype(wdt)
    z = yw - per_point(shift, lab, nbins, offset, 0)
    if omit:
        z = jnp.where(nan, 0, z)
    s1 = per_bin(Sum(), lab, z, nbins, offset)
    ok = jnp.isfinite(s1) & (n > 0)
    mz = jnp.where(ok, s1 / jnp.where(n > 0, n, 1).astype(wdt), 0)
    ok_pt = per_point(ok, lab, nbins, offset, False)
    d = jnp.where(ok_pt, z - per_point(mz, lab, nbins, offset, 0), 0)
    if omit:
        d = jnp.where(nan, 0, d)
    return per_bin(Sum(), lab, d * d, nbins, offset), ~jnp.isfinite(s1)


def _ranges(ys: Array, start: Array, count: Array, request: Request) -> dict[str, Array]:
    from ._dispatch import reduce_ranges

    return reduce_ranges(ys, start, count, request)


def sort_road(
    y: Array, lab: Array, nbins: int, request: Request, reference: bool
) -> dict[str, Array]:
    """The sort and reference roads: one stable sort by label, then ranges (the request's
    statistics, ``ddof``, ``omit`` and, for the reference road, ``capacity``)."""
    stats, ddof, omit, capacity = request.statistics, request.ddof, request.omit, request.capacity
    ys, slab, start, count = group_by_label(y, lab, nbins)
    out: dict[str, Array] = {}
    if reference:
        if capacity is None:
            # the largest bin when the labels are concrete, else N points (every bin fits)
            capacity = now_or_traced(
                count, lambda c: max(int(jnp.max(c, initial=0)), 1), lambda _: y.shape[0]
            )
        return reference_ranges(
            ys, start, count, stats, ddof=ddof, omit=omit, capacity=max(int(capacity), 1)
        )
    rest = tuple(s for s in stats if base_name(s) not in ORDER)
    if rest:
        # every bin a range: the range dispatcher's "auto" roads (no order statistic here,
        # so no capacity, and no padded road for the folded ones)
        ranges = request.replace(
            statistics=rest, method="auto", capacity=None, bound=None, padded=(False, False)
        )
        out.update(_ranges(ys, start, count, ranges))
    for s in stats:
        if base_name(s) not in ORDER:
            continue
        idt = index_dtype()
        wdt = work_dtype(y.dtype)
        kdt = key_dtype(wdt)
        is_float = jnp.issubdtype(y.dtype, jnp.inexact)
        c = y.shape[1]
        n = jnp.broadcast_to(count[:, None], (nbins, c)).astype(idt)
        if is_float:
            from ._reference import nan_counts

            n_nan = nan_counts(ys, start, count)
        else:
            n_nan = jnp.zeros((nbins, c), idt)
        ranked = n - n_nan if omit else n

        def one(i: int, s: str = s, kdt: Any = kdt, ranked: Array = ranked) -> Array:
            v = y[:, i].astype(kdt)
            if s == "median":
                return sorted_median(lab, v, nbins, start, ranked[:, i])
            return sorted_quantile(lab, v, nbins, start, ranked[:, i], quantile_q(s))

        med = jnp.stack([one(i) for i in range(c)], axis=1).astype(wdt)
        if not omit:
            med = jnp.where(n_nan > 0, jnp.nan, med)
        out[s] = med
    return out


def native_labels(
    y: Array,
    label: Array,
    nbins: int,
    request: Request,
    resolve: tuple[Array, Array, Array, bool] | None,
) -> dict[str, Array]:
    """The native road (``_native.native_bins``): one kernel call for every statistic, the
    pure-JAX roads ``"auto"`` takes elsewhere as its other-platform branch and derivative."""
    from .._native import native_bins

    def pure(v: Array, lab: Array) -> dict[str, Array]:
        return reduce_labels(v, lab, nbins, request.replace(method="auto"))

    x = edges = dec = None
    x_sorted = False
    if resolve is not None:
        x, edges, dec, x_sorted = resolve
    return native_bins(
        y, label, nbins, request.statistics, omit=request.omit, ddof=request.ddof,
        fallback=pure, x=x, edges=edges, dec=dec, x_sorted=x_sorted,
    )  # fmt: skip


def reduce_labels(
    y: Array,
    label: Array,
    nbins: int,
    request: Request,
    *,
    resolve: tuple[Array, Array, Array, bool] | None = None,
    offset: int = 0,
) -> dict[str, Array]:
    """Statistics of ``y`` per bin label, each on the road ``reduce.road("labels", ...)`` picks.

    Args:
        y: ``(N, C)`` values.
        label: ``(N,)`` int, the bin of each point in ``0..nbins-1``; any other value (-1,
            ``nbins``, ...) puts the point in no bin.
        nbins: static number of bins.
        request: what is asked (:class:`jaxsubset.reduce.Request`, its ``kind`` the caller's):
            ``statistics`` (``_registry.STATISTICS``), ``ddof``, ``omit``, ``method``
            (``"auto"`` or a label road's name), ``capacity`` (the static padded length of the
            reference road; None: the largest bin when the labels are concrete, else N, so
            every bin fits) and ``func`` (the public function, for error messages).
        resolve: ``(x, edges, dec, x_sorted)`` the labels came from (``_bin_numbers.binnumber``'s
            float rule, :func:`jaxsubset._native.x_resolvable`): the native road then resolves
            the bins in its kernel instead of reading ``label``.
        offset: static; label ``offset + k`` is bin ``k`` (SciPy's bin numbers as they are:
            ``offset=1``, which the scatter road reads without a pass making labels of them).

    Returns:
        dict of ``(nbins, C)`` arrays by statistic name: floats in the input's float dtype
        (the default float for integer ``y``), ``"count"`` in the index dtype.
    """
    stats, func = request.statistics, request.func
    method = check_method(request.method, func, LABEL_ROADS)
    y = jnp.asarray(y)
    out_dt = float_dtype(y.dtype)
    if out_dt in (jnp.float16, jnp.bfloat16):  # computed in float32, results cast back
        y = y.astype(jnp.float32)
    roads: dict[str, list[str]] = {}
    for s in dict.fromkeys(stats):
        roads.setdefault(choose_road("labels", s, method, func), []).append(s)
    out: dict[str, Array] = {}
    for road, names in roads.items():
        asked = request.replace(statistics=tuple(names))
        if road == "native":
            res = native_labels(y, label - offset, nbins, asked, resolve)
        elif road == "scatter":
            res = scatter_road(
                y, label, nbins, asked.statistics, request.ddof, request.omit, offset
            )
        else:
            lab = clean_labels(label - offset, nbins)
            res = sort_road(y, lab, nbins, asked, road == "reference")
        out.update(res)
    idt = index_dtype()
    return {s: (out[s].astype(idt) if is_count(s) else out[s].astype(out_dt)) for s in stats}
