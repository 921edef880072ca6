"""Kernels for rolling windows, one per point: sorted search, blocked prefix sums, extremes.

A rolling window per point (``rolling_statistic`` without ``at``) asks N range queries whose
bounds are themselves sorted. The general range roads of ``_kernels`` pay a full cumulative sum
(XLA's CPU ``cumsum`` costs ~11 ns a point, as much as pandas' whole rolling sum) and a search
that bisects every point ``log2`` times. Here (measured on the 2-core development CPU, see
BENCHMARKS.md, "Statistics"):

* **search**: exact anchors every ``_ANCHOR`` queries, then one interpolation guess per query
  between its two anchors (in x, so it is exact on evenly spaced data and on the clipped start
  of a series), VERIFIED per point by two comparisons; only when some guess is wrong does a
  bisection between the verified bounds run (zero iterations otherwise). Exact on any sorted,
  NaN-free ``x``: the interpolation is only a speed hint.
* **prefix sums**: blocks of ``_PREFIX_BLOCK`` points summed by one small matrix product with
  an upper-triangular matrix of ones (XLA vectorises a dot; it does not vectorise a scan), plus
  the block offsets (a short, recursive prefix over the block totals).
* **extremes**: per-row extremes of ``_ROW`` points reduce the window to a masked in-row part
  (for the row holding the window's end) and a sparse-table query over row extremes.
* **evenly spaced windows** (an integer axis on an exact grid, detected at run time): every
  window holds the same number of points once full, so count/sum/mean/var/std and min/max
  run chunk by chunk (``_CHUNK`` points) with a small state carried from chunk to chunk
  (:func:`_regular_sum_stats`, :func:`_regular_extreme`); only the outputs are N long, where
  the roads above write several N-long temporaries (fresh buffers, page faults included).
"""

import functools
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ._kernels import (
    _PREFIX_BLOCK,
    _acc_dtype,
    _finish,
    _float_dtype,
    _floor_log2,
    _prefix_1d,
    _range_extreme,
    _reference,
    _sparse_table,
    _table_query,
)
from ._typing import Array
from ._validate import index_dtype


_ANCHOR = 64  # queries between two exactly searched anchors


