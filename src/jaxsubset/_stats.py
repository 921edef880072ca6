"""Statistics over index ranges on the O(N) road: no padded copy where one is not needed.

Every subset is a contiguous index range of sorted ``x``, so sums, means and variances over any
number of ranges come from prefix sums (``P[stop] - P[start]``), and minima/maxima from a sparse
table of block extremes. Two roads, picked statically from ``N`` and the number of ranges ``K``
by a cost model measured on a 2-core CPU (see BENCHMARKS.md, "Statistics"):

* **few ranges** (``K * block`` much smaller than ``N``: bins, chunks, a handful of x-ranges):
  one reshape-reduce pass over the data gives per-block sums (or extremes, by halving, which
  XLA vectorises); each range is the block prefix (or a sparse-table query over blocks) plus
  two partial blocks read by a small gather of ``block`` points at each end. Cost
  ``N + K * block``: a few ``np.sum`` passes.
* **many ranges** (rolling windows, one per point): a full prefix sum, and for min/max a sparse
  table of ``log2(block) + 1`` levels plus a sparse table over blocks; O(1) gathers per range.

Precision: values are shifted by a reference (the mean of a strided sample) before the prefix
sums, so ``1e8 + noise`` keeps its digits; float32 data is accumulated in float64 when x64 is on.
Non-finite values never leak into neighbouring ranges: when any is present, NaN/+inf/-inf are
counted per range and the results follow NumPy (a range with a NaN gives NaN, and so on).
``nan_policy="omit"`` stays on these roads: NaN -> 0 beside a count of real readings in the
sums, NaN -> +inf/-inf for min/max, and the median's radix select ranks only real keys.
"""

import builtins
import functools
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ._capacity import _raise_if
from ._ranges import Ranges, _bound_array, rolling_ranges
from ._subsets import _gather
from ._time import time_kind, to_datetime64
from ._typing import Array, ArrayLike
from ._validate import as_x, check_closed, check_nan_policy, index_dtype, is_traced, static_int


STATISTICS = ("count", "sum", "mean", "var", "std", "min", "max", "median")

# Per-element costs (ns) measured on the 2-core development CPU (jax 0.10, float64, N = 1e7):
# a fused reshape-reduce pass, one step of a cumulative sum, one gathered element, a shift and
# a sparse-table level element (concatenate + min + stack).
_COST_REDUCE, _COST_CUMSUM, _COST_GATHER, _COST_SHIFT, _COST_TABLE = 0.4, 8.6, 3.3, 3.0, 15.0


# ---------------------------------------------------------------------------- small helpers
def _float_dtype(dtype: Any) -> Any:
    """The float dtype results come in: ``dtype`` if inexact, else the default float."""
    if jnp.issubdtype(dtype, jnp.inexact):
        return dtype
    return jnp.result_type(float)


def _acc_dtype(dtype: Any) -> Any:
    """The dtype sums are accumulated in: float64 when x64 is enabled, else ``dtype``."""
    return jnp.float64 if jax.config.jax_enable_x64 else _float_dtype(dtype)


def _pow2_near(v: float, lo: int, hi: int) -> int:
    v = min(max(v, lo), hi)
    return 1 << int(round(np.log2(v)))


def _floor_log2(n: Array) -> Array:
    """``floor(log2(n))`` of positive ints (0 for ``n <= 1``), exactly, via count-leading-zeros."""
    n = jnp.maximum(n, 1).astype(jnp.uint32)
    return (31 - lax.clz(n)).astype(jnp.int32)


