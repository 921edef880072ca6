"""The block-tree road: statistics over any index ranges from partial results INSIDE each range.

Prefix sums answer a range as ``S[stop] - S[start]``, so every value before the range (a
``1e30``, an ``inf``, the digits lost by a long float32 sum) leaks into it. This road never
subtracts: a range is the combination of partial results that each hold only points of the
range, so **a result depends only on the points of its range** (up to the order of the
additions), whatever the rest of the series holds.

Structure (``B`` points per block, ``M = ceil(N / B)`` blocks):

- in every block, the prefix and the suffix partials of each point, and the same *disjoint
  sparse table* over the block's points (described next) for ranges inside one block;
- over the block totals, a disjoint sparse table: at level ``l`` the blocks are cut into
  segments of ``2**(l + 1)``, and each block holds the fold from itself to the middle of its
  segment (suffix in the left half, prefix in the right half), so any run of whole blocks
  ``[a, b]`` is ``T[l][a] (+) T[l][b]`` with ``l = floor(log2(a ^ b))``: two partials, both
  inside the run.

A range spanning blocks is ``suffix(start) (+) table(whole blocks) (+) prefix(stop - 1)``.
Both tables are built by doubling (:func:`_levels`): the prefix and suffix folds of aligned
blocks of ``2**l`` entries give those of ``2**(l + 1)`` with one combination per entry. The
block table's levels are one ``lax.scan`` (one compiled body, whatever N), the few point levels
static reshapes. Only elementwise folds, reshapes and gathers: no dot, no scatter, no serial
loop over the data, the same program on every backend.

Moments use Chan's combination of ``(n, c, m, M2)`` partials (Pébay's for ``M3``, ``M4``)
whose mean is ``c + m`` with the shift ``c`` one of the partial's own points; means are
compared as ``(c_b - c_a) + (m_b - m_a)``, a difference of two data values first (exact for
nearby values), so large offsets cancel as in a two-pass variance.
"""

import functools

import jax
import jax.numpy as jnp
from jax import lax

from .._core import Array, index_dtype
from ..reduce import (
    extreme_statistic,
    float_dtype,
    mean_statistic,
    pair_leaves,
    pair_statistics,
    spread_statistics,
)
from ._folds import Extreme, Fold, Moments, Moments4, Pairs, Sum


BLOCK_LEVELS = 4
BLOCK = 1 << BLOCK_LEVELS  # points per block; ranges inside one use the point table
UNROLL_POINTS = 1 << 16  # from this many points on, the point levels are unrolled


def where(pred: Array, a, b):
    return jax.tree_util.tree_map(lambda u, v: jnp.where(pred, u, v), a, b)


def take(p, idx: Array, axis: int = 0):
    return jax.tree_util.tree_map(lambda a: jnp.take(a, idx, axis=axis, mode="clip"), p)


def floor_log2(v: Array) -> Array:
    """``floor(log2(v))`` of positive ints, exactly (count-leading-zeros); 0 for ``v <= 1``."""
    v = jnp.maximum(v, 1).astype(jnp.uint32)
    return (31 - lax.clz(v)).astype(jnp.int32)


# ---------------------------------------------------------------------------- the structure
def double(fold: Fold, pre, suf, lev: int):
    """One level of :func:`_levels` with a static ``lev``: reshapes and broadcasts, no gather."""

    def halves(a):
        return a.reshape((-1, 2, 1 << lev) + a.shape[1:])

    p2 = jax.tree_util.tree_map(halves, pre)
    s2 = jax.tree_util.tree_map(halves, suf)
    lower_total = jax.tree_util.tree_map(lambda a: a[:, 0, :1], s2)  # suf at the lower start
    upper_total = jax.tree_util.tree_map(lambda a: a[:, 1, :1], s2)
    pre_hi = fold.combine(lower_total, jax.tree_util.tree_map(lambda a: a[:, 1], p2))
    suf_lo = fold.combine(jax.tree_util.tree_map(lambda a: a[:, 0], s2), upper_total)

    def join(lo, hi):
        return jnp.stack([lo, hi], axis=1).reshape((-1,) + lo.shape[2:])

    pre = jax.tree_util.tree_map(join, jax.tree_util.tree_map(lambda a: a[:, 0], p2), pre_hi)
    suf = jax.tree_util.tree_map(join, suf_lo, jax.tree_util.tree_map(lambda a: a[:, 1], s2))
    return pre, suf