# ---------------------------------------------------------------------------- search
# jitted (here and below) so that calls outside ``jit`` compile once per shape: run op by op,
# every ``lax.cond``/``while_loop`` of a new closure compiled again on every call (~3 s)
@functools.partial(jax.jit, static_argnames=("side", "spacing"))
def _sorted_search(a: Array, v: Array, side: str, spacing: int = _ANCHOR) -> Array:
    """``searchsorted(a, v, side)`` for SORTED queries ``v``, exact, in about two passes.

    Every ``spacing``-th query (and the last) is searched in full; the answer of a query in
    between lies between its two anchors' answers and is guessed by interpolating its value
    linearly between the anchor answers' ``a`` values, then checked with ``a[g - 1]`` and
    ``a[g]``. Wrong guesses (irregular spacing) are bisected between the bounds the check
    leaves; the loop does not run when every guess is right.

    Args:
        a: ``(n,)`` sorted values.
        v: ``(q,)`` sorted queries.
        side: ``"left"`` or ``"right"``, as :func:`jax.numpy.searchsorted`.
        spacing: static number of queries per anchor.

    Returns:
        ``(q,)`` insertion indices in the index dtype.
    """
    n, q = a.shape[0], v.shape[0]
    idt = index_dtype()
    if q == 0 or n == 0:
        return jnp.zeros((q,), idt)
    m = -(-q // spacing)
    qpos = np.minimum(np.arange(m + 1) * spacing, q - 1)
    anchors = jnp.searchsorted(a, v[qpos], side=side).astype(idt)
    vp = jnp.pad(v, (0, m * spacing - q), mode="edge").reshape(m, spacing)
    lo, hi = anchors[:-1, None], anchors[1:, None]
    a_lo = a[jnp.clip(lo, 0, n - 1)]
    a_hi = a[jnp.clip(hi - 1, 0, n - 1)]
    fdt = jnp.result_type(float)
    d = (vp - a_lo).astype(fdt)  # exact differences on an integer (time) axis
    span = (a_hi - a_lo).astype(fdt)
    cnt = (hi - 1 - lo).astype(fdt)
    good = (span > 0) & (cnt > 0)
    r = jnp.clip(d * cnt / jnp.where(good, span, 1), 0, cnt + 1)
    r = jnp.where(good, r, 0)
    if side == "right":
        g = lo + jnp.where(d >= 0, jnp.floor(r).astype(idt) + 1, 0)
    else:
        g = lo + jnp.where(d > 0, jnp.ceil(r).astype(idt), 0)
    g = jnp.clip(g, lo, hi)

    def below(i: Array) -> Array:  # a[i] <= v (right) / a[i] < v (left): answer > i
        ai = a[jnp.clip(i, 0, n - 1)]
        return (ai <= vp) if side == "right" else (ai < vp)

    left_ok = (g == 0) | below(g - 1)
    right_ok = (g == n) | ~below(g)
    ok = left_ok & right_ok

    def fix() -> Array:
        # the check bounds the answer: below g when a[g - 1] is too big, above g otherwise
        b_lo = jnp.where(ok, g, jnp.where(left_ok, g + 1, lo))
        b_hi = jnp.where(ok, g, jnp.where(left_ok, hi, g - 1))

        def step(state: tuple[Array, Array]) -> tuple[Array, Array]:
            lo_, hi_ = state
            mid = (lo_ + hi_) // 2
            go = below(mid) & (lo_ < hi_)
            return jnp.where(go, mid + 1, lo_), jnp.where(go | (lo_ >= hi_), hi_, mid)

        out, _ = lax.while_loop(lambda st: jnp.any(st[0] < st[1]), step, (b_lo, b_hi))
        return out

    g = lax.cond(jnp.all(ok), lambda: g, fix)
    return g.reshape(-1)[:q]


# ---------------------------------------------------------------------------- prefix sums
def _prefix_sums(z: Array) -> Array:
    """Inclusive prefix sums of ``z`` ``(N, C)`` along axis 0: one blocked road per column.

    Args:
        z: ``(N, C)`` finite float values.

    Returns:
        ``(N, C)`` inclusive prefix sums.
    """
    if z.shape[1] == 1:
        return _prefix_1d(z[:, 0])[:, None]
    if z.shape[1] > 16:  # many channels: one scan rather than a long unrolled program
        return jnp.cumsum(z, axis=0)
    return jnp.stack([_prefix_1d(z[:, j]) for j in range(z.shape[1])], axis=1)


def _column_window_sums(cols: list[Array], start: Array, stop: Array | None) -> list[Array]:
    """:func:`_window_sums` of each ``(N, C)`` array of ``cols``, column by column.

    Stacking the prefix sums of several quantities into one array made XLA materialise it
    (``(N, 2)`` for std: a full extra pass); per column, each prefix feeds the final fusion.
    """
    out = []
    for z in cols:
        if z.shape[1] > 16:
            out.append(_window_sums(jnp.cumsum(z, axis=0), start, stop))
            continue
        parts = [_window_sums(_prefix_1d(z[:, j])[:, None], start, stop) for j in range(z.shape[1])]
        out.append(parts[0] if len(parts) == 1 else jnp.concatenate(parts, axis=1))
    return out


def _window_sums(p: Array, start: Array, stop: Array | None) -> Array:
    """Window sums ``P[stop - 1] - P[start - 1]`` from inclusive prefix sums ``p`` ``(N, C)``.

    ``stop=None`` means ``stop = i + 1`` (window ``i`` ends at point ``i``): no gather.
    """
    n = p.shape[0]
    head = jnp.where((start > 0)[:, None], p[jnp.clip(start - 1, 0, n - 1)], 0)
    if stop is None:
        return p - head
    tail = jnp.where((stop > 0)[:, None], p[jnp.clip(stop - 1, 0, n - 1)], 0)
    return jnp.where((stop > start)[:, None], tail - head, 0)


# ---------------------------------------------------------------------------- extremes
# rows of 8 points: reduce_window computes each in-row prefix/suffix naively (row - 1 ops a
# point), so 8 beat 16 by ~10 ms on 1e7 points despite the twice longer table; 4 lost
_ROW = 8  # points per row of the in-row prefix/suffix extremes
_ROW_LEVELS = 9  # sparse-table levels over row extremes: windows up to 2**9 rows (4096 points)


def _rolling_extreme(
    y: Array,
    start: Array | Callable[[], Array],
    which: str,
    n: Array | None = None,
    min_count: int = 1,
    back: Array | None = None,
) -> Array:
    """Min or max of ``y`` ``(N, C)`` over ``[start[i], i]`` for every point ``i``: ``(N, C)``.

    Rows of ``_ROW`` points give in-row prefix and suffix extremes (two ``reduce_window``
    passes) and row extremes (one reduction) with a sparse table over them that holds only
    the levels the longest window needs (:func:`_row_query`). A window
    that crosses into earlier rows is ``op(suffix[start], rows strictly between, prefix[i])``;
    one inside its own row is ``prefix[i]`` when it starts at the row's start. When some window
    is neither (a short window starting mid-row) or spans more than ``2**_ROW_LEVELS`` whole
    rows, ``lax.cond`` takes ``_kernels._range_extreme`` instead (exact either way). Measured
    6x faster than ``_range_extreme`` on 100-point windows. Index arrays are rebuilt inside
    each branch from ``start`` (``lax.cond`` materialises its operands).

    Evenly spaced windows (``back`` given, ``n`` None) take :func:`_regular_extreme` when it
    applies.

    Args:
        y: ``(N, C)`` values.
        start: ``(N,)`` first index of each window, in ``[0, i + 1]``, or a function returning
            it (then computed only where used: not an N-long ``lax.cond`` operand).
        which: ``"min"`` or ``"max"``.
        n: ``(N, C)`` counted points per window, or None for the rows ``i + 1 - start``.
        min_count: static; windows with fewer than this many counted points give NaN.
        back: optional scalar, when ``start[i] == max(i - back, 0)`` for every ``i`` (evenly
            spaced windows): the rows strictly inside the windows of one row then take only
            two values, so the sparse table is queried twice per row, not once per point.

    Returns:
        ``(N, C)`` window extremes (NaN where too few points are counted).
    """
    op = lax.min if which == "min" else lax.max
    ident = jnp.array(jnp.inf if which == "min" else -jnp.inf, y.dtype)
    npt, c = y.shape
    idt = index_dtype()
    row = _ROW
    min_count = max(min_count, 1)
    start_of = start if callable(start) else (lambda: start)
    if back is not None and n is None and npt >= 2 * row:
        # evenly spaced windows: chunk by chunk, unless too short (inside one row) or too long
        # for the row table
        ok = (back >= row - 1) & (back <= _EXTREME_HISTORY - 2 * row)
        return lax.cond(
            ok,
            lambda: _regular_extreme(y, back, which, min_count),
            lambda: _rolling_extreme(y, start_of(), which, n, min_count, back=None),
        )
    start = start_of()

    def index() -> tuple[Array, Array, Array]:
        i = jnp.arange(npt, dtype=idt)
        return i, start // row, i // row

    def masked(v: Array) -> Array:
        i, _, _ = index()
        cnt = (i + 1 - start)[:, None] if n is None else n
        return jnp.where(cnt >= min_count, v, jnp.nan)

    def general() -> Array:
        i, _, _ = index()
        return masked(_range_extreme(y, start, i + 1, which))

    if npt < 2 * row:
        return general()
    m = -(-npt // row)
    levels = min(_ROW_LEVELS + 1, int(np.floor(np.log2(m))) + 1)
    # fast road: every window crosses into an earlier row or starts at its own row's start,
    # and spans at most 2**_ROW_LEVELS whole rows
    i, rs, ri = index()
    span = jnp.where(start <= i, ri - rs - 1, 0)
    bad = (start <= i) & (((rs == ri) & (start % row != 0)) | (span > (1 << _ROW_LEVELS)))
    fits = ~jnp.any(bad)
    # the sparse-table levels the longest window needs (on a regular grid from ``back``:
    # its windows span at most (back - 1) // row whole rows)
    longest = jnp.max(span) if back is None else jnp.maximum(back - 1, 0) // row
    need = _floor_log2(jnp.maximum(longest, 1)) + 1

    def fast() -> Array:
        i, rs, ri = index()
        yp = jnp.pad(y, ((0, m * row - npt), (0, 0)), constant_values=ident)
        yp = yp.reshape(m, row, c)
        pad_pre, pad_suf = ((0, 0), (row - 1, 0), (0, 0)), ((0, 0), (0, row - 1), (0, 0))
        win, ones = (1, row, 1), (1, 1, 1)
        # a NumPy init value: JAX then recognises the max/min monoid (differentiable); a traced
        # one (a captured array becomes a branch operand) gives the generic, non-transposable op
        init = np.array(np.inf if which == "min" else -np.inf, y.dtype)
        pre = lax.reduce_window(yp, init, op, win, ones, pad_pre).reshape(m * row, c)[:npt]
        suf = lax.reduce_window(yp, init, op, win, ones, pad_suf).reshape(m * row, c)
        row_ext = jnp.max(yp, axis=1) if which == "max" else jnp.min(yp, axis=1)
        if back is None:
            lo = rs + 1
            mid = _row_query(row_ext, lo, jnp.maximum(ri, lo), op, ident, levels, need)
        else:
            # the windows of row r start in row rs_a = max(r * row - back, 0) // row or the
            # next one (their starts are consecutive): one query for each, per row
            r = jnp.arange(m, dtype=idt)
            rs_a = jnp.maximum(r * row - back, 0) // row
            lo = jnp.concatenate([rs_a + 1, rs_a + 2])
            both = _row_query(row_ext, lo, jnp.maximum(jnp.tile(r, 2), lo), op, ident, levels, need)
            mid_a, mid_b = both[:m], both[m:]
            rs_rows = jnp.pad(rs, (0, m * row - npt)).reshape(m, row)
            later = (rs_rows > rs_a[:, None])[..., None]
            mid = jnp.where(later, mid_b[:, None], mid_a[:, None]).reshape(m * row, c)[:npt]
        head = suf[jnp.clip(start, 0, npt - 1)]
        return masked(jnp.where((rs < ri)[:, None], op(op(head, mid), pre), pre))

    return lax.cond(fits, fast, general)


# sparse-table levels _regular_extreme builds per chunk, the smaller that covers the window
# (lax.switch): l levels answer windows of up to 2**l rows between their ends, with the
# last 8 * 2**l + 16 points carried from chunk to chunk (all 10 levels per chunk: 40 ms;
# a third depth, 7, cost compile time for little)
_EXTREME_LEVELS = (5, 10)


def _extreme_history(levels: int) -> int:
    """Points of history :func:`_regular_extreme` carries with a table of ``levels`` levels."""
    return _ROW * (1 << levels) + 2 * _ROW


_EXTREME_HISTORY = _extreme_history(_EXTREME_LEVELS[-1])  # the longest window it takes


def _regular_extreme(y: Array, back: Array, which: str, min_count: int) -> Array:
    """Min or max of ``y`` ``(N, C)`` over ``[max(i - back, 0), i]``, chunk by chunk.

    :func:`_rolling_extreme`'s rows of 8 points for evenly spaced windows (``_ROW - 1 <=
    back <= _EXTREME_HISTORY - 2 * _ROW``), streamed: per chunk of ``_CHUNK`` points the
    in-row prefix and suffix extremes of its points (two ``reduce_window``; a row's extreme
    is its first suffix), with the suffixes and row extremes of the last
    ``_EXTREME_HISTORY`` points carried from the chunk before (the identity before the
    series, which is what clipped windows need). A window is then the suffix where it starts
    (one contiguous slice: the starts are consecutive), the rows in between and the prefix
    where it ends. The rows in between are a fixed count on such an axis, so they are one
    sliding extreme over the row extremes: one level of a small sparse table built per
    chunk, read by two contiguous slices. Nothing N long but the output is written (the
    global road wrote four N-long temporaries and a table over every row).

    Args:
        y: ``(N, C)`` values (NaN-free, or NaN read as the identity by the caller).
        back: scalar, window ``i`` starts at ``max(i - back, 0)``.
        which: ``"min"`` or ``"max"``.
        min_count: static; windows of fewer points give NaN.

    Returns:
        ``(N, C)`` window extremes.
    """
    op = lax.min if which == "min" else lax.max
    ident = jnp.array(jnp.inf if which == "min" else -jnp.inf, y.dtype)
    init = np.array(np.inf if which == "min" else -np.inf, y.dtype)
    npt, c = y.shape
    idt = index_dtype()
    row, size = _ROW, _CHUNK
    back = jnp.asarray(back).astype(idt)
    min_count = max(min_count, 1)

    def in_row(v: Array, suffix: bool) -> Array:
        # ``reduce_window`` is never fused into its consumers: an unaligned slice of the
        # suffixes follows, and fused doubling steps under it ran point by point (~5 ns each)
        vr = v.reshape(-1, row, c)
        pad = ((0, 0), (0, row - 1), (0, 0)) if suffix else ((0, 0), (row - 1, 0), (0, 0))
        return lax.reduce_window(vr, init, op, (1, row, 1), (1, 1, 1), pad).reshape(-1, c)

    # evenly spaced windows: the first point of every row r starts its window in row
    # r + dr at in-row offset q (both the same for every row), so the point at offset u
    # starts in row r + dr + later[u]; the rows strictly between are a fixed count
    dr = (-back) // row  # floor(-back / row)
    q = (-back) - dr * row  # in [0, row)
    u = jnp.arange(row, dtype=idt)
    later = (q + u >= row)[None, :, None]
    # (a window starting in its own row starts at the row's start, as back >= row - 1, and is
    # the whole row: its head, the row's suffix from there, is then the whole window too)
    n_a = -dr - 1  # rows strictly between for a point with later False (one fewer if True)

    def sliding(tab: Array, length: Array, first: Array, count: int) -> Array:
        # op over rows[j : j + length] for j = first, ..., first + count - 1 (identity when
        # length <= 0): one level of the sparse table over ``rows``, two contiguous slices
        lvl = jnp.minimum(_floor_log2(jnp.maximum(length, 1)), tab.shape[0] - 1).astype(idt)
        width = jnp.left_shift(jnp.ones_like(length), lvl)
        zero = jnp.zeros((), idt)
        a = lax.dynamic_slice(tab, (lvl, first, zero), (1, count, c))[0]
        b = lax.dynamic_slice(tab, (lvl, first + length - width, zero), (1, count, c))[0]
        return jnp.where(length > 0, op(a, b), ident)

    def chunk(state: tuple, s0: Array, lead: Array) -> tuple[tuple, Array]:
        # lead: (length, C) the chunk's points, length a multiple of row (identity past N)
        suf_hist, rows_hist = state
        hist, hrows = suf_hist.shape[0], rows_hist.shape[0]
        levels = int(np.log2((hist - 2 * row) // row))
        length = lead.shape[0]
        nr = length // row
        pre = in_row(lead, False).reshape(nr, row, c)
        suf = in_row(lead, True)
        all_suf = jnp.concatenate([suf_hist, suf])
        all_rows = jnp.concatenate([rows_hist, suf.reshape(nr, row, c)[:, 0]])
        head = lax.dynamic_slice_in_dim(all_suf, hist - back, length).reshape(nr, row, c)
        # row r of the chunk (local row hrows + r): rows [r + dr + 1, r) and [r + dr + 2, r)
        first = hrows + dr + 1
        tab = _sparse_table(all_rows, levels, op, ident)
        mid_a = sliding(tab, n_a, first, nr)[:, None, :]
        mid_b = sliding(tab, n_a - 1, first + 1, nr)[:, None, :]
        mid = jnp.where(later, mid_b, mid_a)
        res = op(op(head, mid), pre).reshape(length, c)
        if min_count > 1:  # (every window holds at least one point)
            i = s0 + jnp.arange(length, dtype=idt)
            res = _count_mask(res, (jnp.minimum(i, back) + 1)[:, None], min_count)
        return (all_suf[length:], all_rows[nr:]), res

    def run(levels: int) -> Callable[[], Array]:
        def go() -> Array:
            hist = _extreme_history(levels)
            state = (
                jnp.full((hist, c), ident, y.dtype),
                jnp.full((hist // row, c), ident, y.dtype),
            )
            out = jnp.zeros((npt, c), y.dtype)
            m = npt // size

            def body(j: Array, carry: tuple) -> tuple:
                state, out = carry
                s0 = (j * size).astype(idt)
                state, res = chunk(state, s0, lax.dynamic_slice_in_dim(y, s0, size))
                return state, lax.dynamic_update_slice_in_dim(out, res, s0, 0)

            if m:
                state, out = lax.fori_loop(0, m, body, (state, out))
            rest = npt - m * size
            if rest:
                s0 = jnp.asarray(m * size, idt)
                pad = jnp.full((-(-rest // row) * row - rest, c), ident, y.dtype)
                _, res = chunk(state, s0, jnp.concatenate([y[m * size :], pad]))
                out = lax.dynamic_update_slice_in_dim(out, res[:rest], s0, 0)
            return out

        return go

    limits = jnp.asarray([_extreme_history(k) - 2 * row for k in _EXTREME_LEVELS[:-1]])
    return lax.switch(jnp.sum(limits < back), [run(k) for k in _EXTREME_LEVELS])


def _count_mask(res: Array, count: Array, min_count: int) -> Array:
    """``res`` where at least ``min_count`` points are counted, else NaN."""
    return jnp.where(count >= min_count, res, jnp.nan)


# levels a row table is built with: the first that covers the longest window (a table of all
# ``_ROW_LEVELS + 1`` levels over 1.25M rows is 100 MB, written on every call: ~45 ms)
_TABLE_LEVELS = (4, 7)


def _row_query(
    row_ext: Array, lo: Array, hi: Array, op: Callable, ident: Array, levels: int, need: Array
) -> Array:
    """``op`` over ``row_ext[lo:hi]`` from a sparse table of only the levels ``need`` asks.

    ``lax.switch`` picks the smallest of ``_TABLE_LEVELS`` (and ``levels``, all of them) that
    is at least ``need``; each branch builds its table once (materialised: fused into the
    query's gathers, XLA recomputed every level per query) and answers every query.
    """
    counts = sorted({min(k, levels) for k in _TABLE_LEVELS} | {levels})

    def branch(k: int) -> Callable[[Array, Array, Array], Array]:
        def run(row_ext: Array, lo: Array, hi: Array) -> Array:
            tab = lax.optimization_barrier(_sparse_table(row_ext, k, op, ident))
            return _table_query(tab, lo, hi, op, ident)

        return run

    which = jnp.sum(jnp.asarray(counts[:-1]) < need)
    return lax.switch(which, [branch(k) for k in counts], row_ext, lo, hi)


# ---------------------------------------------------------------------------- evenly spaced
# points per chunk of the one-pass roads: their temporaries (a few chunk-long columns) stay in
# the cache (L2/L3) and are reused chunk after chunk, so only the outputs are fresh N-long
# buffers; every XLA op in a loop body also costs ~1 us, so chunks are large (1e7 points:
# 8192 -> 65536 made min 102 -> 90 ms and std 86 -> 70 ms; 131072 no faster)
_CHUNK = 65536


def _chunk_columns(
    y: Array, t0: Array, size: int, columns: Callable[[Array], list[Array]], inside: bool
) -> list[Array]:
    """``columns(y[t0:t0 + size])``; unless ``inside``, rows of indices below 0 give zeros.

    Args:
        y: ``(N, C)`` values.
        t0: scalar first index (``>= 0`` when ``inside``).
        size: static rows.
        columns: maps ``(size, C)`` values to a list of ``(size, C)`` quantities.
        inside: static, the chunk lies inside the series (a plain contiguous slice).
    """
    if inside:
        return columns(lax.dynamic_slice_in_dim(y, t0, size))
    idx = t0 + jnp.arange(size, dtype=t0.dtype)
    ok = (idx >= 0)[:, None]
    return [jnp.where(ok, col, 0) for col in columns(y[jnp.clip(idx, 0, y.shape[0] - 1)])]


def _chunk_prefix(z: Array) -> Array:
    """Inclusive prefix sums along axis 1 of ``z`` ``(K, size)``: blocked matrix products."""
    k, size = z.shape
    b = _PREFIX_BLOCK
    m = -(-size // b)
    if m * b != size:
        z = jnp.pad(z, ((0, 0), (0, m * b - size)))
    tri = jnp.triu(jnp.ones((b, b), z.dtype))  # tri[r, j] = 1 where r <= j
    inb = (z.reshape(k * m, b) @ tri).reshape(k, m, b)
    tot = inb[:, :, -1]
    off = jnp.cumsum(tot, axis=1) - tot
    return (inb + off[:, :, None]).reshape(k, m * b)[:, :size]


def _regular_rolling(
    y: Array,
    back: Array,
    lag: int,
    columns: Callable[[Array], list[Array]],
    finish: Callable[[list[Array], Array, bool], dict[str, Array]],
    names: tuple[str, ...],
    out_dtype: Any,
) -> dict[str, Array]:
    """Statistics of the windows ``[max(i - back, 0), i + 1 - lag)`` of every point, one pass.

    Evenly spaced windows all hold ``back + 1 - lag`` points once they are full, so window
    ``i``'s sums are window ``i - 1``'s plus the point entering (``i - lag``) minus the point
    leaving (``i - back - 1``). Per chunk of ``_CHUNK`` points: ``columns`` of both (one
    contiguous slice each), their difference's in-chunk prefix sums (blocked matrix products),
    plus the carried window sums before the chunk give every window sum; ``finish`` turns them
    into the statistics, written into the outputs. Only the outputs are N long: the unfused
    road wrote about four N-long temporaries (each a fresh buffer, page faults included).
    Being differences of a running sum, not of two prefix sums of the whole series, the
    sums also keep more digits (errors grow with the window, not with the series).

    Args:
        y: ``(N, C)`` values.
        back: scalar, window ``i`` starts at ``max(i - back, 0)``.
        lag: static 0 (windows end at their point, included) or 1 (excluded).
        columns: maps ``(size, C)`` values to the list of ``(size, C)`` quantities summed.
        finish: maps the window sums (a list like ``columns``'s, ``(size, C)`` each), the
            ``(size,)`` point indices and a static flag (every window of the chunk is full:
            ``back + 1 - lag`` rows) to a dict of ``(size, C)`` statistics.
        names: the keys ``finish`` returns.
        out_dtype: dtype of the statistics.

    Returns:
        dict of ``(N, C)`` statistics by name.
    """
    n, c = y.shape
    idt = index_dtype()
    back = jnp.clip(jnp.asarray(back).astype(idt), lag - 1, n)
    k = len(columns(y[:1]))

    def chunk(s0: Array, size: int, carry: Array) -> tuple[Array, dict[str, Array]]:
        def run(inside: bool) -> tuple[Array, dict[str, Array]]:
            # inside: the point leaving every window of the chunk exists, so every window is
            # full (``back + 1 - lag`` rows); one ``lax.cond`` per chunk (each costs ~4 us)
            lead = _chunk_columns(y, s0 - lag, size, columns, inside)
            trail = _chunk_columns(y, s0 - back - 1, size, columns, inside)
            # one prefix per quantity: concatenated, XLA fused the slices into a slow gather
            sums = [
                _chunk_prefix((a - b).T) + carry[j * c : (j + 1) * c, None]  # (c, size)
                for j, (a, b) in enumerate(zip(lead, trail, strict=True))
            ]
            i = s0 + jnp.arange(size, dtype=idt)
            res = finish([sm.T for sm in sums], i, inside)
            return jnp.concatenate([sm[:, -1] for sm in sums]), res

        return lax.cond(s0 >= back + 1, lambda: run(True), lambda: run(False))

    carry = jnp.zeros((k * c,), d_type := _acc_dtype(y.dtype))
    outs = {s: jnp.zeros((n, c), out_dtype) for s in names}
    m = n // _CHUNK

    def body(j: int, state: tuple) -> tuple:
        carry, outs = state
        s0 = (j * _CHUNK).astype(idt)
        carry, res = chunk(s0, _CHUNK, carry)
        outs = {s: lax.dynamic_update_slice_in_dim(outs[s], res[s], s0, 0) for s in names}
        return carry.astype(d_type), outs

    if m:
        carry, outs = lax.fori_loop(0, m, body, (carry, outs))
    rest = n - m * _CHUNK
    if rest:
        s0 = jnp.asarray(m * _CHUNK, idt)
        _, res = chunk(s0, rest, carry)
        outs = {s: lax.dynamic_update_slice_in_dim(outs[s], res[s], s0, 0) for s in names}
    return outs


def _sum_columns(v: Array, ref: Array, order: int, skipna: bool, counts: bool) -> list[Array]:
    """The quantities whose window sums give the rolling moments, from ``v`` ``(n, C)``.

    ``v - ref`` (and its square with ``order`` 2; none with ``order`` 0); with ``counts``
    the non-finite values count 0 there and three indicator columns follow (NaN, +inf,
    -inf), as :func:`_kernels._finish` takes them.
    """
    cols = []
    if counts:
        z = jnp.where(jnp.isfinite(v), v - ref, 0)
        cols = [z, z**2][:order]
        flags = (jnp.isnan(v), v == jnp.inf, v == -jnp.inf)
        return cols + [f.astype(v.dtype) for f in flags]
    if order >= 1:
        cols.append(v - ref)
    if order == 2:
        # with skipna a NaN squares as ``ref``: no NaN in the gradient where it is unused
        cols.append(((jnp.where(jnp.isnan(v), ref, v) if skipna else v) - ref) ** 2)
    return cols


def _regular_sum_stats(
    y: Array,
    back: Array,
    lag: int,
    stats: tuple[str, ...],
    ddof: int,
    skipna: bool,
    min_periods: int,
) -> dict[str, Array]:
    """count/sum/mean/var/std of evenly spaced windows by :func:`_regular_rolling`, finished.

    The same conventions as :func:`_rolling_range_stats` (shifted sums; NaN/+inf/-inf counted
    per window only when the series' total is not finite, chosen by ``lax.cond``).

    Args:
        y: ``(N, C)`` values.
        back: scalar, window ``i`` is ``[max(i - back, 0), i + 1 - lag)``.
        lag: static 0 or 1.
        stats: names among count/sum/mean/var/std.
        ddof: delta degrees of freedom of var/std.
        skipna: leave NaN out (pandas' convention).
        min_periods: fewest counted points that give a result (rows for ``"count"``).

    Returns:
        dict of ``(N, C)`` float arrays by statistic name.
    """
    n_pts, c = y.shape
    idt = index_dtype()
    back = jnp.clip(jnp.asarray(back).astype(idt), lag - 1, n_pts)
    acc = _acc_dtype(y.dtype)
    out_dtype = _float_dtype(y.dtype)
    is_float = jnp.issubdtype(y.dtype, jnp.inexact)
    need = tuple(s for s in stats if s != "count")
    order = 2 if {"var", "std"} & set(need) else 1
    ref = _reference(y) if need else jnp.zeros((c,), acc)
    zero = jnp.zeros((), acc)

    def finisher(counts: bool) -> Callable[[list[Array], Array, bool], dict[str, Array]]:
        def fin(sums: list[Array], i: Array, full: bool) -> dict[str, Array]:
            if full:
                rows = jnp.broadcast_to(back + 1 - lag, (i.shape[0], 1))
            else:
                rows = jnp.clip(i + 1 - lag - jnp.maximum(i - back, 0), 0)[:, None]
            if counts:
                nan, pinf, ninf = (jnp.round(a) for a in sums[-3:])
            else:
                nan = pinf = ninf = zero
            n = rows - nan.astype(idt) if skipna else rows
            n = jnp.broadcast_to(n, (i.shape[0], c))
            ok = n >= min_periods
            res = {}
            if need:
                mom = {"s1": sums[0], "ref": ref, "nan": nan, "pinf": pinf, "ninf": ninf}
                if order == 2:
                    mom["s2"] = sums[1]
                nf = n.astype(acc)
                for s in need:
                    val = _finish(s, mom, nf, ddof, out_dtype, skipna)
                    res[s] = jnp.where(ok, val, jnp.nan)
            if "count" in stats:
                res["count"] = jnp.where(rows >= min_periods, n.astype(out_dtype), jnp.nan)
            return res

        return fin

    def run(columns: Callable[[Array], list[Array]], counts: bool) -> dict[str, Array]:
        return _regular_rolling(y, back, lag, columns, finisher(counts), stats, out_dtype)

    moments = order if need else 0

    def finite_columns(v: Array) -> list[Array]:
        return _sum_columns(v.astype(acc), ref, moments, skipna, counts=False)

    def counted_columns(v: Array) -> list[Array]:
        return _sum_columns(v.astype(acc), ref, moments, skipna, counts=True)

    if not is_float:
        return run(finite_columns, False)
    if not need:
        # counts only: by formula unless some value is NaN (then the NaN of every window)
        if not skipna:
            return _regular_counts(n_pts, c, back, lag, min_periods, out_dtype)
        clean = ~jnp.isnan(jnp.sum(y))
        return lax.cond(
            clean,
            lambda: _regular_counts(n_pts, c, back, lag, min_periods, out_dtype),
            lambda: run(counted_columns, True),
        )
    finite = jnp.all(jnp.isfinite(jnp.sum(y.astype(acc), axis=0)))
    return lax.cond(finite, lambda: run(finite_columns, False), lambda: run(counted_columns, True))


def _regular_counts(
    n_pts: int, c: int, back: Array, lag: int, min_periods: int, out_dtype: Any
) -> dict[str, Array]:
    """Rows of every evenly spaced window (no NaN to leave out): ``{"count": (N, C)}``."""
    i = jnp.arange(n_pts, dtype=back.dtype)
    rows = jnp.clip(i + 1 - lag - jnp.maximum(i - back, 0), 0)[:, None]
    cnt = jnp.broadcast_to(rows.astype(out_dtype), (n_pts, c))
    return {"count": jnp.where(rows >= min_periods, cnt, jnp.nan)}


# ---------------------------------------------------------------------------- the engine
def _rolling_range_stats(
    y: Array,
    bounds: Callable[[], tuple],
    stats: tuple[str, ...],
    ddof: int,
    skipna: bool,
    min_periods: int,
    regular: tuple[Array, int] | None = None,
) -> dict[str, Array]:
    """Finished statistics of the window of every point (``rolling_statistic``'s results).

    ``_stats._range_stats`` + ``_kernels._finish`` on this module's roads, with the
    ``min_periods`` masks applied: sums come from values shifted by a reference (so
    ``1e8 + noise`` keeps its digits) and the blocked prefix sums. The all-finite branch
    finishes straight from ``sum(y - ref)`` (and ``sum((y - ref)**2)``); only when the totals
    come out non-finite does the other branch count the NaN/+inf/-inf points of every window
    (NumPy's, or with ``skipna`` pandas', conventions). Every branch returns the finished
    outputs only, so nothing of a road not taken (counts, zeros) is materialised.

    Args:
        y: ``(N, C)`` values.
        bounds: returns ``(start, stop)`` or ``(start, stop, back)``: ``(N,)`` first index of
            each window (clipped to ``[0, stop]`` here), exclusive end (None: ``i + 1``) and,
            on a regular grid, the constant ``back`` with ``start = max(i - back, 0)``. Called
            inside each ``lax.cond`` branch, so closed-form bounds are fused where they are
            used rather than materialised as branch operands.
        stats: names among count/sum/mean/var/std/min/max.
        ddof: delta degrees of freedom of var/std.
        skipna: leave NaN out (pandas' convention); ``"count"`` then counts the others.
        min_periods: fewest counted points that give a result (rows, NaN included, for
            ``"count"``, as pandas).
        regular: ``(back, lag)`` when the windows are ``[max(i - back, 0), i + 1 - lag)``
            (evenly spaced points): count/sum/mean/var/std then take the one-pass road of
            :func:`_regular_sum_stats`.

    Returns:
        dict of ``(N, C)`` float arrays by statistic name.
    """
    if regular is not None:
        rest = tuple(s for s in stats if s not in ("min", "max"))
        ext = tuple(s for s in stats if s in ("min", "max"))
        res = _regular_sum_stats(y, *regular, rest, ddof, skipna, min_periods) if rest else {}
        if ext:
            res.update(_rolling_range_stats(y, bounds, ext, ddof, skipna, min_periods))
        return res
    idt = index_dtype()
    n_pts, c = y.shape

    def windows() -> tuple[Array, Array | None, Array, Array]:
        start, stop, _ = _unpack(bounds())
        end = jnp.arange(1, n_pts + 1, dtype=idt) if stop is None else jnp.clip(stop, 0, n_pts)
        start = jnp.clip(start.astype(idt), 0, end)
        return start, None if stop is None else end.astype(idt), end, end - start

    acc = _acc_dtype(y.dtype)
    out_dtype = _float_dtype(y.dtype)
    is_float = jnp.issubdtype(y.dtype, jnp.inexact)
    need = tuple(s for s in stats if s in ("sum", "mean", "var", "std"))
    order = 2 if {"var", "std"} & set(need) else 1
    ref = _reference(y) if need else None
    v = y.astype(acc)
    zero = jnp.zeros((), acc)

    def finish(
        nan: Any,
        sums: list[Array] | None = None,
        pinf: Any = zero,
        ninf: Any = zero,
        has_nan: bool = True,
    ) -> dict[str, Array]:
        start, stop, end, rows = windows()
        n_rows = rows[:, None]
        n = n_rows - jnp.asarray(nan).astype(idt) if skipna else n_rows
        ok = n >= min_periods
        res = {}
        if need:
            assert sums is not None
            mom = {"s1": sums[0], "ref": ref, "nan": nan, "pinf": pinf, "ninf": ninf}
            if order == 2:
                mom["s2"] = sums[1]
            nf = jnp.broadcast_to(n, (n_pts, c)).astype(acc)
            for s in need:
                res[s] = jnp.where(ok, _finish(s, mom, nf, ddof, out_dtype, skipna), jnp.nan)
        if "count" in stats:
            cnt = jnp.broadcast_to(n, (n_pts, c)).astype(out_dtype)
            res["count"] = jnp.where(n_rows >= min_periods, cnt, jnp.nan)
        for s in ("min", "max"):
            if s in stats:
                src = y.astype(out_dtype)
                if skipna and has_nan:
                    src = jnp.where(jnp.isnan(src), jnp.inf if s == "min" else -jnp.inf, src)
                if stop is None:
                    counted = n if skipna and has_nan else None
                    back = _unpack(bounds())[2]
                    res[s] = _rolling_extreme(
                        src, lambda: windows()[0], s, counted, min_periods, back
                    )
                else:
                    val = _range_extreme(src, start, end, s)
                    res[s] = jnp.where(ok & (n > 0), val, jnp.nan)
                if is_float and not skipna:
                    # XLA's CPU max/min reductions (reduce_window, row extremes) drop NaN:
                    # a window holding one gives NaN, counted only when y holds any NaN
                    def with_nan(val: Array) -> Array:
                        nan_w = _window_sums(_prefix_sums(jnp.isnan(y).astype(acc)), start, stop)
                        return jnp.where(nan_w > 0.5, jnp.nan, val)

                    res[s] = lax.cond(jnp.any(jnp.isnan(y)), with_nan, lambda v: v, res[s])
        return res

    def fast() -> dict[str, Array]:
        start, stop, _, _ = windows()
        # finite totals: no NaN anywhere
        sums = _column_window_sums(_sum_columns(v, ref, order, skipna, False), start, stop)
        return finish(zero, sums, has_nan=False)

    def counted() -> dict[str, Array]:
        start, stop, _, _ = windows()
        sums = _column_window_sums(_sum_columns(v, ref, order, skipna, True), start, stop)
        nan, pinf, ninf = (jnp.round(a) for a in sums[order:])
        return finish(nan, sums[:order], pinf, ninf)

    def nan_counted() -> dict[str, Array]:
        start, stop, _, _ = windows()
        nan = jnp.isnan(y).astype(acc)
        return finish(jnp.round(_window_sums(_prefix_sums(nan), start, stop)))

    if need:
        if not is_float:
            return fast()
        finite = jnp.all(jnp.isfinite(jnp.sum(v, axis=0)))
        return lax.cond(finite, fast, counted)
    if skipna and is_float:
        # a sum is NaN when any value is (a fast reduction; inf - inf only costs the count)
        return lax.cond(jnp.isnan(jnp.sum(v)), nan_counted, lambda: finish(zero, has_nan=False))
    return finish(zero)


def _unpack(b: tuple) -> tuple[Array, Array | None, Array | None]:
    """``(start, stop, back)`` from a bounds tuple; ``back`` (regular windows) may be absent."""
    return (b[0], b[1], b[2]) if len(b) == 3 else (b[0], b[1], None)


# ---------------------------------------------------------------------------- per-point windows
@functools.partial(jax.jit, static_argnames=("closed",))
def _window_bounds(x: Array, w: Array, closed: str) -> tuple[Array, Array | None]:
    """``start`` and ``stop`` (None: ``i + 1``) of the window of every point, exactly.

    Args:
        x: ``(N,)`` sorted positions.
        w: scalar width, in ``x``'s (promoted) dtype.
        closed: ``"right"``, ``"left"``, ``"both"`` or ``"neither"`` (pandas' meaning).

    Returns:
        ``(start, stop)``: ``(N,)`` index arrays; ``stop`` is None where every window ends at
        its own point (``"right"``/``"both"``: pandas stops at ``i`` also when later points tie
        with it).
    """
    hi = x.astype(jnp.promote_types(x.dtype, w.dtype))
    lo_side = "left" if closed in ("left", "both") else "right"
    start = _sorted_search(x, hi - w, lo_side)
    stop = None if closed in ("right", "both") else _sorted_search(x, hi, "left")
    return start, stop


def _regular_step(x: Array) -> tuple[Array, Array]:
    """``(regular, dx)``: whether integer ``x`` is exactly ``x[0] + i * dx`` with ``dx > 0``."""
    n = x.shape[0]
    dx = x[1] - x[0]
    grid = x[0] + jnp.arange(n, dtype=x.dtype) * dx
    return (dx > 0) & jnp.all(x == grid), dx


def _regular_bounds(n: int, w: Array, dx: Array, closed: str) -> tuple[Array, Array | None, Array]:
    """:func:`_window_bounds` on an exactly regular integer grid, in closed form (no search).

    With ``x[j] = x0 + j * dx``: ``x[j] <= x[i] - w`` is ``j <= i - w / dx``, so the window
    of point ``i`` starts at ``i + 1 - ceil(w / dx)`` (``"right"``/``"neither"``) or at
    ``i - floor(w / dx)`` (``"left"``/``"both"``), and a left-open end is ``i`` (no ties).
    Also returns that constant ``back`` (``start = max(i - back, 0)``).
    """
    idt = index_dtype()
    i = jnp.arange(n, dtype=idt)
    if closed in ("left", "both"):
        back = (w // dx).astype(idt)
    else:
        back = (-((-w) // dx) - 1).astype(idt)
    start = jnp.clip(i - back, 0, n)
    stop = None if closed in ("right", "both") else i
    return start, stop, back


@functools.partial(jax.jit, static_argnames=("closed", "stats", "ddof", "skipna", "min_periods"))
def _rolling_per_point(
    x: Array,
    w: Array,
    y: Array,
    closed: str,
    stats: tuple[str, ...],
    ddof: int,
    skipna: bool,
    min_periods: int,
) -> dict[str, Array]:
    """count/sum/mean/var/std/min/max of the window ending at every point, finished.

    On an integer axis (a time axis: int64 nanoseconds) that is exactly evenly spaced (one
    fused check) the window bounds come in closed form; otherwise from :func:`_sorted_search`.
    Both roads give identical results; ``lax.cond`` runs one.

    Args:
        x: ``(N,)`` sorted positions.
        w: scalar width (may be traced), promoted with ``x``'s dtype.
        y: ``(N, C)`` values.
        closed: which window ends are included.
        stats: statistic names (no ``"median"``); ``"count"`` is always returned.
        ddof: delta degrees of freedom of var/std.
        skipna: leave NaN out (pandas' convention).
        min_periods: fewest counted points that give a result.

    Returns:
        dict of ``(N, C)`` float statistics by name.
    """
    n = x.shape[0]

    def run(bounds: Callable[[], tuple], regular: tuple | None = None) -> dict[str, Array]:
        return _rolling_range_stats(y, bounds, stats, ddof, skipna, min_periods, regular)

    def general() -> dict[str, Array]:
        found = _window_bounds(x, w, closed)
        return run(lambda: found)

    exact_int = jnp.issubdtype(x.dtype, jnp.integer) and jnp.issubdtype(w.dtype, jnp.integer)
    if n < 2 or not exact_int:
        return general()
    regular, dx = _regular_step(x)
    lag = 0 if closed in ("right", "both") else 1

    def evenly() -> dict[str, Array]:
        back = _regular_bounds(n, w, dx, closed)[2]
        return run(lambda: _regular_bounds(n, w, dx, closed), (back, lag))

    return lax.cond(regular, evenly, general)
