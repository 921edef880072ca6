"""The wavelet road: medians and quantiles of index ranges of bounded length, exactly.

The padded road sorts ``capacity`` slots for every range (``K * capacity * log(capacity)``
work). Here the data is read once into overlapping **rows** of ``M`` points (a power of two,
``M = 4 L`` with ``L >= capacity``, consecutive rows ``D = M - L`` points apart), so every
range of at most ``L`` points lies inside the row of its start. In each row:

- the values are ranked once, ``0 .. M - 1`` (ties by position, as a stable sort: the order
  of ``jnp.sort``, NaN last and ``-0.0`` equal to ``0.0``), which gives the row's sorted
  **order** (the position of each rank) too;
- the top levels of a **wavelet tree** of the ranks are built, one level per rank bit from
  the top, down to leaves of ``B`` ranks (``LEAF``). As the ranks are a permutation, every
  node is full: node ``P`` of level ``l`` holds the ranks ``[P S, (P + 1) S)``
  (``S = M >> l``), at the positions ``[P S, (P + 1) S)`` of the level's arrangement, in
  row order. Level ``l`` stores ``G_l[p]``, the number of elements with bit 0 before
  position ``p`` of its arrangement; the next arrangement partitions every node stably, 0s
  first (one scatter of unique indices).

The ``k``-th smallest value of the positions ``[lo, hi)`` of a row is then found by a
descent: in node ``P`` (start ``a``, holding ``a / 2`` zeros before it), ``z = G_l[hi] -
G_l[lo]`` elements of the range have bit 0; if ``k < z`` the range moves to the 0-child
(``[a + G_l[lo] - a / 2, a + G_l[hi] - a / 2)``), else ``k`` drops by ``z`` and it moves to
the 1-child. Two reads of one level per step. At a leaf (ranks ``[a, a + B)``), the
``B`` row positions ``order[a : a + B]`` are read at once; those inside ``[lo, hi)`` make a
bit mask whose ``k``-th set bit is the answer's rank, and ``order`` its position in the row.

Work: one sort of ``N M / D`` keys in rows, ``log2(M / B)`` scatters and cumulative counts
over them, and ``log2(M / B)`` pairs of reads plus one read of ``B`` contiguous entries per
order statistic; memory ``O(N log M)`` small integers. No serial loop over the data or the
ranges (the loop over the levels is a ``lax.scan``, the ranges are read in chunks by
``lax.map`` so a chunk's state stays in cache).

Results equal the padded road's (:meth:`jaxsubset.Subsets.median`/``quantile``): the same
order statistics, combined by the same formulas, read from ``y`` at the selected points, so
the gradient reaches exactly the one or two points a result is made of, as there.
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .._core import Array, index_dtype
from ..reduce import float_dtype, lerp, order_key, quantile_q, rank
from ._reference import counted, nan_counts


WORD = 32  # bits packed per word to count the zeros of a level
QUERY_CHUNK = 1 << 15  # order statistics selected together (their state stays in cache)
ROW_CHUNK = 1 << 16  # row points ranked and built together
LEAF = 32  # ranks per leaf: the descent stops there, a leaf is read whole


def geometry(num: int, capacity: int) -> tuple[int, int, int]:
    """``(M, D, R)``: row length (a power of two >= 32), row stride and number of rows.

    Every range of at most ``capacity`` points starting at ``s < num`` lies in row
    ``s // D``, which covers ``[D (s // D), D (s // D) + M)``. Data that fits in ``4 L``
    points is one row.
    """
    cap = 1 << max(capacity - 1, 0).bit_length()  # L: a power of two >= capacity
    whole = max(WORD, 1 << max(num - 1, 0).bit_length())
    if whole <= 4 * cap:
        return whole, whole, 1
    m = max(WORD, 4 * cap)
    d = m - cap
    return m, d, (num - 1) // d + 1


def count_below(ordered: Array, key: Array) -> Array:
    """Per row, how many of the sorted ``ordered`` ``(rows, M)`` are below each ``key``."""
    rows, m = key.shape
    flat = ordered.reshape(-1)
    base = (jnp.arange(rows, dtype=jnp.int32) * m)[:, None]
    bits = m.bit_length() - 1

    def step(i: Array, cnt: Array) -> Array:  # a branch-free binary search
        half = jnp.int32(m // 2) >> i
        probe = flat[base + cnt + (half - 1)]
        return jnp.where(probe < key, cnt + half, cnt)

    cnt = lax.fori_loop(0, bits, step, jnp.zeros(key.shape, jnp.int32))
    return cnt


def inverse(perm: Array) -> Array:
    """Per row, the inverse of the permutation ``perm`` ``(rows, M)`` (one scatter)."""
    rows, m = perm.shape
    base = lax.broadcasted_iota(jnp.int32, perm.shape, 0) * m
    at = lax.broadcasted_iota(jnp.int32, perm.shape, 1)
    flat = jnp.zeros((rows * m,), jnp.int32)
    flat = flat.at[(perm + base).reshape(-1)].set(
        at.reshape(-1), unique_indices=True, mode="promise_in_bounds"
    )
    return flat.reshape(rows, m)


def by_counts(key: Array) -> tuple[Array, Array]:
    """``(order, rank)`` from one sort of the keys and the count of smaller keys of each.

    Without ties that count is the rank; with ties a second sort of ``count << log2(M) |
    position`` (a packed single operand) puts equal keys in position order.
    """
    rows, m = key.shape
    bits = m.bit_length() - 1
    ordered = jnp.sort(key, axis=1)
    below = count_below(ordered, key)
    tied = jnp.any(ordered[:, 1:] == ordered[:, :-1])

    def distinct(below: Array) -> tuple[Array, Array]:
        return inverse(below), below

    def ties(below: Array) -> tuple[Array, Array]:
        pos = lax.broadcasted_iota(jnp.int32, key.shape, 1)
        if 2 * bits <= 32:
            packed = (below.astype(jnp.uint32) << bits) | pos.astype(jnp.uint32)
            order = (jnp.sort(packed, axis=1) & (m - 1)).astype(jnp.int32)
        elif key.dtype == jnp.uint64:  # x64
            packed64 = (below.astype(jnp.uint64) << bits) | pos.astype(jnp.uint64)
            order = (jnp.sort(packed64, axis=1) & (m - 1)).astype(jnp.int32)
        else:
            order = lax.sort((below, pos), num_keys=2)[1]
        return order, inverse(order)

    return lax.cond(tied, ties, distinct, below)


def row_order(key: Array) -> tuple[Array, Array]:
    """``(order, rank)`` ``(rows, M)`` int32: per row, the stable ascending order of ``key``.

    ``order[t]`` is the position of the ``t``-th smallest, ``rank`` its inverse; equal keys
    rank by position (a stable sort). Single-operand sorts of packed unsigned integers, far
    faster on the CPU than a sort carrying an index:

    - 32-bit keys with x64: one sort of ``key << 32 | position``;
    - 64-bit keys: one sort of ``key`` with its low ``log2(M)`` bits replaced by the
      position, then a check that the keys came out non-decreasing (they do unless two keys
      differ only in those bits, in the wrong positional order); if not, the counting road;
    - otherwise the counting road (:func:`by_counts`).
    """
    rows, m = key.shape
    x64 = bool(jax.config.read("jax_enable_x64"))
    if x64 and key.dtype == jnp.uint32:
        pos = lax.broadcasted_iota(jnp.uint64, key.shape, 1)
        packed = (key.astype(jnp.uint64) << 32) | pos
        order = (jnp.sort(packed, axis=1) & (m - 1)).astype(jnp.int32)
        return order, inverse(order)
    if key.dtype == jnp.uint64:
        pos = lax.broadcasted_iota(jnp.uint64, key.shape, 1)
        packed = (key & ~jnp.uint64(m - 1)) | pos
        order = (jnp.sort(packed, axis=1) & (m - 1)).astype(jnp.int32)
        got = jnp.take_along_axis(key, order, axis=1)
        exact = jnp.all(got[:, 1:] >= got[:, :-1])
        return lax.cond(exact, lambda k: (order, inverse(order)), by_counts, key)
    return by_counts(key)


def zeros_before(zero: Array) -> Array:
    """``(rows, M)`` int32: per row, the number of True entries of ``zero`` before each one.

    Packed into 32-bit words: a word's count is its population count, the words' counts a
    short cumulative sum, a position's the count of its word plus the bits below it.
    """
    rows, m = zero.shape
    shifts = jnp.arange(WORD, dtype=jnp.uint32)
    words = jnp.sum(
        zero.astype(jnp.uint32).reshape(rows, m // WORD, WORD) << shifts, axis=2, dtype=jnp.uint32
    )
    per = lax.population_count(words).astype(jnp.int32)
    before = jnp.cumsum(per, axis=1) - per
    low = (jnp.uint32(1) << shifts) - jnp.uint32(1)
    inside = lax.population_count(words[:, :, None] & low).astype(jnp.int32)
    return (before[:, :, None] + inside).reshape(rows, m)


def leaves(m: int) -> tuple[int, int]:
    """``(B, levels)``: the leaf size (ranks per leaf) and the tree levels above the leaves."""
    b = min(LEAF, m)
    return b, (m // b).bit_length() - 1


def build(rank: Array, levels: int) -> Array:
    """The top ``levels`` levels of the wavelet tree of ``rank`` ``(rows, M)``.

    Each row is a permutation of ``0 .. M-1``, so every node is full: node ``P`` of level
    ``l`` holds the ranks ``[P S, (P + 1) S)`` (``S = M >> l``) at the positions
    ``[P S, (P + 1) S)`` of the level's arrangement, in row order, and exactly ``S / 2`` of
    them have the level's bit 0. The next arrangement partitions every node stably, 0s first
    (one scatter of unique indices).

    Returns:
        ``(levels, rows * (M + 1))``: level ``l``'s ``G_l[p]``, the number of elements with bit
        0 before ``p`` in the row (``p`` in ``0 .. M``; ``G_l[P S] = P S / 2``), int16 when it
        fits, else int32.
    """
    rows, m = rank.shape
    bits = m.bit_length() - 1
    etype = jnp.int16 if m // 2 <= np.iinfo(np.int16).max else jnp.int32
    at = lax.broadcasted_iota(jnp.int32, rank.shape, 1)
    base = lax.broadcasted_iota(jnp.int32, rank.shape, 0) * m
    if not levels:
        return jnp.zeros((0, rows * (m + 1)), etype)

    def table(cur: Array, lev: Array) -> tuple[Array, Array, Array]:
        bit = (cur >> (bits - 1 - lev)) & 1
        g = zeros_before(bit == 0)
        full = jnp.concatenate([g, jnp.full((rows, 1), m // 2, jnp.int32)], axis=1)
        return bit, g, full.astype(etype).reshape(-1)

    def level(cur: Array, lev: Array) -> tuple[Array, Array]:
        bit, g, out = table(cur, lev)
        size = jnp.int32(m) >> lev
        a = at & ~(size - 1)  # the node's start
        z = g - (a >> 1)  # 0s before p in its node
        nxt = jnp.where(bit == 0, a + z, at + (size >> 1) - z) + base
        flat = jnp.zeros((rows * m,), jnp.int32)
        flat = flat.at[nxt.reshape(-1)].set(
            cur.reshape(-1), unique_indices=True, mode="promise_in_bounds"
        )
        return flat.reshape(rows, m), out

    # one compiled body for the levels but the last (a small program whatever the capacity),
    # whose next arrangement is never read
    cur, tables = lax.scan(level, rank, jnp.arange(levels - 1, dtype=jnp.int32))
    last = table(cur, jnp.int32(levels - 1))[2]
    return jnp.concatenate([tables, last[None]])


def row_tables(key: Array) -> tuple[Array, Array]:
    """``(order, tables)`` of the rows ``key`` ``(rows, M)``, a chunk of rows at a time.

    Returns:
        ``order`` ``(rows * M,)`` (:func:`row_order`, flat; int16 when ``M`` fits) and
        ``tables`` ``(levels, rows * (M + 1))`` (:func:`build`), row ``r``'s entries of a
        level at ``r * (M + 1)``.
    """
    rows, m = key.shape
    _, levels = leaves(m)
    ptype = jnp.int16 if m <= np.iinfo(np.int16).max + 1 else jnp.int32

    def one(k: Array) -> tuple[Array, Array]:
        order, rank = row_order(k)
        return order.astype(ptype), build(rank, levels)

    per = max(1, ROW_CHUNK // m)
    if rows <= per:
        order, tables = one(key)
        return order.reshape(-1), tables
    nchunk = -(-rows // per)
    pad = nchunk * per - rows  # whole rows of equal keys: ranked, never read
    keys = jnp.concatenate([key, jnp.zeros((pad, m), key.dtype)]).reshape(nchunk, per, m)
    order, tables = lax.map(one, keys)
    tables = jnp.moveaxis(tables, 1, 0).reshape(levels, nchunk * per * (m + 1))
    return order.reshape(-1)[: rows * m], tables[:, : rows * (m + 1)]


def kth_bit(words: list[Array], k: Array) -> Array:
    """The index of the ``k``-th (0-based) set bit of the little-endian uint32 ``words``.

    Where fewer than ``k + 1`` bits are set the index is unspecified (but in range).
    """
    pos = jnp.zeros(k.shape, jnp.int32)
    word = words[0]
    for i, w in enumerate(words[1:], 1):  # the word holding it
        c = lax.population_count(word).astype(jnp.int32)
        on = k >= c
        k = jnp.where(on, k - c, k)
        word = jnp.where(on, w, word)
        pos = jnp.where(on, 32 * i, pos)
    for width in (16, 8, 4, 2, 1):  # then halves of the word, by their population counts
        c = lax.population_count(word & jnp.uint32((1 << width) - 1)).astype(jnp.int32)
        on = k >= c
        k = jnp.where(on, k - c, k)
        word = jnp.where(on, word >> width, word)
        pos = pos + jnp.where(on, width, 0)
    return pos


def select(
    tables: Array, order: Array, m: int, row: Array, lo: Array, hi: Array, k: Array
) -> Array:
    """The row position of the ``k``-th smallest (0-based) of the row positions ``[lo, hi)``.

    Args:
        tables: :func:`build`'s levels.
        order: the rows' sorted orders, flat (:func:`row_tables`).
        m: the row length.
        row, lo, hi, k: ``(Q,)`` int32; ``0 <= lo <= hi <= m``. Where ``k >= hi - lo`` the
            position is unspecified (but in ``[0, m)``).

    Returns:
        ``(Q,)`` int32 positions in the rows.
    """
    q = row.shape[0]
    b, levels = leaves(m)
    chunk = min(QUERY_CHUNK, max(q, 1))
    nchunk = -(-q // chunk)
    pad = nchunk * chunk - q
    sizes = jnp.asarray([m >> lev for lev in range(levels)], jnp.int32)

    def chunked(a: Array) -> Array:
        return jnp.pad(a, (0, pad)).reshape(nchunk, chunk)

    def one(args: tuple[Array, Array, Array, Array]) -> Array:
        r, wlo, whi, k = args
        k = jnp.clip(k, 0, m - 1)  # a too long range's rank stays in its 16-bit field
        base = r * (m + 1)

        def step(carry, xs):  # down one level of the tree: the node holding the k-th
            a, lo, hi, k = carry
            e, size = xs
            half = size >> 1
            ah = a >> 1  # the 0s of the nodes before this one
            zl = e[base + lo].astype(jnp.int32) - ah
            zh = e[base + hi].astype(jnp.int32) - ah
            zeros = zh - zl
            right = k >= zeros
            k = jnp.where(right, k - zeros, k)
            lo = jnp.where(right, lo + half - zl, a + zl)
            hi = jnp.where(right, hi + half - zh, a + zh)
            a = jnp.where(right, a + half, a)
            return (a, lo, hi, k), None

        def packed(carry, xs):  # the same in two words of 16-bit fields, (k, a) and (lo, hi):
            ka, lohi = carry  # two arrays to write per level instead of four
            e, size = xs
            ah = (ka >> 17).astype(jnp.int32)  # a / 2
            el = e[base + (lohi & 0xFFFF).astype(jnp.int32)].astype(jnp.int32)
            eh = e[base + (lohi >> 16).astype(jnp.int32)].astype(jnp.int32)
            zeros = eh - el
            right = (ka & 0xFFFF).astype(jnp.int32) >= zeros
            zl, zh = (el - ah).astype(jnp.uint32), (eh - ah).astype(jnp.uint32)
            h = (size >> 1).astype(jnp.uint32)
            ka = jnp.where(right, ka - zeros.astype(jnp.uint32) + (h << 16), ka)
            left = (ka >> 16) * jnp.uint32(0x10001) + zl + (zh << 16)
            lohi = jnp.where(right, lohi + (h | (h << 16)) - zl - (zh << 16), left)
            return (ka, lohi), None

        a = jnp.zeros_like(k)
        if levels and m < 1 << 16:  # every field (at most M) fits in 16 bits
            ka = k.astype(jnp.uint32)
            lohi = wlo.astype(jnp.uint32) | (whi.astype(jnp.uint32) << 16)
            (ka, _), _ = lax.scan(packed, (ka, lohi), (tables, sizes))
            a, k = (ka >> 16).astype(jnp.int32), (ka & 0xFFFF).astype(jnp.int32)
        elif levels:
            (a, _, _, k), _ = lax.scan(step, (a, wlo, whi, k), (tables, sizes))
        # the leaf: ranks [a, a + B), their row positions in the sorted order; the k-th of
        # those inside [wlo, whi) is the answer
        first = r * m + a
        leaf = jax.vmap(lambda f: lax.dynamic_slice_in_dim(order, f, b))(first)
        leaf = leaf.astype(jnp.int32)
        inside = ((leaf >= wlo[:, None]) & (leaf < whi[:, None])).astype(jnp.uint32)
        width = min(b, WORD)
        inside = inside.reshape(-1, b // width, width) << jnp.arange(width, dtype=jnp.uint32)
        words = jnp.sum(inside, axis=2, dtype=jnp.uint32)
        at = jnp.minimum(kth_bit([words[:, i] for i in range(b // width)], k), b - 1)
        return order[first + at].astype(jnp.int32)

    out = lax.map(one, (chunked(row), chunked(lo), chunked(hi), chunked(k)))
    return out.reshape(-1)[:q]


def wavelet_ranges(
    y: Array,
    start: Array,
    count: Array,
    stats: tuple[str, ...],
    *,
    omit: bool,
    capacity: int,
) -> dict[str, Array]:
    """Medians and quantiles of ``y`` over ranges of at most ``capacity`` points (and counts).

    Args:
        y: ``(N, C)`` values.
        start: ``(K,)`` first index of each range, clipped to ``[0, N]``.
        count: ``(K,)`` points per range, with ``start + count <= N``.
        stats: names among ``"count"``, ``"median"`` and ``"quantile(<q>)"``.
        omit: leave NaN readings out (per channel).
        capacity: static bound on the ranges' counts; a longer range gives NaN (as the padded
            road with this capacity).

    Returns:
        dict of ``(K, C)`` float arrays by statistic name, equal to the padded road's.
    """
    out: dict[str, Array] = {}
    if "count" in stats:
        out["count"] = counted(y, start, count, omit)
        stats = tuple(s for s in stats if s != "count")
    num, ch = y.shape
    k_ranges = start.shape[0]
    fdt = float_dtype(y.dtype)
    nan = jnp.asarray(jnp.nan, fdt)
    if not stats:
        return out
    if num == 0 or k_ranges == 0:
        return {**out, **{s: jnp.full((k_ranges, ch), nan) for s in stats}}
    idt = index_dtype()
    yf = y.astype(fdt)
    m, d, rows = geometry(num, capacity)
    if ch * rows * (m + 1) >= 2**31:  # the rows are indexed in int32
        raise ValueError(
            f"the wavelet road indexes its rows in int32: {ch} channel(s) x {rows * m} row "
            "points is too many; reduce fewer channels at a time or pass method='reference'"
        )
    # the rows of every channel: (C * R, M) values, positions past the data repeat the last
    # point (no range reaches them)
    pos = jnp.arange(rows, dtype=idt)[:, None] * d + jnp.arange(m, dtype=idt)
    pos = jnp.minimum(pos, num - 1)
    vals = lax.stop_gradient(yf).T[:, pos].reshape(ch * rows, m)
    vals = jnp.where(vals == 0, jnp.zeros((), fdt), vals)  # -0.0 ranks as 0.0 (jnp.sort)
    perm, tables = row_tables(order_key(vals))

    start = start.astype(idt)
    count = count.astype(idt)
    j = jnp.minimum(start // d, rows - 1)
    lo = jnp.clip(start - j * d, 0, m).astype(jnp.int32)
    hi = jnp.clip(lo + count, 0, m).astype(jnp.int32)
    row = jnp.arange(ch, dtype=jnp.int32)[None, :] * rows + j.astype(jnp.int32)[:, None]
    n_nan = nan_counts(yf, start, count)
    total = jnp.broadcast_to(count[:, None], (k_ranges, ch)).astype(idt)
    n = total - n_nan if omit else total
    poisoned = (n_nan > 0) if not omit else jnp.zeros((k_ranges, ch), bool)
    bad = poisoned | (n <= 0) | (count > capacity)[:, None]

    # the two ranks each statistic reads, and how it combines their values
    wanted: list[tuple[Array, Array]] = []
    for s in stats:
        if s == "median":
            wanted.append((jnp.maximum(n - 1, 0) // 2, n // 2))
        else:
            h = rank(n, quantile_q(s), fdt)
            lo_i = jnp.floor(h).astype(n.dtype)
            wanted.append((lo_i, jnp.minimum(lo_i + 1, jnp.maximum(n - 1, 0))))
    # (K, C, 2 S): the order statistics of a range side by side (they share their paths)
    ks = jnp.stack([r for pair in wanted for r in pair], axis=-1)
    shape = ks.shape
    rows_q = jnp.broadcast_to(row[:, :, None], shape).reshape(-1)
    lo_q = jnp.broadcast_to(lo[:, None, None], shape).reshape(-1)
    hi_q = jnp.broadcast_to(hi[:, None, None], shape).reshape(-1)
    got = select(tables, perm, m, rows_q, lo_q, hi_q, ks.reshape(-1).astype(jnp.int32))
    # the point holding each selected value, read from y (the gradient's path)
    src = got.astype(idt) + jnp.broadcast_to(j[:, None, None] * d, shape).reshape(-1)
    src = jnp.minimum(src, num - 1)
    chan = jnp.broadcast_to(jnp.arange(ch, dtype=idt)[:, None], shape).reshape(-1)
    vals_q = yf[src, chan].reshape(shape)
    for i, s in enumerate(stats):
        a, b = vals_q[..., 2 * i], vals_q[..., 2 * i + 1]
        if s == "median":
            v = (a + b) / 2
        else:
            h = rank(n, quantile_q(s), fdt)
            t = h - jnp.floor(h)
            v = lerp(a, b, t)  # NumPy's _lerp, as the padded road
        out[s] = jnp.where(bad, nan, v)
    return out
