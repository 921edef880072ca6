"""Bins of SORTED x by blocks: each bin's statistics from reductions of whole blocks.

Sorted ``x`` makes every bin a run of consecutive points. The points are cut into blocks of
``B`` (about ``sqrt(N / bins)``); a block whose first and last points fall in the same bin
lies wholly inside it (bins are runs) and is reduced whole, by a reshaped reduction that XLA
vectorises: its partial holds only that bin's own points. The partials are then added into
their bins by a scatter of ``N / B`` updates, and the few blocks a bin edge cuts (at most one
per edge: ``bins + 1``) point by point. The bin numbers are computed for the blocks' first and
last points and for the points of the cut blocks only, never for all ``N`` points.

So a statistic costs about one vectorised pass over the values instead of a scatter per
point (~10x a pass on the CPU), and no result is a difference of running sums: every sum
adds only the bin's own points. Variances take two passes about a shift that is one of the
bin's own values (its first point; with ``omit``, its largest real reading), so a constant or
one-point bin has a variance of exactly 0, as on the scatter road (``_labels``), whose
conventions this road follows.
"""

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp
from jax import lax

from .._core import Array, index_dtype, squared_deviations
from ..reduce import block_size, extreme_statistic, mean_statistic, spread_statistics
from ._labels import work_dtype


class Blocks:
    """The block structure of sorted points: which blocks are whole, which points go alone.

    ``label_of(i)`` gives the bin (``-1`` below, ``nbins`` above or none) of the points at
    indices ``i``; bins are non-decreasing in the index (the promise of sorted ``x``).
    """

    def __init__(self, num: int, nbins: int, block: int, label_of: Callable[[Array], Array]):
        idt = index_dtype()
        self.nbins, self.block = nbins, block
        self.m = m = num // block  # whole-able blocks; the tail goes point by point
        heads = jnp.arange(m, dtype=idt) * block
        ends = label_of(jnp.concatenate([heads, heads + (block - 1)]))  # one program
        first, last = ends[:m], ends[m:]
        whole = first == last
        self.first = first
        self.bin = jnp.where(whole & (first >= 0), first, nbins)  # the scatter's slot
        self.whole = whole
        # the blocks a change of bin cuts, one slot per edge k = 0 .. nbins (from below k to
        # k or above): the first block ending at or above k, cut if it starts below k; a
        # block cut by several edges is kept once, for its first one (``m``: no block).
        # The blocks ending below k, counted by one histogram of the block ends (a search
        # or ``nonzero`` over the blocks compiles several times longer)
        k = jnp.arange(nbins + 1, dtype=last.dtype)
        ends_at = jnp.zeros((nbins + 2,), idt).at[last + 1].add(1, mode="drop")
        j = jnp.cumsum(ends_at)[:-1]  # the blocks whose last label is below k
        valid = (j < m) & (jnp.take(first, jnp.minimum(j, m - 1)) < k)
        prev_j = jnp.concatenate([jnp.full((1,), -1, idt), j[:-1]])
        prev_valid = jnp.concatenate([jnp.zeros((1,), bool), valid[:-1]])
        cut = jnp.where(valid & ~(prev_valid & (prev_j == j)), j, m)
        offs = jnp.arange(block, dtype=idt)
        pts = (cut[:, None] * block + offs).reshape(-1)
        real = jnp.repeat(cut < m, block)  # (cut is m where there are fewer cut blocks)
        pts = jnp.concatenate([pts, jnp.arange(m * block, num, dtype=idt)])
        self.real = jnp.concatenate([real, jnp.ones((num - m * block,), bool)])
        self.pts = jnp.where(self.real, pts, 0)
        lab = label_of(self.pts)
        self.pts_lab = jnp.where(self.real, lab, nbins)
        self.pts_bin = jnp.where((self.pts_lab >= 0) & (self.pts_lab < nbins), self.pts_lab, nbins)

    def rows(self, v: Array) -> Array:
        """``(m, B, C)``: the whole-able blocks of ``(N, C)`` values."""
        return v[: self.m * self.block].reshape(self.m, self.block, v.shape[1])

    def points(self, v: Array) -> Array:
        """``(P, C)``: the values of the points scattered one by one."""
        return v[self.pts]

    def per_bin(self, op: str, fill: Any, part: Array, pts: Array) -> Array:
        """``(nbins, C)``: block partials ``(m, C)`` and point values ``(P, C)`` into bins."""
        nb = self.nbins
        part = jnp.where(self.whole[:, None], part, fill)
        cols = []
        for i in range(part.shape[1]):
            acc = jnp.full((nb,), fill, part.dtype)
            acc = getattr(acc.at[self.bin], op)(part[:, i], mode="drop")
            cols.append(getattr(acc.at[self.pts_bin], op)(pts[:, i], mode="drop"))
        return jnp.stack(cols, axis=1)

    def bin_of_rows(self, table: Array) -> Array:
        """``(m, 1, C)``: each block's entry of a per-bin ``(nbins, C)`` table (0 where the
        block is in no bin or not whole)."""
        pad = jnp.concatenate([table, jnp.zeros((1, table.shape[1]), table.dtype)])
        return pad[self.bin][:, None, :]

    def bin_of_points(self, table: Array) -> Array:
        """``(P, C)``: each point's entry of a per-bin table (0 in no bin)."""
        pad = jnp.concatenate([table, jnp.zeros((1, table.shape[1]), table.dtype)])
        return pad[self.pts_bin]

    def counts(self) -> Array:
        """``(nbins,)`` int: the points of every bin (exact)."""
        idt = index_dtype()
        nb = self.nbins
        acc = (
            jnp.zeros((nb,), idt)
            .at[self.bin]
            .add(jnp.where(self.whole, self.block, 0).astype(idt), mode="drop")
        )
        return acc.at[self.pts_bin].add(self.real.astype(idt), mode="drop")

    def below(self) -> Array:
        """int: the points below every bin (label -1), which come first in sorted order."""
        idt = index_dtype()
        blocks = jnp.sum(self.whole & (self.first < 0)).astype(idt) * self.block
        return blocks + jnp.sum(self.pts_lab < 0).astype(idt)

    def sums(self, v: Array) -> Array:
        """``(nbins, C)``: the sum of ``v`` over every bin."""
        return self.per_bin("add", 0, jnp.sum(self.rows(v), axis=1), self.points(v))