def _reference(y: Array) -> Array:
    """A per-channel shift: the mean of at most ~1024 strided finite samples (cheap)."""
    n = y.shape[0]
    stride = max(1, n // 1024)
    sample = y[::stride].astype(_acc_dtype(y.dtype))
    ok = jnp.isfinite(sample)
    cnt = jnp.sum(ok, axis=0)
    ref = jnp.sum(jnp.where(ok, sample, 0), axis=0) / jnp.maximum(cnt, 1)
    # the results do not depend on the shift: keep it out of gradients (exact zeros stay zero)
    return lax.stop_gradient(ref)


def _tree_reduce(m: Array, op: Callable[[Array, Array], Array]) -> Array:
    """Reduce axis 1 of ``m`` ``(M, B, ...)`` (B a power of two) by halving: ``(M, ...)``.

    XLA on CPU reduces a short inner axis one element at a time; halving turns the reduction
    into ``log2(B)`` vectorised elementwise steps that fuse into one loop, measured 5x faster
    for sums at B = 128 (and pairwise, so more accurate too).
    """
    while m.shape[1] > 1:
        h = m.shape[1] // 2
        m = op(m[:, :h], m[:, h:])
    return m[:, 0]


# ---------------------------------------------------------------------------- range sums
def _sum_block(n: int, k: int) -> int:
    """Static block size for range sums; 1 means a plain prefix sum (many ranges)."""
    if n == 0 or k == 0:
        return 1
    b = _pow2_near(np.sqrt(_COST_CUMSUM * n / (2 * _COST_GATHER * k)), 16, 4096)
    few = n * _COST_REDUCE + (n / b) * _COST_CUMSUM + 2 * k * b * _COST_GATHER
    many = n * _COST_CUMSUM + 2 * k * _COST_GATHER
    return b if few < many and b < n else 1


def _search_sorted_queries(a: Array, v: Array, side: str, coarse: int = 32) -> Array:
    """``searchsorted(a, v, side)`` for SORTED queries ``v``, faster than one search per query.

    Every ``coarse``-th query is searched in full; the others bisect only between their two
    coarse neighbours' answers, for as many steps as the widest such interval needs (a
    ``while_loop``): about ``log2(coarse)`` steps on evenly spread data instead of ``log2(N)``.
    """
    n, q = a.shape[0], v.shape[0]
    idt = index_dtype()
    if q == 0 or n == 0:
        return jnp.zeros((q,), idt)
    anchors = jnp.searchsorted(a, v[::coarse], side=side).astype(idt)
    anchors = jnp.concatenate([anchors, jnp.full((1,), n, idt)])
    c = jnp.arange(q) // coarse
    lo, hi = anchors[c], anchors[c + 1]

    def step(state: tuple[Array, Array]) -> tuple[Array, Array]:
        lo, hi = state
        mid = (lo + hi) // 2
        am = a[jnp.clip(mid, 0, n - 1)]
        go = (am <= v) if side == "right" else (am < v)
        go = go & (lo < hi)
        return jnp.where(go, mid + 1, lo), jnp.where(go | (lo >= hi), hi, mid)

    lo, _ = lax.while_loop(lambda st: jnp.any(st[0] < st[1]), step, (lo, hi))
    return lo


def _range_sums(
    y: Array, f: Callable[[Array], tuple[Array, ...]], start: Array, stop: Array
) -> tuple[Array, Array]:
    """Sums of ``f(y)`` over ``[start, stop)`` for ``y`` ``(N, C)``: ``(K, C')``, and a flag.

    ``f`` maps raw values ``(..., C)`` elementwise to a tuple of per-point quantities
    ``(..., C)`` (their columns concatenated give ``C'``); it is fused into the reduction, so
    nothing of size ``N * C'`` is materialised on the few-ranges road. The flag is True when
    the sum of ``f`` over ALL points is finite (checked on the block sums, not on the N
    points): then no NaN/inf can have leaked between ranges.
    """
    n = y.shape[0]
    k = start.shape[0]
    block = _sum_block(n, k)

    def fcat(v: Array) -> Array:
        return jnp.concatenate(f(v), axis=-1)

    if block == 1:
        v = fcat(y)
        p = jnp.concatenate([jnp.zeros((1,) + v.shape[1:], v.dtype), jnp.cumsum(v, axis=0)])
        return p[stop] - p[start], jnp.all(jnp.isfinite(p[-1]))
    nb = n // block
    parts = f(y[: nb * block].reshape((nb, block) + y.shape[1:]))
    full = jnp.concatenate([_tree_reduce(a, jnp.add) for a in parts], axis=-1)
    bp = jnp.concatenate([jnp.zeros((1,) + full.shape[1:], full.dtype), jnp.cumsum(full, 0)])
    ok = jnp.all(jnp.isfinite(bp[-1])) & jnp.all(jnp.isfinite(fcat(y[nb * block :])))
    offs = jnp.arange(block, dtype=start.dtype)

    def partial(i: Array) -> tuple[Array, Array]:
        b = i // block
        base = b * block
        idx = base[:, None] + offs
        w = fcat(jnp.take(y, idx, axis=0, mode="clip"))
        m = (offs < (i - base)[:, None]).reshape(idx.shape + (1,) * (w.ndim - 2))
        return bp[b], jnp.sum(jnp.where(m, w, 0), axis=1)

    b0, p0 = partial(start)
    b1, p1 = partial(stop)
    return (b1 - b0) + (p1 - p0), ok


def _moments(
    y: Array, start: Array, stop: Array, order: int, omit: bool = False
) -> dict[str, Array]:
    """Per-range ``n``, shifted sums ``s1`` (and ``s2``) and the shift ``ref``; NaN/inf-safe.

    ``y`` is ``(N, C)``; results are ``(K, C)`` in the accumulation dtype. ``s1 = sum(y - ref)``
    and ``s2 = sum((y - ref)**2)`` over the finite points; ``nan``, ``pinf``, ``ninf`` count the
    non-finite points of each range (zero unless some are present). The common all-finite case
    costs one pass; only when the totals come out non-finite is the counting road taken.
    With ``omit`` (NaN to be skipped) the all-finite pass squares a NaN as ``ref``: the same
    result where it is used, and no NaN in the gradient where it is not (``0 * d(NaN**2)``).
    """
    acc = _acc_dtype(y.dtype)
    c = y.shape[1]
    ref = _reference(y)
    k = start.shape[0]
    width = order * c

    def finite_only(v: Array) -> tuple[Array, ...]:
        # written out twice on purpose: a shared ``z`` (z, z * z) was measured 4x slower on
        # CPU (XLA then materialises z instead of fusing it into the halving reduction)
        v = v.astype(acc)
        if order == 1:
            return (v - ref,)
        # the first column keeps a NaN visible (so the counting road is taken); with ``omit``
        # the square reads it as ``ref``, keeping NaN out of the gradient
        return (v - ref, ((jnp.where(jnp.isnan(v), ref, v) if omit else v) - ref) ** 2)

    def with_counts(v: Array) -> tuple[Array, ...]:
        v = v.astype(acc)
        ok = jnp.isfinite(v)
        z = jnp.where(ok, v - ref, 0)
        parts = (z, z**2) if order == 2 else (z,)
        nonfinite = (jnp.isnan(v), v == jnp.inf, v == -jnp.inf)
        return parts + tuple(a.astype(acc) for a in nonfinite)

    out, ok = _range_sums(y, finite_only, start, stop)
    out = jnp.concatenate([out, jnp.zeros((k, 3 * c), acc)], axis=-1)
    if jnp.issubdtype(y.dtype, jnp.inexact):
        out = lax.cond(ok, lambda: out, lambda: _range_sums(y, with_counts, start, stop)[0])
    res = {"s1": out[:, :c], "ref": ref}
    if order == 2:
        res["s2"] = out[:, c : 2 * c]
    res["nan"] = out[:, width : width + c]
    res["pinf"] = out[:, width + c : width + 2 * c]
    res["ninf"] = out[:, width + 2 * c : width + 3 * c]
    return res


# ---------------------------------------------------------------------------- range extremes
def _sparse_table(a: Array, levels: int, op: Callable, ident: Any) -> Array:
    """``(levels, M, C)``: level ``l`` holds ``op`` over ``a[i : i + 2**l]`` (identity past end)."""
    out = [a]
    cur = a
    for lvl in range(1, levels):
        s = 1 << (lvl - 1)
        shifted = jnp.concatenate([cur[s:], jnp.full((min(s, cur.shape[0]),) + a.shape[1:], ident)])
        cur = op(cur, shifted[: cur.shape[0]])
        out.append(cur)
    return jnp.stack(out)


def _table_query(t: Array, lo: Array, hi: Array, op: Callable, ident: Any) -> Array:
    """``op`` over ``a[lo : hi]`` (half-open) from a sparse table; identity where empty."""
    length = hi - lo
    lvl = jnp.minimum(_floor_log2(length), t.shape[0] - 1)
    width = jnp.left_shift(jnp.ones_like(length), lvl.astype(length.dtype))
    m = t.shape[1]
    i0 = jnp.clip(lo, 0, m - 1)
    i1 = jnp.clip(hi - width, 0, m - 1)
    v = op(t[lvl, i0], t[lvl, i1])
    return jnp.where((length > 0)[:, None], v, ident)


def _range_extreme(y: Array, start: Array, stop: Array, which: str) -> Array:
    """Min or max of ``y`` ``(N, C)`` over ``[start, stop)``: ``(K, C)``; identity where empty."""
    op = jnp.minimum if which == "min" else jnp.maximum
    ident = jnp.array(jnp.inf if which == "min" else -jnp.inf, y.dtype)
    n, c = y.shape
    k = start.shape[0]
    if n == 0 or k == 0:
        return jnp.full((k, c), ident, y.dtype)
    red = jnp.min if which == "min" else jnp.max

    # few ranges: block extremes + sparse table over blocks + two gathered partial blocks;
    # the block size balances the gathers (2 K B) against the table ((N / B) log2(N / B))
    def few_cost(b: int) -> float:
        nbb = max(n // b, 1)
        return n * _COST_REDUCE + 2 * k * b * _COST_GATHER + nbb * np.log2(nbb + 1) * _COST_TABLE

    b_few = min((1 << e for e in range(4, 14)), key=few_cost)
    cost_few = few_cost(b_few)
    # many ranges: short-window sparse table of J + 1 levels + sparse table over blocks
    j_many = 4
    b_many = 1 << j_many
    cost_many = j_many * n * _COST_SHIFT + 6 * k * _COST_GATHER
    if cost_few <= cost_many and b_few < n:
        block = b_few
        nb = n // block
        bext = _tree_reduce(y[: nb * block].reshape(nb, block, c), op)
        levels = int(np.floor(np.log2(max(nb, 1)))) + 1
        tab = _sparse_table(bext, levels, op, ident)
        offs = jnp.arange(block, dtype=start.dtype)
        bs = start // block
        be = jnp.maximum(stop - 1, start) // block
        head_end = jnp.minimum(stop, (bs + 1) * block)
        hidx = start[:, None] + offs
        hv = jnp.take(y, hidx, axis=0, mode="clip")
        hv = jnp.where((hidx < head_end[:, None])[..., None], hv, ident)
        tidx = (be * block)[:, None] + offs
        tv = jnp.take(y, tidx, axis=0, mode="clip")
        tmask = (tidx < stop[:, None]) & (be > bs)[:, None]
        tv = jnp.where(tmask[..., None], tv, ident)
        mid = _table_query(tab, bs + 1, jnp.maximum(be, bs + 1), op, ident)
        return op(op(red(hv, axis=1), red(tv, axis=1)), mid)
    block = b_many
    nb = n // block
    short = _sparse_table(y, j_many + 1, op, ident)  # windows of 1 .. block points
    length = stop - start
    a = _table_query(short, start, stop, op, ident)  # exact when length <= 2 * block
    if nb == 0:
        return a
    bext = _tree_reduce(y[: nb * block].reshape(nb, block, c), op)
    levels = int(np.floor(np.log2(nb))) + 1
    tab = _sparse_table(bext, levels, op, ident)
    top = short[j_many]
    i0 = jnp.clip(start, 0, n - 1)
    i1 = jnp.clip(stop - block, 0, n - 1)
    b0 = -(-start // block)
    b1 = stop // block
    long_v = op(op(top[i0], top[i1]), _table_query(tab, b0, jnp.maximum(b1, b0), op, ident))
    return jnp.where((length > 2 * block)[:, None], long_v, a)


# ---------------------------------------------------------------------------- the engine
def _finish(
    stat: str, mom: dict[str, Array], n: Array, ddof: int, out_dtype: Any, skipna: bool = False
) -> Array:
    """Turn shifted sums into one statistic (NumPy's non-finite conventions).

    With ``skipna`` NaN points are left out (pandas' rolling convention): ``n`` must then be
    the number of non-NaN points.
    """
    nan_c, pinf, ninf = mom["nan"], mom["pinf"], mom["ninf"]
    if skipna:
        n_fin = n - pinf - ninf
        nan_c = jnp.zeros_like(nan_c)
    else:
        n_fin = n - nan_c - pinf - ninf
    s1 = mom["s1"]
    ref = mom["ref"]
    total = s1 + n_fin * ref
    bad_nan = (nan_c > 0) | ((pinf > 0) & (ninf > 0))
    inf_val = jnp.where(pinf > 0, jnp.inf, -jnp.inf)
    has_inf = (pinf > 0) | (ninf > 0)
    if stat == "sum":
        total = jnp.where(n_fin > 0, total, 0)  # exactly 0, not a difference of prefix sums
        res = jnp.where(bad_nan, jnp.nan, jnp.where(has_inf, inf_val, total))
        return res.astype(out_dtype)
    safe_n = jnp.where(n > 0, n, 1)
    mean_shift = s1 / safe_n
    if stat == "mean":
        res = ref + mean_shift
        res = jnp.where(bad_nan, jnp.nan, jnp.where(has_inf, inf_val, res))
        return jnp.where(n > 0, res, jnp.nan).astype(out_dtype)
    # one point has no spread: exactly 0, whatever the rounding of the prefix sums
    ss = jnp.where(n_fin > 1, jnp.maximum(mom["s2"] - s1 * mean_shift, 0), 0)
    denom = n - ddof
    var = ss / jnp.where(denom > 0, denom, 1)
    var = jnp.where((denom > 0) & ~bad_nan & ~has_inf, var, jnp.nan)
    if stat == "std":
        var = jnp.sqrt(var)
    return var.astype(out_dtype)


def _check_statistic(statistic: Any, func: str) -> str:
    if statistic not in STATISTICS:
        raise ValueError(
            f"{func}: `statistic` must be one of {', '.join(map(repr, STATISTICS))}, "
            f"got {statistic!r}"
        )
    return statistic


def _masked_median(vals: Array, mask: Array) -> Array:
    """Median along axis 1 of ``vals`` ``(K, L, C)`` over ``mask`` ``(K, L, C)``; NaN if empty."""
    ordered = jnp.sort(jnp.where(mask, vals, jnp.inf), axis=1)
    n = jnp.sum(mask, axis=1)
    lo = jnp.maximum(n - 1, 0) // 2
    hi = n // 2
    a = jnp.take_along_axis(ordered, lo[:, None, :], axis=1)[:, 0]
    b = jnp.take_along_axis(ordered, hi[:, None, :], axis=1)[:, 0]
    return jnp.where(n > 0, (a + b) / 2, jnp.nan)


@functools.partial(jax.jit, static_argnames=("stats", "ddof", "capacity", "skipna"))
def _range_stats(
    y: Array,
    start: Array,
    count: Array,
    stats: tuple[str, ...],
    ddof: int,
    capacity: int | None,
    skipna: bool = False,
) -> dict[str, Array]:
    """All requested statistics over flat ranges; ``y`` is ``(N, C)``, results ``(K, C)``.

    With ``skipna`` NaN values are left out (pandas' rolling convention) and ``"count"`` counts
    the non-NaN points; otherwise a NaN makes its range's statistic NaN (NumPy's convention).
    """
    idt = index_dtype()
    n_pts = y.shape[0]
    start = jnp.clip(start.astype(idt), 0, n_pts)
    count = jnp.clip(count.astype(idt), 0, n_pts - start)
    stop = start + count
    out_dtype = _float_dtype(y.dtype)
    k, c = start.shape[0], y.shape[1]
    res: dict[str, Array] = {}
    n = jnp.broadcast_to(count[:, None], (k, c))
    need = {s for s in stats if s in ("sum", "mean", "var", "std")}
    is_float = jnp.issubdtype(y.dtype, jnp.inexact)
    if need or (skipna and is_float):
        order = 2 if need & {"var", "std"} else 1
        mom = _moments(y, start, stop, order, skipna)
        if skipna:
            n = n - mom["nan"].astype(idt)
        nf = n.astype(mom["s1"].dtype)
        for s in need:
            res[s] = _finish(s, mom, nf, ddof, out_dtype, skipna)
    if "count" in stats:
        res["count"] = n
    yf = y.astype(out_dtype)
    for s in ("min", "max"):
        if s in stats:
            src = yf
            if skipna and is_float:
                src = jnp.where(jnp.isnan(yf), jnp.inf if s == "min" else -jnp.inf, yf)
            v = _range_extreme(src, start, stop, s)
            res[s] = jnp.where(n > 0, v, jnp.nan)
    if "median" in stats:
        sub = _gather(jnp.zeros((n_pts,), out_dtype), yf, start, count, capacity)
        if skipna:
            mask = sub.mask[..., None] & ~jnp.isnan(sub.y)
            med = _masked_median(sub.y, mask)
        else:
            med = sub.median()
        res["median"] = jnp.where((count > capacity)[:, None], jnp.nan, med)
    return res


def _static_capacity(ranges: Ranges, capacity: Any, func: str) -> int:
    if capacity is not None:
        return static_int(capacity, "capacity", func)
    if ranges.max_count is not None:
        return max(int(ranges.max_count), 1)
    if is_traced(ranges.count):
        raise TypeError(
            f"{func}: the median sorts inside padded windows and needs a static `capacity` "
            "under jit for ranges whose size depends on data; compute it outside jit with "
            "jaxsubset.required_capacity(ranges.count) and pass capacity=..."
        )
    cnt = np.asarray(ranges.count)
    big = int(cnt.max()) if cnt.size else 1
    return 1 << (max(big, 1) - 1).bit_length()


def _as_y(y: Any, func: str) -> Array:
    if not is_traced(y):
        np_y = np.asarray(y)
        if np_y.dtype.kind not in "biuf":
            raise TypeError(f"{func}: `y` must be real numeric, got dtype {np_y.dtype}")
        y = jnp.asarray(y)
    elif jnp.issubdtype(y.dtype, jnp.complexfloating):
        raise TypeError(f"{func}: `y` must be real numeric, got dtype {y.dtype}")
    if y.ndim < 1:
        raise ValueError(f"{func}: `y` must have a leading axis of length N, got a scalar")
    return y


def range_statistic(
    y: ArrayLike,
    ranges: Ranges,
    statistic: str | Sequence[str] = "mean",
    *,
    ddof: int = 0,
    capacity: int | None = None,
    nan_policy: str = "propagate",
) -> Array | dict[str, Array]:
    """A statistic of ``y`` over every index range, without padded copies where possible.

    count/sum/mean/var/std come from shifted prefix sums and min/max from a sparse table of
    block extremes (O(N + K) to O(N log N) work, never ``K x capacity``); the median sorts
    inside padded windows of ``capacity`` points. Conventions are those of
    :class:`jaxsubset.Subsets`: an empty range gives NaN (0 for ``"sum"`` and ``"count"``), a
    range holding a NaN gives NaN unless ``nan_policy="omit"``.

    Args:
        y: ``(N, *channels)`` values, in the order of the sorted ``x`` the ranges index.
        ranges: :class:`jaxsubset.Ranges` with batch shape ``(*batch)`` (from
            :mod:`jaxsubset.ranges`); ranges past ``N`` are clipped.
        statistic: one of ``"count"``, ``"sum"``, ``"mean"``, ``"var"``, ``"std"``,
            ``"min"``, ``"max"``, ``"median"``, or a tuple/list of them (computed together,
            sharing the prefix sums).
        ddof: static delta degrees of freedom of ``"var"``/``"std"`` (divisor ``n - ddof``;
            NaN where ``n - ddof <= 0``).
        capacity: static padded length for ``"median"``; default ``ranges.max_count``, or
            (eagerly) the largest count rounded up to a power of two. A range with more points
            than ``capacity`` gives NaN (never a median of a truncated window).
        nan_policy: SciPy's names. ``"propagate"`` (default): a range holding a NaN gives NaN
            (``"count"`` counts every point). ``"omit"``: NaN readings are left out per channel,
            as NumPy's nan-functions (``"count"`` counts the real readings; a range of only NaN
            gives NaN, 0 for ``"sum"``); still O(N), and the gradient is zero at omitted
            readings. ``"raise"``: ValueError if ``y`` holds NaN (at run time under ``jit``).

    Returns:
        ``(*batch, *channels)`` float (``"count"``: int), or a dict of them by statistic name
        when ``statistic`` is a tuple/list.

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
    single = isinstance(statistic, str)
    if single:
        stats = (_check_statistic(statistic, func),)
    elif isinstance(statistic, tuple | list) and statistic:
        stats = tuple(_check_statistic(s, func) for s in statistic)
    else:
        raise TypeError(
            f"{func}: `statistic` must be a name or a non-empty tuple/list of names, "
            f"got {statistic!r}"
        )
    ddof = static_int(ddof, "ddof", func, minimum=0)
    nan_policy = check_nan_policy(nan_policy, func)
    y = _as_y(y, func)
    if nan_policy == "raise":
        _raise_on_nan(y, func, "y")
    cap = _static_capacity(ranges, capacity, func) if "median" in stats else None
    batch = ranges.batch_shape
    ch = tuple(y.shape[1:])
    start, count = jnp.broadcast_arrays(ranges.start, ranges.count)
    y2 = y.reshape(y.shape[0], int(np.prod(y.shape[1:])))
    omit = nan_policy == "omit"
    want = tuple(sorted(set(stats)))
    out = _range_stats(y2, start.reshape(-1), count.reshape(-1), want, ddof, cap, omit)
    res = {s: out[s].reshape(batch + ch) for s in stats}
    return res[stats[0]] if single else res


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
    if at is not None:
        start, count = r.start, r.count
    else:
        # one window per point: the queries are sorted, so search them as such (much faster)
        w = width if is_traced(width) else jnp.asarray(width)
        hi = x.astype(jnp.promote_types(x.dtype, w.dtype))
        lo_side = "left" if closed in ("left", "both") else "right"
        start = _search_sorted_queries(x, hi - w, lo_side)
        if closed in ("right", "both"):
            # pandas ends the window of point i at i itself, also when later points tie with it
            stop = jnp.arange(x.shape[0], dtype=start.dtype) + 1
        else:
            stop = _search_sorted_queries(x, hi, "left")
        count = jnp.maximum(stop - start, 0)
    start, count = jnp.broadcast_arrays(start, count)
    cap = None
    if "median" in stats:
        cap = _static_capacity(Ranges(start, count), capacity, func)
    batch = tuple(count.shape)
    ch = tuple(y.shape[1:])
    want = tuple(sorted(set(stats) | {"count"}))
    out = _range_stats(
        y.reshape(y.shape[0], int(np.prod(y.shape[1:]))),
        start.reshape(-1),
        count.reshape(-1),
        want,
        ddof,
        cap,
        nan_policy == "omit",
    )
    ok = out["count"] >= min_periods
    # pandas' count compares min_periods with the rows of the window, NaN rows included
    ok_rows = (count.reshape(-1) >= min_periods)[:, None]
    res = {}
    for s in stats:
        v = out[s].astype(_float_dtype(y.dtype))
        res[s] = jnp.where(ok_rows if s == "count" else ok, v, jnp.nan).reshape(batch + ch)
    return res[stats[0]] if single else res


# ---------------------------------------------------------------------------- binned_statistic
BINNED_STATISTICS = ("mean", "std", "median", "count", "sum", "min", "max")


class BinnedStatisticResult(NamedTuple):
    """What :func:`binned_statistic` returns, as ``scipy.stats.binned_statistic``.

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

    statistic: Array
    bin_edges: Array
    binnumber: Array


_POW10 = np.array([10.0**k for k in range(0, 40)])


def _around(v: Array, dec: Array) -> Array:
    """``numpy.around(v, dec)`` for a traced integer ``dec`` (numpy's two formulas)."""
    top = int(np.floor(np.log10(float(jnp.finfo(v.dtype).max))))
    p = jnp.asarray(_POW10[: top + 1], v.dtype)[jnp.clip(jnp.abs(dec), 0, top)]
    return jnp.where(dec >= 0, jnp.rint(v * p) / p, jnp.rint(v / p) * p)


def _binnumber(x: Array, edges: Array, dec: Array, uniform: bool) -> tuple[Array, Array]:
    """scipy's bin numbers (``digitize`` then the last edge closed) and the on-edge flags."""
    nb = edges.shape[0] - 1
    idt = index_dtype()
    if jnp.issubdtype(edges.dtype, jnp.integer):
        # a time axis (int64 nanoseconds): exact comparisons, the last edge closed exactly
        d = jnp.searchsorted(edges, x, side="right").astype(idt)
        on_edge = x == edges[-1]
        return jnp.where(on_edge, d - 1, d), on_edge
    if uniform:
        lo, hi = edges[0], edges[-1]
        g = jnp.floor((x - lo) * (nb / (hi - lo))) + 1
        d = jnp.clip(jnp.where(jnp.isnan(g), nb + 1, g), 0, nb + 1).astype(idt)
        table = jnp.concatenate([jnp.array([-jnp.inf], edges.dtype), edges, jnp.array([jnp.inf])])
        table = table.astype(edges.dtype)
        for _ in range(2):  # the guess is off by at most one bin; two steps make it exact
            d = jnp.where(x < table[d], d - 1, jnp.where(x >= table[d + 1], d + 1, d))
            d = jnp.clip(d, 0, nb + 1)
    else:
        d = jnp.searchsorted(edges, x, side="right").astype(idt)
    on_edge = (x >= edges[-1]) & (_around(x, dec) == _around(edges[-1], dec))
    d = jnp.where(on_edge, d - 1, d)
    d = jnp.where(jnp.isnan(x), nb + 1, d) if jnp.issubdtype(x.dtype, jnp.inexact) else d
    return d, on_edge


def _on_edge_end(x: Array, i0: Array, last_edge: Array, dec: Array) -> Array:
    """For sorted ``x``: one past the last point scipy counts in the last bin, in O(log N).

    The points at and above the last edge that round (to ``dec`` decimals) to it are a
    contiguous run starting at ``i0 = searchsorted(x, last_edge, "left")``; bisect its end.
    """
    n = x.shape[0]
    if jnp.issubdtype(x.dtype, jnp.integer):  # a time axis: the last edge closed exactly
        return jnp.searchsorted(x, last_edge, side="right").astype(i0.dtype)
    target = _around(last_edge, dec)
    lo, hi = i0, jnp.asarray(n, i0.dtype)  # invariant: x[lo:] may match, x[hi:] does not
    for _ in range(max(n, 1).bit_length()):
        mid = (lo + hi) // 2
        inside = (mid < hi) & (_around(x[jnp.clip(mid, 0, max(n - 1, 0))], dec) == target)
        lo = jnp.where(inside, mid + 1, lo)
        hi = jnp.where(inside | (mid >= hi), hi, mid)
    return lo


def _disjoint_deviations(
    y: Array, start: Array, stop: Array, mean: Array, block: int
) -> tuple[Array, Array]:
    """``sum(y - mean_k)`` and ``sum((y - mean_k)**2)`` over DISJOINT sorted ranges, in O(N).

    Two passes without a per-point bin id: each block of ``block`` points gets its own mean and
    squared deviations (halving reductions); a block lying inside range ``k`` adds
    ``M2_b + block * (mean_b - mean_k)**2`` (Chan's combination, no cancellation); the points
    of a range outside its whole blocks (fewer than ``block`` at each end) are read by a small
    gather and measured against ``mean_k`` directly.
    """
    n, c = y.shape
    k = start.shape[0]
    nb = n // block
    yb = y[: nb * block].reshape(nb, block, c)
    bmean = _tree_reduce(yb, jnp.add) / block
    bm2 = _tree_reduce((yb - bmean[:, None]) ** 2, jnp.add)
    b0 = jnp.arange(nb, dtype=start.dtype) * block
    kk = jnp.searchsorted(stop, b0, side="right").astype(start.dtype)
    kc = jnp.clip(kk, 0, max(k - 1, 0))
    inside = (kk < k) & (start[kc] <= b0) & (b0 + block <= stop[kc])
    dm = bmean - mean[kc]
    dest = jnp.where(inside, kk, k)
    full1 = jnp.zeros((k, c), y.dtype).at[dest].add(block * dm, mode="drop")
    full2 = jnp.zeros((k, c), y.dtype).at[dest].add(bm2 + block * dm**2, mode="drop")
    fb0 = -(-start // block)
    fb1 = stop // block
    has_full = fb1 > fb0
    h_end = jnp.where(has_full, fb0 * block, jnp.minimum(stop, start + block))
    t_beg = jnp.where(has_full, fb1 * block, h_end)
    offs = jnp.arange(block, dtype=start.dtype)

    def window(first: Array, end: Array) -> tuple[Array, Array]:
        idx = first[:, None] + offs
        dev = jnp.take(y, idx, axis=0, mode="clip") - mean[:, None, :]
        dev = jnp.where((idx < end[:, None])[..., None], dev, 0)
        return dev.sum(axis=1), (dev**2).sum(axis=1)

    h1, h2 = window(start, h_end)
    t1, t2 = window(t_beg, stop)
    return full1 + h1 + t1, full2 + h2 + t2


def _order_key(v: Array) -> Array:
    """Unsigned ints whose order is the float order of ``v`` (NaN above +inf, as np.sort)."""
    bits = 64 if v.dtype == jnp.float64 else 32
    udt = jnp.uint64 if bits == 64 else jnp.uint32
    u = lax.bitcast_convert_type(v, udt)
    sign = jnp.asarray(1 << (bits - 1), udt)
    return jnp.where((u & sign) != 0, ~u, u | sign)


def _from_key(k: Array, dtype: Any) -> Array:
    bits = 64 if dtype == jnp.float64 else 32
    udt = jnp.uint64 if bits == 64 else jnp.uint32
    sign = jnp.asarray(1 << (bits - 1), udt)
    u = jnp.where((k & sign) != 0, k & ~sign, ~k)
    return lax.bitcast_convert_type(u.astype(udt), dtype)


def _segment_median(seg: Array, v: Array, nseg: int, cnt: Array) -> Array:
    """Median of ``v`` ``(N,)`` per segment id ``seg`` in O(N) passes, without sorting.

    A radix select on the order-preserving integer keys: 11 bits per pass (6 passes for
    float64, 3 for float32), each one scatter-add histogram of (segment, digit); the upper
    middle value of an even count is the lower one again or the next larger value (one
    scatter-min). Exact: the result is ``(v[lo] + v[hi]) / 2`` of the sorted values, as scipy.
    """
    dtype = v.dtype
    bits = 64 if dtype == jnp.float64 else 32
    udt = jnp.uint64 if bits == 64 else jnp.uint32
    key = _order_key(v)
    cnt = cnt.astype(jnp.int32)
    rank = jnp.maximum(cnt - 1, 0) // 2
    prefix = jnp.zeros((nseg,), udt)
    digits = 11
    done = 0
    last_hist = None
    while done < bits:
        width = min(digits, bits - done)
        shift = bits - done - width
        dig = ((key >> shift) & ((1 << width) - 1)).astype(jnp.int32)
        if done == 0:
            active = jnp.ones(key.shape, jnp.int32)
        else:
            active = ((key >> (shift + width)) == prefix[seg]).astype(jnp.int32)
        hist = jnp.zeros((nseg << width,), jnp.int32).at[(seg << width) + dig].add(active)
        # two-level choice of the digit: 2**width = groups x lanes, no long cumulative sums
        lanes = 1 << (width // 2)
        h3 = hist.reshape(nseg, -1, lanes)
        ccum = jnp.cumsum(h3.sum(axis=2), axis=1)
        g = jnp.argmax(ccum > rank[:, None], axis=1)
        below_g = jnp.where(g > 0, jnp.take_along_axis(ccum, (g - 1)[:, None], 1)[:, 0], 0)
        fine = jnp.take_along_axis(h3, g[:, None, None], 1)[:, 0]
        fcum = jnp.cumsum(fine, axis=1) + below_g[:, None]
        j = jnp.argmax(fcum > rank[:, None], axis=1)
        below = jnp.where(j > 0, jnp.take_along_axis(fcum, (j - 1)[:, None], 1)[:, 0], below_g)
        chosen = (g * lanes + j).astype(jnp.int32)
        rank = rank - below
        prefix = (prefix << width) | chosen.astype(udt)
        last_hist = jnp.take_along_axis(fine, j[:, None], 1)[:, 0]
        done += width
    lo_val = _from_key(prefix, dtype)
    # the upper middle: another copy of the lower one, or the next larger value
    odd = (cnt % 2) == 1
    again = rank + 1 < last_hist
    top = jnp.asarray(np.iinfo(np.uint64 if bits == 64 else np.uint32).max, udt)
    nxt = jnp.where(key > prefix[seg], key, top)
    nxt = _from_key(jnp.full((nseg,), top, udt).at[seg].min(nxt), dtype)
    hi_val = jnp.where(odd | again, lo_val, nxt)
    return jnp.where(cnt > 0, (lo_val + hi_val) / 2, jnp.nan)


def _sorted_group(ids: Array, v: Array, nseg: int) -> tuple[Array, Array]:
    """Sort ``v`` ``(N, C)`` by ``(ids, v)`` per channel; returns sorted values and starts."""

    def one(col: Array) -> Array:
        return lax.sort((ids, col), num_keys=2)[1]

    sv = jax.vmap(one, in_axes=1, out_axes=1)(v)
    counts = jnp.zeros((nseg,), ids.dtype).at[ids].add(1, mode="drop")
    starts = jnp.concatenate([jnp.zeros((1,), ids.dtype), jnp.cumsum(counts)[:-1]])
    return sv, starts


@functools.partial(
    jax.jit, static_argnames=("statistic", "uniform", "x_sorted", "capacity", "fn", "omit")
)
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
    omit: bool = False,
) -> tuple[Array, Array]:
    """Statistic ``(nbins, C)`` and binnumber ``(N,)``; ``v`` is ``(N, C)``.

    With ``omit`` NaN values are left out per channel: every statistic (count included) sees
    only the real readings. The O(N) roads stay: NaN -> 0 in the sums beside a count of real
    readings, NaN -> +inf/-inf for min/max, and the median's radix select ranks only the real
    keys (NaN keys sort above +inf and are never reached).
    """
    nb = edges.shape[0] - 1
    n_pts, c = v.shape
    idt = index_dtype()
    xe = x.astype(edges.dtype)
    d, on_edge = _binnumber(xe, edges, dec, uniform)
    out_dtype = _float_dtype(v.dtype)
    acc = _acc_dtype(v.dtype)
    is_float = jnp.issubdtype(v.dtype, jnp.inexact)
    omit = omit and is_float
    nan_v = jnp.isnan(v) if is_float else jnp.zeros(v.shape, bool)
    if x_sorted:
        left = jnp.searchsorted(xe, edges, side="left").astype(idt)
        last = _on_edge_end(xe, left[-1], edges[-1], dec)
        bounds = left.at[-1].set(last)
        start, stop = bounds[:-1], jnp.maximum(bounds[1:], bounds[:-1])
        count = stop - start
    else:
        if acc == jnp.float64 and statistic != "count":
            # a float scatter, exact below 2**53: an int64 scatter-add beside the values'
            # scatter was measured 4x slower on CPU (XLA then fuses them badly)
            ones = jnp.ones((n_pts,), acc)
            count = jax.ops.segment_sum(ones, d, nb + 2)[1:-1].astype(idt)
        else:
            count = jnp.zeros((nb + 2,), idt).at[d].add(1)[1:-1]
        start = stop = None
    cnt = jnp.broadcast_to(count[:, None], (nb, c))
    mom = None
    if omit or (statistic == "min" and is_float):
        # the real readings of every bin and channel (SciPy's "min" skips NaN on its own)
        if x_sorted and statistic in ("sum", "mean", "std"):
            mom = _moments(v, start, stop, 1, omit)  # also counts the NaN of every range
            cnt = cnt - mom["nan"].astype(idt)
        elif x_sorted:  # one fused block-sum pass, cheaper than a check for any NaN
            nan_n, _ = _range_sums(v, lambda a: (jnp.isnan(a).astype(acc),), start, stop)
            cnt = cnt - nan_n.astype(idt)
        else:
            # the scatter only when some reading is missing (checked in one cheap pass)
            def real_counts(cnt: Array) -> Array:
                real = jax.ops.segment_sum((~jnp.isnan(v)).astype(acc), d, nb + 2)[1:-1]
                return real.astype(idt)

            cnt = lax.cond(jnp.any(jnp.isnan(v)), real_counts, lambda cnt: cnt, cnt)
    if statistic == "count":
        return cnt.astype(out_dtype if out_dtype != jnp.float16 else jnp.float32), d
    v_real = jnp.where(nan_v, 0, v) if omit else v  # zero gradient at omitted readings
    if statistic in ("sum", "mean", "std"):
        if x_sorted:
            if mom is None:
                mom = _moments(v, start, stop, 1)
            total = _finish("sum", mom, cnt.astype(acc), 0, acc, skipna=omit)
        else:
            total = jax.ops.segment_sum(v_real.astype(acc), d, nb + 2)[1:-1]
        if statistic == "sum":
            return total.astype(out_dtype), d
        safe = jnp.where(cnt > 0, cnt, 1).astype(acc)
        mean = jnp.where(cnt > 0, total / safe, jnp.nan)
        if statistic == "mean":
            return mean.astype(out_dtype), d
        mean_pt = jnp.concatenate([jnp.zeros((1, c), acc), mean, jnp.zeros((1, c), acc)])
        if omit:
            # an omitted reading stands in as its bin's mean: a deviation of exactly zero
            # (the per-point gather only when some reading is missing)
            def filled(v: Array) -> Array:
                fill = mean_pt[d]
                return jnp.where(nan_v, jnp.where(jnp.isfinite(fill), fill, 0), v)

            v_real = lax.cond(jnp.any(nan_v), filled, lambda v: v, v)
        # two passes, as scipy: deviations from each bin's mean, so no digits are lost
        block = _sum_block(n_pts, nb) if x_sorted else 1
        if block > 1 and n_pts // block > 0:
            ref = _reference(v_real)  # block means of 1e8 + noise would lose digits unshifted
            s1, s2 = _disjoint_deviations(v_real.astype(acc) - ref, start, stop, mean - ref, block)
        else:
            dev = v_real.astype(acc) - mean_pt[d]
            s1 = jax.ops.segment_sum(dev, d, nb + 2)[1:-1]
            s2 = jax.ops.segment_sum(dev**2, d, nb + 2)[1:-1]
        m2 = jnp.maximum(s2 - s1 * s1 / safe, 0)
        std = jnp.sqrt(m2 / safe)
        std = jnp.where(jnp.isfinite(mean), std, jnp.nan)
        return jnp.where(cnt > 0, std, jnp.nan).astype(out_dtype), d
    vf = v.astype(out_dtype)
    if statistic in ("min", "max"):

        def extreme(vf: Array) -> Array:
            if x_sorted:
                return _range_extreme(vf, start, stop, statistic)
            if statistic == "min":
                return jax.ops.segment_min(vf, d, nb + 2)[1:-1]
            return jax.ops.segment_max(vf, d, nb + 2)[1:-1]

        if omit or (statistic == "min" and is_float):
            # NaN skipped: read as the identity (fused into the block reduction: measured no
            # slower than the plain extremes on CPU)
            ident = jnp.inf if statistic == "min" else -jnp.inf
            ext = extreme(jnp.where(jnp.isnan(vf), ident, vf))
        else:
            ext = extreme(vf)
        return jnp.where(cnt > 0, ext, jnp.nan), d
    if statistic == "median":
        cnt_all = jnp.zeros((nb + 2,), idt).at[d].add(1)
        if omit:
            # canonical (positive) NaN keys sort above +inf: ranking only the real readings
            # of each bin never reaches them
            vq = jnp.where(nan_v, jnp.nan, vf)
            nan_all = jnp.zeros((nb + 2, c), idt).at[d].add(nan_v.astype(idt))
            cnts = cnt_all[:, None] - nan_all
            med = jax.vmap(lambda col, k: _segment_median(d, col, nb + 2, k), 1, 1)(vq, cnts)
        else:
            med = jax.vmap(lambda col: _segment_median(d, col, nb + 2, cnt_all), 1, 1)(vf)
        return med[1:-1].astype(out_dtype), d
    # a callable: padded subsets of every bin
    if x_sorted:
        ys, gstart = vf, start
    else:
        order = jnp.argsort(d, stable=True)
        ys = vf[order]
        counts_all = jnp.zeros((nb + 2,), idt).at[d].add(1)
        gstart = jnp.concatenate([jnp.zeros((1,), idt), jnp.cumsum(counts_all)[:-1]])[1:-1]
    sub = _gather(jnp.zeros((n_pts,), out_dtype), ys, gstart, count, capacity)

    def per_bin(yb: Array, mb: Array) -> Array:
        def one(col: Array) -> Array:
            m = mb & ~jnp.isnan(col) if omit else mb  # "omit": the mask leaves NaN out
            return jnp.asarray(fn(col, m))

        return jax.vmap(one, in_axes=1)(yb)

    res = jax.vmap(per_bin)(sub.y, sub.mask)
    res = jnp.asarray(res)
    if res.shape != (nb, c):
        raise ValueError(
            "binned_statistic: a callable `statistic` must return a scalar per bin, got shape "
            f"{res.shape[2:] if res.ndim > 2 else ()}"
        )
    res = res.astype(jnp.promote_types(res.dtype, out_dtype))
    return jnp.where((count > capacity)[:, None], jnp.nan, res), d


def _edges_dtype(x: Array) -> Any:
    return x.dtype if jnp.issubdtype(x.dtype, jnp.floating) else jnp.result_type(float)


def _bin_count(bins: Any, func: str) -> int | None:
    """The static number of bins when ``bins`` is an int, None when it holds the edges."""
    if is_traced(bins) and jnp.ndim(bins) == 0:
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
) -> BinnedStatisticResult:
    """``scipy.stats.binned_statistic`` for 1-D ``x``: jit-, vmap- and grad-safe, in O(N).

    Same bins as scipy (``numpy.histogram`` edges, every bin half-open but the last, which
    is closed), same ``binnumber`` (0 below the range, ``nbins + 1`` above it), same results:
    NaN for empty bins (0 for ``"sum"`` and ``"count"``), ``"std"`` with ``ddof=0``, float
    ``"count"``. ``x`` need not be sorted: unsorted ``x`` is reduced by scatters into the bins
    (one per moment; the median by a radix select of a few histogram passes, never a sort);
    sorted ``x`` (detected eagerly, or promised with ``x_sorted=True``) takes the block /
    prefix-sum road, a few passes over ``values``. ``"std"`` is two-pass, as scipy's.

    Args:
        x: ``(N,)`` sample positions (any order; NaN raises eagerly).
        values: ``(N,)`` or ``(*channels, N)`` values, channels leading as in scipy.
        statistic: ``"mean"``, ``"std"``, ``"median"``, ``"count"``, ``"sum"``, ``"min"``,
            ``"max"`` or a callable ``fn(values, mask) -> scalar`` applied to every bin's
            values padded to ``capacity`` (``mask`` marks the real ones).
        bins: static int, the number of equal-width bins, or ``(nbins + 1,)`` increasing edges
            (values may be traced; ``nbins`` is static).
        range: ``(lo, hi)`` (or ``[(lo, hi)]``) for int ``bins``; default ``(min(x), max(x))``.
            May be traced. Ignored with explicit edges.
        capacity: static padded bin size for a callable ``statistic``; eagerly it defaults to
            the largest bin rounded up to a power of two, under jit it is required. Bins with
            more points give NaN.
        x_sorted: ``True`` promises ascending ``x`` (fast road under jit); ``None`` checks
            concrete ``x`` and assumes unsorted under jit; ``False`` forces the scatter road.
        nan_policy: NaN in ``values``. ``"propagate"`` (default) is SciPy's own behaviour:
            ``"sum"``, ``"mean"``, ``"std"`` and ``"max"`` of a bin holding a NaN are NaN, the
            median is the middle of the values sorted with NaN last (NaN when a NaN reaches the
            middle), ``"min"`` skips NaN (NaN only for a bin of NaN) and ``"count"`` counts
            every point. ``"omit"``: NaN readings are removed per channel first, so every
            statistic, ``"count"`` included, equals SciPy's on the NaN-free data (a callable
            gets a ``mask`` without them); still O(N), the gradient zero at omitted readings.
            ``"raise"``: ValueError if ``values`` hold NaN (at run time under ``jit``).

    Time axes: ``x`` as ``numpy.datetime64`` (or ``timedelta64``) becomes exact int64
    nanoseconds (JAX's 64-bit mode); ``bins`` edges and ``range`` are then dates (datetime64,
    ISO strings), int ``bins`` split the range in exact integer arithmetic
    (``lo + (k * (hi - lo)) // nbins``: float64 cannot hold nanoseconds near 1e18), the last
    bin is closed exactly at its edge (no rounding), and ``bin_edges`` come back as
    ``datetime64[ns]``.

    Returns:
        :class:`BinnedStatisticResult` ``(statistic, bin_edges, binnumber)``.

    Raises:
        ValueError: concrete ``x`` holding NaN, ``range`` with ``lo > hi``, edges not strictly
            increasing, values not matching ``len(x)``, an unknown statistic or ``nan_policy``,
            or NaN in ``values`` with ``nan_policy="raise"``.
        TypeError: numbers as ``bins``/``range`` on a time axis, or dates on a numeric one.

    Example:
        >>> import jax.numpy as jnp, jaxsubset
        >>> x = jnp.array([0.0, 1.0, 2.0, 2.5, 4.0])
        >>> r = jaxsubset.binned_statistic(x, x, "sum", bins=2)
        >>> r.statistic.tolist(), r.bin_edges.tolist(), r.binnumber.tolist()
        ([1.0, 8.5], [0.0, 2.0, 4.0], [1, 1, 2, 2, 2])
        >>> jaxsubset.binned_statistic(x, x, "count", bins=[0.0, 1.0, 3.0]).statistic.tolist()
        [1.0, 3.0]
    """
    func = "binned_statistic"
    fn = None
    if callable(statistic):
        fn, statistic = statistic, "callable"
    elif statistic not in BINNED_STATISTICS:
        raise ValueError(
            f"{func}: `statistic` must be one of {', '.join(map(repr, BINNED_STATISTICS))} "
            f"or a callable, got {statistic!r}"
        )
    nan_policy = check_nan_policy(nan_policy, func)
    tk = time_kind(x)
    x = as_x(x, func)
    n_pts = x.shape[0]
    if not is_traced(x) and jnp.issubdtype(x.dtype, jnp.inexact):
        np_x = np.asarray(x)
        if np.isnan(np_x).any():
            raise ValueError(
                f"{func}: `x` holds NaN at index {int(np.argmax(np.isnan(np_x)))}; a point with "
                "no position cannot be binned"
            )
    if isinstance(values, list | tuple) and not is_traced(values):
        values = np.asarray(values)
    if not is_traced(values):
        np_v = np.asarray(values)
        if np_v.dtype.kind not in "biuf":
            raise TypeError(f"{func}: `values` must be real numeric, got dtype {np_v.dtype}")
        values = jnp.asarray(values)
    if values.ndim == 0 or values.shape[-1] != n_pts:
        raise ValueError(
            f"{func}: `values` must have shape (N,) or (*channels, N) with N = len(x) = "
            f"{n_pts}, got {tuple(values.shape)}"
        )
    if nan_policy == "raise":
        _raise_on_nan(values, func, "values")
    if tk is not None:
        return _binned_time(
            x, values, statistic, fn, bins, range, tk, capacity, x_sorted, nan_policy
        )
    if time_kind(bins) is not None or time_kind(range) is not None:
        raise TypeError(
            f"{func}: `bins`/`range` hold dates or durations but `x` is not a time axis"
        )
    edt = _edges_dtype(x)
    nbins = _bin_count(bins, func)
    uniform = nbins is not None
    if uniform:
        if range is not None:
            rg = range
            if not is_traced(rg) and len(rg) == 1:
                rg = rg[0]
            if is_traced(rg) or not isinstance(rg, tuple | list) or len(rg) != 2:
                rg = jnp.asarray(rg).reshape(-1)
                if rg.shape != (2,):
                    raise ValueError(f"{func}: `range` must be (lo, hi), got shape {rg.shape}")
            lo, hi = rg[0], rg[1]
        else:
            if n_pts == 0:
                raise ValueError(f"{func}: `x` is empty; pass `range` to define the bins")
            lo, hi = jnp.min(x), jnp.max(x)
        if not is_traced((lo, hi)):
            flo, fhi = float(lo), float(hi)
            if not (np.isfinite(flo) and np.isfinite(fhi)):
                raise ValueError(f"{func}: `range` must be finite, got ({flo}, {fhi})")
            if fhi < flo:
                raise ValueError(f"{func}: in `range`, start must be <= stop, got ({flo}, {fhi})")
            if flo == fhi:
                flo, fhi = flo - 0.5, fhi + 0.5
            np_edges = np.linspace(flo, fhi, nbins + 1, dtype=np.dtype(edt))
            edges = jnp.asarray(np_edges, edt)
        else:
            wdt = _acc_dtype(edt)
            lo = jnp.asarray(lo, wdt)
            hi = jnp.asarray(hi, wdt)
            same = lo == hi
            lo, hi = jnp.where(same, lo - 0.5, lo), jnp.where(same, hi + 0.5, hi)
            step = (hi - lo) / nbins
            edges = (jnp.arange(nbins + 1, dtype=wdt) * step + lo).at[-1].set(hi).astype(edt)
    else:
        edges = bins if is_traced(bins) else jnp.asarray(np.asarray(bins, float))
        if edges.ndim != 1 or edges.shape[0] < 2:
            raise ValueError(
                f"{func}: `bins` must be an int or a 1-D array of at least 2 edges, got shape "
                f"{tuple(edges.shape)}"
            )
        edges = edges.astype(edt)
        nbins = edges.shape[0] - 1
    if is_traced(edges):
        dmin = jnp.min(jnp.diff(edges))
        dec = (jnp.trunc(-jnp.log10(dmin)) + 6).astype(jnp.int32)
    else:
        dmin = float(np.min(np.diff(np.asarray(edges))))
        if not dmin > 0:
            raise ValueError(
                f"{func}: `bins` edges must increase strictly; the smallest edge difference "
                f"is {dmin!r}"
            )
        dec = jnp.asarray(int(-np.log10(dmin)) + 6, jnp.int32)
    return _binned_run(
        x, values, statistic, fn, edges, dec, uniform, capacity, x_sorted, nan_policy
    )


def _binned_run(
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
    x_sorted = bool(x_sorted) and n_pts > 0  # no points: the scatter road handles it simply
    if fn is not None:
        if capacity is None:
            if is_traced((x, edges)):
                raise TypeError(
                    f"{func}: a callable `statistic` needs a static `capacity` under jit; "
                    "compute it eagerly (the largest bin count) and pass capacity=..."
                )
            d, _ = _binnumber(x.astype(edges.dtype), edges, dec, uniform)
            big = int(np.bincount(np.asarray(d), minlength=nbins + 2)[1:-1].max(initial=1))
            capacity = 1 << (max(big, 1) - 1).bit_length()
        capacity = static_int(capacity, "capacity", func)
    ch = tuple(values.shape[:-1])
    v = jnp.moveaxis(values.reshape((int(np.prod(ch)), n_pts)), 0, 1)
    omit = nan_policy == "omit"
    stat, d = _binned_core(x, v, edges, dec, statistic, uniform, x_sorted, capacity, fn, omit)
    stat = jnp.moveaxis(stat, 1, 0).reshape(ch + (nbins,))
    return BinnedStatisticResult(stat, edges, d)


def _binned_time(
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
) -> BinnedStatisticResult:
    """:func:`binned_statistic` on a time axis: ``x`` already int64 nanoseconds, edges exact.

    Int ``bins`` split ``range`` (dates, default the first and last time) in exact integer
    arithmetic, ``lo + floor(k * (hi - lo) / nbins)``: float64 cannot hold nanoseconds near
    1e18. The edges come back as ``datetime64[ns]`` (``timedelta64[ns]`` for a duration axis)
    when they are concrete.
    """
    func = "binned_statistic"
    nbins = _bin_count(bins, func)
    uniform = nbins is not None
    if uniform:
        if rng is not None:
            if not is_traced(rng) and len(rng) == 1 and not isinstance(rng, str):
                rng = rng[0]
            if is_traced(rng):
                pair = jnp.asarray(rng).reshape(-1)
            else:
                if not isinstance(rng, tuple | list | np.ndarray) or len(rng) != 2:
                    raise ValueError(f"{func}: `range` must be (lo, hi) dates, got {rng!r}")
                lo_v = _bound_array(rng[0], "range", x, func, tk)
                hi_v = _bound_array(rng[1], "range", x, func, tk)
                pair = jnp.stack([jnp.asarray(lo_v).reshape(()), jnp.asarray(hi_v).reshape(())])
            if pair.shape != (2,):
                raise ValueError(f"{func}: `range` must be (lo, hi), got shape {pair.shape}")
            lo, hi = pair[0], pair[1]
        else:
            if x.shape[0] == 0:
                raise ValueError(f"{func}: `x` is empty; pass `range` to define the bins")
            lo, hi = jnp.min(x), jnp.max(x)
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
            edges = jnp.asarray(np_edges.astype(np.int64))
        else:
            lo, hi = jnp.asarray(lo, jnp.int64), jnp.asarray(hi, jnp.int64)
            same = lo == hi
            lo, hi = jnp.where(same, lo - nbins, lo), jnp.where(same, hi + nbins, hi)
            span = hi - lo
            q, r = span // nbins, span % nbins
            k = jnp.arange(nbins + 1, dtype=jnp.int64)
            edges = lo + k * q + (k * r) // nbins
    else:
        if is_traced(bins):
            edges = jnp.asarray(bins)
        else:
            edges = jnp.asarray(_bound_array(bins, "bins", x, func, tk))
        if edges.ndim != 1 or edges.shape[0] < 2:
            raise ValueError(
                f"{func}: `bins` must be an int or a 1-D array of at least 2 edges, got shape "
                f"{tuple(edges.shape)}"
            )
        edges = edges.astype(jnp.int64)
        if not is_traced(edges):
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
    res = _binned_run(x, values, statistic, fn, edges, dec, False, capacity, x_sorted, nan_policy)
    if not is_traced(res.bin_edges):
        unit = "datetime64[ns]" if tk == "M" else "timedelta64[ns]"
        res = res._replace(bin_edges=np.asarray(res.bin_edges, np.int64).view(unit))
    return res


def _raise_on_nan(values: Array, func: str, name: str) -> None:
    """``nan_policy="raise"``: a ValueError if ``values`` hold NaN, eagerly or at run time."""
    values = values if is_traced(values) else jnp.asarray(values)
    if not jnp.issubdtype(values.dtype, jnp.inexact):
        return
    nan = jnp.isnan(values).reshape(-1)
    payload = jnp.stack([jnp.sum(nan), jnp.argmax(nan)]).astype(index_dtype())

    def message(facts: np.ndarray) -> str:
        return (
            f"{func}: `{name}` holds {int(facts[0])} NaN (the first at flat index "
            f"{int(facts[1])}) with nan_policy='raise'; use nan_policy='omit' to skip missing "
            "readings"
        )

    _raise_if(jnp.any(nan), payload, message)
