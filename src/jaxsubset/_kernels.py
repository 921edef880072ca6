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
* **disjoint ranges** (sorted and non-overlapping: bins of sorted x, chunks): every whole block
  lies in one range, so block sums / block ``(sum z, sum z**2)`` (each block measured from its
  own first value, one variadic reduction) / block extremes are folded into their range by a
  scatter of ``N / block`` updates, plus a small gather at each range end: one plain pass.

Precision: values are shifted by a reference (the mean of a strided sample) before the prefix
sums, so ``1e8 + noise`` keeps its digits; float32 data is accumulated in float64 when x64 is on.
Non-finite values never leak into neighbouring ranges: when any is present, NaN/+inf/-inf are
counted per range and the results follow NumPy (a range with a NaN gives NaN, and so on).
``nan_policy="omit"`` stays on these roads: NaN -> 0 beside a count of real readings in the
sums, NaN -> +inf/-inf for min/max, and the median's radix select ranks only real keys.
"""

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ._reduce import reduce_extreme
from ._typing import Array


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
        return op(op(reduce_extreme(hv, 1, which), reduce_extreme(tv, 1, which)), mid)
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


# ---------------------------------------------------------------------------- disjoint ranges
_PREFIX_BLOCK = 16  # points summed by one row of the triangular matrix product


def _prefix_1d(z: Array, block: int = _PREFIX_BLOCK) -> Array:
    """Inclusive prefix sums of a 1-D ``z`` without a scan over its length.

    Each block of ``block`` points gets its in-block prefix sums from one matrix product with
    an upper-triangular matrix of ones; the block totals' prefix (recursively, ``block`` times
    shorter) is added back. XLA's CPU ``cumsum`` measured 2x to 3x slower. Values must be
    finite (a product with 0 turns inf into NaN in the rest of the block).

    Args:
        z: ``(n,)`` float values.
        block: static block length.

    Returns:
        ``(n,)`` inclusive prefix sums.
    """
    n = z.shape[0]
    if n <= 4 * block:
        return jnp.cumsum(z)
    m = -(-n // block)
    zp = jnp.pad(z, (0, m * block - n)).reshape(m, block)
    tri = jnp.triu(jnp.ones((block, block), z.dtype))  # tri[k, j] = 1 where k <= j
    tot = jnp.sum(zp, axis=1)
    offset = _prefix_1d(tot, block) - tot
    return (zp @ tri + offset[:, None]).reshape(-1)[:n]


def _disjoint_windows(
    y: Array, start: Array, stop: Array, block: int
) -> tuple[Array, Array, Array, Array]:
    """The points of DISJOINT sorted ranges outside their whole blocks, and those blocks' owners.

    Returns ``(vals, mask, dest, inside)``: ``vals`` ``(K, 2 * block, C)`` the head and tail
    points of every range that do not fill a whole block (``mask`` marks them), and, per whole
    block of ``block`` points, ``dest`` the range holding it entirely (``K`` where none does).
    """
    n, c = y.shape
    k = start.shape[0]
    nb = n // block
    b0 = jnp.arange(nb, dtype=start.dtype) * block
    # kk[b] = #{k : stop[k] <= b0[b]}: each range marks the first block at or after its stop,
    # and a prefix sum over the blocks counts the marks (exact small integers in floats);
    # a search of every block in ``stop`` ("scan_unrolled") was 10 dependent gathers per
    # block for 1001 ranges, ~2 ms on 1e7 points
    first_after = jnp.minimum(-(-stop // block), nb)
    marks = jnp.zeros((nb + 1,), jnp.float32 if nb < (1 << 24) else jnp.float64)
    marks = marks.at[first_after].add(1)[:nb]
    kk = jnp.round(_prefix_1d(marks)).astype(start.dtype)
    kc = jnp.clip(kk, 0, max(k - 1, 0))
    inside = (kk < k) & (start[kc] <= b0) & (b0 + block <= stop[kc])
    dest = jnp.where(inside, kk, k)
    fb0 = -(-start // block)
    fb1 = stop // block
    has_full = fb1 > fb0
    h_end = jnp.where(has_full, fb0 * block, jnp.minimum(stop, start + block))
    t_beg = jnp.where(has_full, fb1 * block, h_end)
    offs = jnp.arange(block, dtype=start.dtype)
    idx = jnp.concatenate([start[:, None] + offs, t_beg[:, None] + offs], axis=1)
    end = jnp.concatenate(
        [jnp.broadcast_to(h_end[:, None], (k, block)), jnp.broadcast_to(stop[:, None], (k, block))],
        axis=1,
    )
    mask = (idx < end)[..., None]
    vals = jnp.take(y, idx, axis=0, mode="clip")
    return vals, mask, dest, kc


# see _disjoint_moments: the one-pass block moments about one global shift are used when every
# block's sum of squares about it is at most this many times that about the block's mean
_BLOCK_CONDITION = 16.0


def _disjoint_moments(
    y: Array, start: Array, stop: Array, block: int
) -> tuple[Array, Array, Array]:
    """Mean, ``sum((y - mean_k)**2)`` and a rounding correction over DISJOINT sorted ranges.

    ONE pass over ``y``: each block of ``block`` points is measured against one global shift
    when every block is well conditioned about it, else against its own first value (``z = y
    - y[b0]``, so ``1e8 * x + noise`` keeps its digits; ``lax.cond``), and reduced to
    ``(sum z, sum z**2)`` by one variadic reduction (measured 3-4x faster on CPU than two
    halving reductions); a block inside range ``k`` then adds ``M2_b + block * (mean_b -
    mean_k)**2`` (Chan's combination, no cancellation) and the points of a range outside its
    whole blocks (a small gather at each end) are measured against ``mean_k`` directly.
    Returns ``(mean, s1, s2)`` ``(K, C)``: ``s2`` the squared deviations from ``mean``, ``s1``
    the plain deviations (zero up to rounding; ``s2 - s1**2 / n`` removes that rounding).
    """
    n, c = y.shape
    k = start.shape[0]
    nb = n // block
    yb = y[: nb * block].reshape(nb, block, c)

    def block_sums(r: Array) -> tuple[Array, Array]:
        z = yb - r
        zero = jnp.zeros((), y.dtype)
        return lax.reduce((z, z * z), (zero, zero), lambda a, b: (a[0] + b[0], a[1] + b[1]), (1,))

    # first about one global shift: when every block is well conditioned about it (its sum
    # of squares about the shift at most _BLOCK_CONDITION times that about its own mean) no
    # digits are lost, and no block's first value has to be read again after the pass (one
    # cache miss per block, ~1 ms on 1e7 points); otherwise (a trend, steps: 1e8 * x) about
    # each block's first value (``lax.cond``)
    cref = _reference(y)
    s1g, s2g = block_sums(cref)
    m2g = s2g - s1g * (s1g / block)
    fine = jnp.all((s2g <= _BLOCK_CONDITION * m2g) | ~jnp.isfinite(s2g))

    def about_first() -> tuple[Array, Array, Array]:
        r = lax.stop_gradient(yb[:, :1])  # the result does not depend on the shift
        return (*block_sums(r), r[:, 0])

    s1b, s2b, r0 = lax.cond(fine, lambda: (s1g, s2g, jnp.broadcast_to(cref, (nb, c))), about_first)
    r = r0[:, None]
    bm2 = jnp.maximum(s2b - s1b * (s1b / block), 0)
    vals, mask, dest, _ = _disjoint_windows(y, start, stop, block)
    # everything relative to each range's first value: block means of 1e8 * x + noise would
    # otherwise lose their digits in ``mean_b - mean_k``
    ref = lax.stop_gradient(jnp.take(y, start, axis=0, mode="clip"))
    ref_c = jnp.concatenate([ref, jnp.zeros((1, c), y.dtype)])
    u = (r[:, 0] - ref_c[dest]) + s1b / block  # mean_b - ref_k
    cnt = (stop - start).astype(y.dtype)[:, None]
    rel = jnp.where(mask, vals - ref[:, None, :], 0)
    full_sum = jnp.zeros((k, c), y.dtype).at[dest].add(block * u, mode="drop")
    mean_rel = (full_sum + rel.sum(axis=1)) / jnp.where(cnt > 0, cnt, 1)
    mean_rel_c = jnp.concatenate([mean_rel, jnp.zeros((1, c), y.dtype)])
    dm = u - mean_rel_c[dest]
    full1 = jnp.zeros((k, c), y.dtype).at[dest].add(block * dm, mode="drop")
    full2 = jnp.zeros((k, c), y.dtype).at[dest].add(bm2 + block * dm * dm, mode="drop")
    dev = jnp.where(mask, rel - mean_rel[:, None, :], 0)
    mean = ref + mean_rel
    return mean, full1 + dev.sum(axis=1), full2 + (dev * dev).sum(axis=1)


def _disjoint_sum(y: Array, start: Array, stop: Array, block: int) -> Array:
    """Sums of ``y`` ``(N, C)`` over DISJOINT sorted ranges in one plain pass: ``(K, C)``.

    Block sums (a plain reshape-reduce, which XLA vectorises at ``np.sum`` speed), each whole
    block added to the one range holding it, the points outside whole blocks by a small
    gather. Non-finite values stay inside their own range (NumPy's sums per range).
    """
    n, c = y.shape
    k = start.shape[0]
    nb = n // block
    bsum = y[: nb * block].reshape(nb, block, c).sum(axis=1)
    vals, mask, dest, _ = _disjoint_windows(y, start, stop, block)
    full = jnp.zeros((k, c), y.dtype).at[dest].add(bsum, mode="drop")
    return full + jnp.where(mask, vals, 0).sum(axis=1)


def _disjoint_extreme(y: Array, start: Array, stop: Array, which: str, block: int) -> Array:
    """Min or max of ``y`` ``(N, C)`` over DISJOINT sorted ranges in one pass: ``(K, C)``.

    Block extremes by halving (vectorised), each whole block folded into the one range holding
    it by a scatter of ``N / block`` updates, and the points outside whole blocks read by a
    small gather: no sparse table (its levels cost more than the data pass on XLA CPU).
    """
    op = jnp.minimum if which == "min" else jnp.maximum
    ident = jnp.array(jnp.inf if which == "min" else -jnp.inf, y.dtype)
    n, c = y.shape
    k = start.shape[0]
    nb = n // block
    bext = _tree_reduce(y[: nb * block].reshape(nb, block, c), op)
    vals, mask, dest, _ = _disjoint_windows(y, start, stop, block)
    base = jnp.full((k, c), ident, y.dtype)
    full = (
        base.at[dest].min(bext, mode="drop")
        if which == "min"
        else base.at[dest].max(bext, mode="drop")
    )
    part = jnp.where(mask, vals, ident)
    part = reduce_extreme(part, 1, which)
    return op(full, part)


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