def sorted_bins(
    y: Array,
    label_of: Callable[[Array], Array],
    nbins: int,
    stats: tuple[str, ...],
    ddof: int,
    omit: bool,
    force: bool = False,
) -> dict[str, Array] | None:
    """Statistics of ``y`` ``(N, C)`` in the bins of sorted points, or None (few per bin).

    Args:
        y: ``(N, C)`` values, in the order of the sorted ``x``.
        label_of: the bin of the points at given indices (``-1`` below every bin, ``nbins``
            above or in none), non-decreasing in the index.
        nbins: static number of bins.
        stats: names among :data:`._registry.BLOCK_BIN_STATISTICS`.
        ddof: delta degrees of freedom of var/std/sem.
        omit: leave NaN readings out (per channel).
        force: blocks whatever the points per bin (the chooser decided on the real shapes,
            these may be an eager call's buckets).

    Returns:
        dict of ``(nbins, C)`` arrays by statistic name (the label roads' conventions:
        floats in the work dtype, ``"count"`` in the index dtype), or None where the bins
        hold too few points each for blocks to pay (the caller takes the label roads).
    """
    num, c = y.shape
    block = block_size(num, nbins, force)
    if block is None or num < block:
        return None
    b = Blocks(num, nbins, block, label_of)
    idt = index_dtype()
    wdt = work_dtype(y.dtype)
    is_float = jnp.issubdtype(y.dtype, jnp.inexact)
    yw = y.astype(wdt)
    n_all = jnp.broadcast_to(b.counts()[:, None], (nbins, c))
    need_nan = is_float and (omit or {"min", "max"} & set(stats))
    n_nan = b.sums(jnp.isnan(yw).astype(idt)) if need_nan else jnp.zeros((nbins, c), idt)
    n = n_all - n_nan if omit else n_all
    held_nan = (n_nan > 0) & (not omit)
    safe = jnp.where(n > 0, n, 1).astype(wdt)
    clean = jnp.where(jnp.isnan(yw), 0, yw) if (omit and is_float) else yw
    out: dict[str, Array] = {}
    if "count" in stats:
        out["count"] = n
    if {"sum", "mean"} & set(stats):
        total = b.sums(clean)
        if "sum" in stats:
            out["sum"] = total
        if "mean" in stats:
            out["mean"] = mean_statistic(n, total)
    for s in ("min", "max"):
        if s in stats:
            ident = jnp.inf if s == "min" else -jnp.inf
            vals = jnp.where(jnp.isnan(yw), ident, yw) if is_float else yw
            red = jnp.min if s == "min" else jnp.max
            ext = b.per_bin(s, ident, red(b.rows(vals), axis=1), b.points(vals))
            out[s] = extreme_statistic(n, ext, held_nan)
    if {"var", "std", "sem"} & set(stats):
        q, bad = _m2(b, yw, n, safe, n_all, omit, is_float)
        out.update(spread_statistics(stats, n, q, ddof, bad))
    return out


