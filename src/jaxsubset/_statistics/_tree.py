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

Sums, means and the variance family take a leaner variant, :func:`block_ranges`: blocks of
:data:`SPAN` points, the in-block prefix and suffix partials by cumulative sums (the moments'
about a point each of them holds), and ranges inside one block reduced point by point
(gathered alone, then put back by a scatter, when they are few), so no point-level table is
built. A sum or mean shares the variance's pass where both are asked, and is the same bits
alone. The point-level table stays for the extremes, skew/kurt and cov/corr.

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
    Extreme,
    Fold,
    Moments,
    Sum,
    chan,
    extreme_statistic,
    float_dtype,
    fold_of,
    mean_statistic,
    pair_leaves,
    pair_statistics,
    spread_statistics,
    sum_statistic,
)


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


# points per block of the block road (:func:`block_ranges`); ranges inside one block are
# reduced point by point, at most this many points each
SPAN = 32


def inside_block(
    yb: Array, fb: Array, cb: Array, start: Array, stop: Array, moments: bool = True
) -> Array:
    """``(R, 2, C)``: the sum of ``cb`` and the ``M2`` of the finite points of ranges lying
    inside one block, two passes over the block's points (``(R, 1, C)``, the sums alone,
    without ``moments``).

    ``yb``/``fb``/``cb``: ``(M, SPAN, C)`` finite values (0 elsewhere), finite flags and the
    values summed; ``start``/``stop``: ``(R,)``, each range inside block ``start // SPAN``.
    The shift is the range's first finite point.
    """
    jj = jnp.minimum(start // SPAN, yb.shape[0] - 1)
    k = (jj * SPAN)[:, None] + jnp.arange(SPAN, dtype=start.dtype)[None, :]
    span = ((k >= start[:, None]) & (k < stop[:, None]))[:, :, None]
    if not moments:
        return jnp.sum(jnp.where(span, cb[jj], 0), axis=1)[:, None]
    rows, held = yb[jj], fb[jj]
    inm = held & span
    c = jnp.take_along_axis(rows, jnp.argmax(inm, axis=1)[:, None], axis=1)
    d = jnp.where(inm, rows - c, 0)
    mean = jnp.sum(d, axis=1, keepdims=True) / jnp.maximum(jnp.sum(inm, axis=1, keepdims=True), 1)
    e = jnp.where(inm, d - mean, 0)
    total = jnp.sum(jnp.where(span, cb[jj], 0), axis=1)
    return jnp.stack([total, jnp.sum(e * e, axis=1)], axis=1)


def block_ranges(
    v: Array, finite: Array, clean: Array, start: Array, stop: Array, moments: bool = True
) -> tuple[Array, Array | None]:
    """``(K, C)`` sums of ``clean`` and ``M2`` of the finite points (``v``, 0 elsewhere) of
    every range ``[start, stop)``, from partials inside it, reading blocks of :data:`SPAN`
    (the sums alone, ``M2`` None, without ``moments``: the same sums, bit for bit).

    Per block, its sum and two passes about its first finite point (a reshape); per point,
    the partials of its block's prefix up to it and suffix from it: cumulative sums, those of
    the moments about a point every such prefix (the block's first finite point) or suffix
    (its last) holds, ``M2 = S2 - S1**2 / n`` over at most ``SPAN`` points about one of their
    own (a constant run gives exactly 0). A range over several blocks is ``suffix (+) whole
    blocks (+) prefix`` (sums; Chan for the moments), the whole blocks from disjoint sparse
    tables over the block partials; a range inside one block is reduced point by point
    (:func:`inside_block`), on those ranges alone when they are few. Nothing is subtracted.
    """
    num, ch = v.shape
    fdt = v.dtype
    m = -(-num // SPAN)
    levels = max((max(m, 2) - 1).bit_length(), 1)
    p_blocks = 1 << levels
    pad = [(0, m * SPAN - num), (0, 0)]
    yb, fb, cb = (jnp.pad(a, pad).reshape(m, SPAN, ch) for a in (v, finite, clean))
    sums = jnp.pad(jnp.sum(cb, axis=1), [(0, p_blocks - m), (0, 0)])
    sum_table = _levels(Sum(), sums, levels)[0].reshape((-1, ch))
    pre_sum = jnp.cumsum(cb, 1).reshape((-1, ch))
    suf_sum = lax.cumsum(cb, 1, reverse=True).reshape((-1, ch))
    last = jnp.maximum(stop - 1, start)
    j0, j1 = start // SPAN, last // SPAN

    at = take  # clipped reads along the first axis
    run_sum = query(Sum(), sum_table, sums, j0 + 1, j1 - 1, p_blocks)
    cross_parts = [at(suf_sum, start) + run_sum + at(pre_sum, last)]
    if moments:
        cross_parts.append(_cross_m2(yb, fb, start, last, j0, j1, levels))
    cross = jnp.stack(cross_parts, axis=1)
    k = start.shape[0]
    is_in = (j0 == j1) & (stop > start)
    cap = max(256, k // (8 * SPAN))

    def dense() -> Array:
        return inside_block(yb, fb, cb, start, stop, moments)

    def few() -> Array:  # only the ranges inside one block, gathered, then put back
        idx = jnp.nonzero(is_in, size=cap, fill_value=k)[0]
        part = inside_block(yb, fb, cb, at(start, idx), at(stop, idx), moments)
        return jnp.zeros((k, len(cross_parts), ch), fdt).at[idx].set(part, mode="drop")

    inside = dense() if k <= cap else lax.cond(jnp.sum(is_in) <= cap, few, dense)
    res = jnp.where(is_in[:, None, None], inside, cross)
    res = jnp.where((stop > start)[:, None, None], res, 0)
    return res[:, 0], (res[:, 1] if moments else None)


def _cross_m2(
    yb: Array, fb: Array, start: Array, last: Array, j0: Array, j1: Array, levels: int
) -> Array:
    """``(K, C)``: :func:`block_ranges`' ``M2`` of the ranges over several blocks, suffix
    (+) whole blocks (+) prefix by Chan's formula, each partial about one of its own points."""
    m, _, ch = yb.shape
    fdt, idt = yb.dtype, start.dtype
    p_blocks = 1 << levels
    cnt = jnp.sum(fb, axis=1, dtype=idt)
    c_first = jnp.take_along_axis(yb, jnp.argmax(fb, axis=1)[:, None], axis=1)
    c_last = jnp.take_along_axis(yb, SPAN - 1 - jnp.argmax(fb[:, ::-1], axis=1)[:, None], axis=1)
    d = jnp.where(fb, yb - c_first, 0)
    m_b = jnp.sum(d, axis=1) / jnp.maximum(cnt, 1).astype(fdt)
    e = jnp.where(fb, d - m_b[:, None], 0)
    own = (cnt, c_first[:, 0], m_b, jnp.sum(e * e, axis=1))
    totals = tuple(jnp.pad(a, [(0, p_blocks - m), (0, 0)]) for a in own)  # empty blocks
    table = tuple(a.reshape((-1, ch)) for a in _levels(Moments(), totals, levels)[0])

    def partials(n_run: Array, s1: Array, s2: Array) -> tuple[Array, ...]:
        mean = s1 / jnp.maximum(n_run, 1).astype(fdt)
        flat = (n_run, mean, jnp.maximum(s2 - s1 * mean, 0))
        return tuple(a.reshape((-1, ch)) for a in flat)

    at = take  # clipped reads along the first axis
    g = jnp.where(fb, yb - c_last, 0)
    pre = partials(jnp.cumsum(fb, axis=1, dtype=idt), jnp.cumsum(d, 1), jnp.cumsum(d * d, 1))
    suf = partials(
        lax.cumsum(fb.astype(idt), 1, reverse=True),
        lax.cumsum(g, 1, reverse=True),
        lax.cumsum(g * g, 1, reverse=True),
    )
    head = (at(suf[0], start), at(c_last[:, 0], j0), at(suf[1], start), at(suf[2], start))
    tail = (at(pre[0], last), at(c_first[:, 0], j1), at(pre[1], last), at(pre[2], last))
    run = query(Moments(), table, totals, j0 + 1, j1 - 1, p_blocks)
    return chan(chan(head, run), tail)[3]


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
    from ._reference import nan_counts, range_counts  # exact integer counts, shared

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
    total = None  # the block road's sums (below), shared by sum/mean and the moments
    if {"var", "std", "sem"} & set(stats):
        # moments of the finite points; a range holding +-inf has NaN variance (inf - inf)
        finite = jnp.isfinite(yf) if is_float else notnan
        if is_float:
            n_inf = range_counts(jnp.isinf(yf), start, count)
        else:
            n_inf = jnp.zeros((k, c), idt)
        total, q = block_ranges(jnp.where(finite, yf, 0), finite, clean, start, stop)
        assert q is not None
        out.update(spread_statistics(stats, n, q, ddof, poisoned | (n_inf > 0)))
    if {"sum", "mean"} & set(stats):
        # the block road's sums, computed beside the moments above or alone (the same bits
        # either way: a mean alone and beside a std agree)
        if total is None:
            total, _ = block_ranges(clean, notnan, clean, start, stop, moments=False)
        if "sum" in stats:
            out["sum"] = sum_statistic(total, poisoned)
        if "mean" in stats:
            out["mean"] = mean_statistic(n, total, poisoned)
    if {"skew", "kurt"} & set(stats):
        from ..reduce import shape_statistic

        finite = jnp.isfinite(yf) if is_float else notnan
        v = jnp.where(finite, yf, 0)
        zero = jnp.zeros_like(v)
        leaves4 = (finite.astype(idt), v, zero, zero, zero, zero)
        _, _, _, q2, q3, q4 = fold_ranges(fold_of("skew"), leaves4, start, stop)
        bad = poisoned
        if is_float:  # a range holding +-inf: NaN, as its variance
            bad = bad | (range_counts(jnp.isinf(yf), start, count) > 0)
        for which in ("skew", "kurt"):
            if which in stats:
                out[which] = shape_statistic(which, n, q2, q3, q4, bad)
    if {"first", "last"} & set(stats):
        out.update(first_last(clean, notnan, start, stop, stats, omit))
    if pair_stats:  # every channel pair's co-moments, folded from partials inside each range
        folded = fold_ranges(fold_of("cov"), pair_leaves(yf, True, omit), start, stop)
        out.update(pair_statistics(pair_stats, folded, ddof, c))
    for which in ("min", "max"):
        if which in stats:
            fold = fold_of(which)
            vals = jnp.where(notnan, yf, fold.ident)
            ext = fold_ranges(fold, vals, start, stop)
            out[which] = extreme_statistic(n, ext, poisoned)
    return out