def _levels(fold: Fold, leaves, levels: int, unroll: bool = False):
    """A disjoint sparse table over ``(S, C)`` leaves and the prefix/suffix folds of blocks.

    At level ``l`` every entry holds the fold from the start of its aligned block of ``2**l``
    entries to itself (``pre``) and from itself to the block's end (``suf``); the level's
    table entry is ``suf`` in the left half of its segment of ``2**(l + 1)`` and ``pre`` in the
    right half, so it covers exactly ``[a, mid)`` or ``[mid, b]``. Doubling a block combines
    each entry with the other half's total (``suf`` at that half's start): every partial is a
    fold of its own entries only. The levels are one ``lax.scan`` (one compiled body whatever
    their number) or, with ``unroll``, static reshapes (no gather; for few levels over many
    entries).

    Args:
        fold: the statistic's fold.
        leaves: pytree of ``(S, C)`` partials, ``S`` a multiple of ``2**levels``.
        levels: static number of levels (>= 1).
        unroll: static; unrolled levels instead of a scan.

    Returns:
        ``(table, pre, suf)``: the table as a pytree of ``(levels, S, C)``, and the prefix and
        suffix folds of aligned blocks of ``2**levels`` entries, pytrees of ``(S, C)``.
    """
    size = jax.tree_util.tree_leaves(leaves)[0].shape[0]
    pos = jnp.arange(size, dtype=jnp.int32)
    if unroll:
        pre = suf = leaves
        entries = []
        for lev in range(levels):
            right = ((pos >> lev) & 1 == 1)[:, None]
            entries.append(where(right, pre, suf))
            pre, suf = double(fold, pre, suf, lev)
        table = jax.tree_util.tree_map(lambda *ls: jnp.stack(ls), *entries)
        return table, pre, suf

    def level(carry, lev):
        pre, suf = carry
        right = ((pos >> lev) & 1 == 1)[:, None]
        entry = where(right, pre, suf)
        base = (pos >> (lev + 1)) << (lev + 1)  # start of the segment of 2**(lev + 1)
        mid = base + (1 << lev)
        lower = (pos < mid)[:, None]
        total_lower = take(suf, base)
        total_upper = take(suf, jnp.minimum(mid, size - 1))
        pre = where(lower, pre, fold.combine(total_lower, pre))
        suf = where(lower, fold.combine(suf, total_upper), suf)
        return (pre, suf), entry

    (pre, suf), table = lax.scan(level, (leaves, leaves), jnp.arange(levels, dtype=jnp.int32))
    return table, pre, suf


def query(fold: Fold, table, leaves, a: Array, b: Array, size: int):
    """The fold of ``leaves[a..b]`` (inclusive; empty where ``a > b``) from a disjoint table.

    ``table`` is ``_table(fold, leaves, levels)`` flattened to ``(levels * size, C)``: at level
    ``floor(log2(a ^ b))`` the entries of ``a`` and ``b`` cover ``[a, mid)`` and ``[mid, b]``
    exactly, so the result holds only ``leaves[a..b]``.
    """
    idt = a.dtype
    lev = floor_log2(jnp.bitwise_xor(a, b)).astype(idt)
    ta = take(table, lev * size + a)
    tb = take(table, lev * size + b)
    one = take(leaves, a)
    run = where((a == b)[:, None], one, fold.combine(ta, tb))
    return where((a <= b)[:, None], run, fold.identity_like(one))