def _m2(
    b: Blocks,
    yw: Array,
    n: Array,
    safe: Array,
    n_all: Array,
    omit: bool,
    is_float: bool,
) -> tuple[Array, Array]:
    """``(M2, bad)`` per bin in two passes about a shift that is one of each bin's own values
    (exactly 0 for a constant bin); ``bad`` where a NaN is held (without ``omit``) or an
    infinite value (the first sum is then not finite); no NaN reaches another bin's gradient
    (:func:`squared_deviations`' rule: no derivative flows through the mean, whose own
    contribution is zero)."""
    nan = jnp.isnan(yw) if is_float else jnp.zeros(yw.shape, bool)
    if omit:  # the bin's largest real reading (its first point may be NaN)
        vals = jnp.where(nan, -jnp.inf, yw)
        shift = b.per_bin("max", -jnp.inf, jnp.max(b.rows(vals), axis=1), b.points(vals))
    else:  # the bin's first point: after the points below every bin, the bins in order
        start = jnp.cumsum(n_all[:, 0]) - n_all[:, 0] + b.below()
        shift = yw[jnp.clip(start, 0, yw.shape[0] - 1)]
    shift = lax.stop_gradient(jnp.where(jnp.isfinite(shift), shift, 0))
    rows, pts = b.rows(yw), b.points(yw)
    keep_r: Any = ~b.rows(nan) if omit else True
    keep_p: Any = ~b.points(nan) if omit else True
    z_r = jnp.where(keep_r, rows - b.bin_of_rows(shift), 0)
    z_p = jnp.where(keep_p, pts - b.bin_of_points(shift), 0)
    s1 = b.per_bin("add", 0, jnp.sum(z_r, axis=1), z_p)
    ok = jnp.isfinite(s1) & (n > 0)
    mean = lax.stop_gradient(jnp.where(ok, shift + s1 / safe, 0))
    ok_r = b.bin_of_rows(ok.astype(jnp.int8)) > 0
    q_r = squared_deviations(rows, keep_r, b.bin_of_rows(mean), ok_r, 1)
    ok_p = b.bin_of_points(ok.astype(jnp.int8)) > 0
    dev_p = jnp.where(keep_p & ok_p, pts - b.bin_of_points(mean), 0)
    return b.per_bin("add", 0, q_r, dev_p * dev_p), ~jnp.isfinite(s1)