def fold_ranges(fold: Fold, leaves, start: Array, stop: Array):
    """The fold of ``leaves`` over every range ``[start, stop)``, from partials inside it.

    Args:
        fold: the statistic's fold.
        leaves: pytree of ``(N, C)`` per-point partials (empty partials where not counted).
        start: ``(K,)`` first index.
        stop: ``(K,)`` one past the last index (``stop >= start``).

    Returns:
        The fold's partial for every range, a pytree of ``(K, C)`` (empty for an empty range).
    """
    n_pts = jax.tree_util.tree_leaves(leaves)[0].shape[0]
    blk = BLOCK
    m = -(-n_pts // blk)
    size = m * blk
    levels = max((max(m, 2) - 1).bit_length(), 1)
    p_blocks = 1 << levels

    def padded(a):
        return jnp.pad(a, [(0, size - n_pts)] + [(0, 0)] * (a.ndim - 1))

    # padding points are empty partials: identity (zeros, or -inf/+inf for the extremes)
    flat = jax.tree_util.tree_map(padded, leaves)
    if isinstance(fold, Extreme):
        pad_mask = (jnp.arange(size) >= n_pts)[:, None]
        flat = jnp.where(pad_mask, fold.ident, flat)
    # the point levels: static reshapes for long series (no gathers), a scan for short ones
    # (a smaller program; the same combinations in the same order)
    point_table, pre, suf = _levels(fold, flat, BLOCK_LEVELS, unroll=size >= UNROLL_POINTS)
    totals = jax.tree_util.tree_map(lambda a: a[::blk], suf)  # the suffix at a block's start
    empty = fold.identity_like(jax.tree_util.tree_map(lambda a: a[:1], totals))
    totals = jax.tree_util.tree_map(
        lambda t, e: jnp.concatenate([t, jnp.repeat(e, p_blocks - m, axis=0)]), totals, empty
    )

    def flatten(t):
        return jax.tree_util.tree_map(lambda a: a.reshape((-1,) + a.shape[2:]), t)

    block_table = flatten(_levels(fold, totals, levels)[0])
    point_table = flatten(point_table)
    pre_f, suf_f = pre, suf

    last = jnp.maximum(stop - 1, start)
    j0 = start // blk
    j1 = last // blk
    # a range inside one block: two entries of the point table (levels below the block size)
    inside = query(fold, point_table, flat, start, last, size)
    # over several blocks: suffix of the first, the whole blocks between, prefix of the last
    run = query(fold, block_table, totals, j0 + 1, j1 - 1, p_blocks)
    cross = fold.combine(fold.combine(take(suf_f, start), run), take(pre_f, last))
    res = where((j0 == j1)[:, None], inside, cross)
    return where((stop > start)[:, None], res, fold.identity_like(res))


def first_last(
    clean: Array, notnan: Array, start: Array, stop: Array, stats: tuple[str, ...], omit: bool
) -> dict[str, Array]:
    """The first/last counted reading of every range, read at its index (no arithmetic).

    The index of the next counted reading at or after each point (a reversed cumulative min)
    and of the last one at or before it (a cumulative max), both O(N) associative scans; a
    range's first reading is the next one after ``start`` if it lies before ``stop``. Without
    ``omit`` every point counts: the first/last point, NaN if it is NaN. The gradient reaches
    exactly the point read.
    """
    num = clean.shape[0]
    idt = start.dtype
    iota = jnp.arange(num, dtype=idt)[:, None]
    keep = notnan if omit else jnp.ones(notnan.shape, bool)
    nan = jnp.array(jnp.nan, clean.dtype)
    out: dict[str, Array] = {}

    def read(at: Array, found: Array) -> Array:
        at = jnp.clip(at, 0, num - 1)
        val = jnp.take_along_axis(clean, at, axis=0)
        ok = found & jnp.take_along_axis(notnan, at, axis=0)
        return jnp.where(ok, val, nan)

    nonempty = (stop > start)[:, None]
    if "first" in stats:
        nxt = lax.cummin(jnp.where(keep, iota, num), axis=0, reverse=True)
        at = nxt[jnp.clip(start, 0, num - 1)]
        out["first"] = read(at, nonempty & (at < stop[:, None]))
    if "last" in stats:
        prv = lax.cummax(jnp.where(keep, iota, -1), axis=0)
        at = prv[jnp.clip(stop - 1, 0, num - 1)]
        out["last"] = read(at, nonempty & (at >= start[:, None]))
    return out


@functools.partial(jax.jit, static_argnames=("stats", "ddof", "omit"))
def tree_ranges(
    y: Array, start: Array, count: Array, stats: tuple[str, ...], *, ddof: int, omit: bool
) -> dict[str, Array]:
    """count/sum/mean/var/std/sem/min/max/first/last/skew/kurt/cov/corr over ranges on the tree.

    Args:
        y: ``(N, C)`` values.
        start: ``(K,)`` first index of each range, in ``[0, N]``.
        count: ``(K,)`` points per range, ``start + count <= N``.
        stats: names among count, sum, mean, var, std, sem, min, max, first, last, skew,
            kurt, cov, corr.
        ddof: delta degrees of freedom of var/std.
        omit: leave NaN readings out (per channel).

    Returns:
        dict of ``(K, C)`` arrays by statistic name (the registry's conventions); ``"cov"``
        and ``"corr"`` ``(K, C, C)``, with their point counts under ``PAIR_COUNT``.
    """
    from ..reduce import PAIR_STATISTICS
    from ._reference import nan_counts  # the exact integer counts are shared with the reference

    idt = index_dtype()
    fdt = float_dtype(y.dtype)
    start = start.astype(idt)
    count = count.astype(idt)
    stop = start + count
    yf = y.astype(fdt)
    k, c = start.shape[0], y.shape[1]
    out: dict[str, Array] = {}
    is_float = jnp.issubdtype(y.dtype, jnp.inexact)
    n_nan = nan_counts(y, start, count)
    rows_all = jnp.broadcast_to(count[:, None], (k, c)).astype(idt)
    n = rows_all - n_nan if omit else rows_all
    # a NaN held and not omitted makes every statistic but the count NaN
    poisoned = (n_nan > 0) if (is_float and not omit) else jnp.zeros((k, c), bool)
    nan = jnp.array(jnp.nan, fdt)
    pair_stats = tuple(s for s in stats if s in PAIR_STATISTICS)
    if y.shape[0] == 0:
        zero = jnp.zeros((k, c), fdt)
        for s in stats:
            out[s] = n if s == "count" else (zero if s == "sum" else jnp.full((k, c), nan))
        if pair_stats:
            i0 = jnp.zeros((k, c * (c + 1) // 2), idt)
            f0 = i0.astype(fdt)
            empty = (i0, f0, f0, f0, f0, f0, f0, f0, i0)
            out.update(pair_statistics(pair_stats, empty, ddof, c))
        return out
    notnan = ~jnp.isnan(yf) if is_float else jnp.ones(yf.shape, bool)
    clean = jnp.where(notnan, yf, 0)
    if "count" in stats:
        out["count"] = n
    if {"sum", "mean"} & set(stats):
        total = fold_ranges(Sum(), clean, start, stop)
        if "sum" in stats:
            out["sum"] = jnp.where(poisoned, nan, total)
        if "mean" in stats:
            out["mean"] = mean_statistic(n, total, poisoned)
    if {"var", "std", "sem"} & set(stats):
        # moments of the finite points; a range holding +-inf has NaN variance (inf - inf)
        finite = jnp.isfinite(yf) if is_float else notnan
        if is_float:
            p = jnp.cumsum(jnp.isinf(yf).astype(idt), axis=0)
            p = jnp.concatenate([jnp.zeros((1, c), idt), p])
            n_inf = p[stop] - p[start]
        else:
            n_inf = jnp.zeros((k, c), idt)
        v = jnp.where(finite, yf, 0)
        zero = jnp.zeros_like(v)
        leaves = (finite.astype(idt), v, zero, zero)  # one point: its own shift, no deviation
        _, _, _, q = fold_ranges(Moments(), leaves, start, stop)
        out.update(spread_statistics(stats, n, q, ddof, poisoned | (n_inf > 0)))
    if {"skew", "kurt"} & set(stats):
        from ..reduce import shape_statistic

        finite = jnp.isfinite(yf) if is_float else notnan
        v = jnp.where(finite, yf, 0)
        zero = jnp.zeros_like(v)
        leaves4 = (finite.astype(idt), v, zero, zero, zero, zero)
        _, _, _, q2, q3, q4 = fold_ranges(Moments4(), leaves4, start, stop)
        bad = poisoned
        if is_float:  # a range holding +-inf: NaN, as its variance
            p = jnp.cumsum(jnp.isinf(yf).astype(idt), axis=0)
            p = jnp.concatenate([jnp.zeros((1, c), idt), p])
            bad = bad | (p[stop] - p[start] > 0)
        for which in ("skew", "kurt"):
            if which in stats:
                out[which] = shape_statistic(which, n, q2, q3, q4, bad)
    if {"first", "last"} & set(stats):
        out.update(first_last(clean, notnan, start, stop, stats, omit))
    if pair_stats:  # every channel pair's co-moments, folded from partials inside each range
        folded = fold_ranges(Pairs(), pair_leaves(yf, True, omit), start, stop)
        out.update(pair_statistics(pair_stats, folded, ddof, c))
    for which in ("min", "max"):
        if which in stats:
            fold = Extreme(which)
            vals = jnp.where(notnan, yf, fold.ident)
            ext = fold_ranges(fold, vals, start, stop)
            out[which] = extreme_statistic(n, ext, poisoned)
    return out
