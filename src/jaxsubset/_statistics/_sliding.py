"""The sliding road: trailing windows of a FIXED number of points ``w``, in O(N), exact.

A trailing window ``[i - w + 1, i]`` is folded from partials that each hold only points of
the window (van Herk / Gil-Werman, generalised to windows longer than a block), so **no
value outside a window can change its result**; nothing is ever subtracted.

Structure: the points are cut into aligned sub-blocks of ``b`` points (a property of the
fold). In each sub-block the prefix and suffix folds of every point are computed. With
``w > b`` the window of row ``i`` is

    suffix(i - w + 1)  (+)  the whole sub-blocks strictly between  (+)  prefix(i)

where the suffix is a *static* flat shift by ``w - 1`` and the number of whole sub-blocks
between depends only on ``i mod b`` (``q - 2``, ``q - 1`` or ``q`` for ``w = q b + r``): a
fixed-count trailing window over the sub-block totals, the same problem ``b`` times smaller,
solved by recursion (a window of ``c + 1`` totals is one more total folded into the window of
``c``). Windows of at most ``b`` points fold ``w`` static shifts directly. Rows ``i < w - 1``
(windows truncated at the start, as pandas with ``min_periods``) fold identities in place of
the missing points. Only static reshapes, shifts, cumulative folds and, on the CPU, a small
triangular matmul: no gather, no scatter, no serial loop over the data.

The folds:

- sums (sum, mean, counts): within a sub-block of 16 points a ``precision=HIGHEST``
  triangular matmul on the CPU (exact products by 0/1, the same additions as a sum), a
  cumulative sum elsewhere;
- min/max: ``lax.cummax``/``cummin`` forward and reversed in sub-blocks of 4 (van Herk);
- moments (var/std/sem): the points of a sub-block's *prefix* are summed as ``y - c`` and
  ``(y - c)**2`` with ``c`` the first finite point of the sub-block, those of its *suffix*
  with ``c`` its last finite point, so ``c`` is always a point of the piece and so of the
  window: offsets like ``1e8 + noise`` cancel exactly (Sterbenz) and the error of
  ``M2 = S2 - S1**2 / n`` is bounded by the piece's own spread around one of its own points
  (never by a value outside the window). The pieces are then ``(n, c, m, M2)`` partials
  combined by Chan's formula (:func:`._moments.chan`), as the block tree does; the levels over
  sub-block totals sum them the same way around the shift of their first/last total. Where
  every present value is finite (and ``w > 16``), :func:`finite_m2` computes the same pieces
  in one fused pass and combines a window's three pieces at once around a point of one;
- cov/corr: the co-moment partials of every channel pair (:mod:`._pairs`), combined by
  Chan's formula in sub-blocks of 4 (no sums around a shift: each piece a fold of its own
  points), their NaN/inf counts folded with them;
- data holding NaN or +-inf add one fold of packed 0/1 flags counting them per window (the
  sums fold finite values only: a matmul's ``0 * inf`` would be NaN in other windows); a
  ``lax.cond`` on one reduction skips it when every value is finite.

Long series run chunk by chunk (:func:`chunked`): each chunk is read with the rows its
windows reach back to, starting on the whole series' sub-block boundaries at every level, so
its windows get the same results as in one piece, while every temporary is chunk-sized (XLA's
CPU client allocates a program's temporaries afresh on every call, and an N-long one costs
its page faults again each time); the NaN/inf decision is taken per chunk.
"""

import functools
from typing import Any

import jax
import jax.numpy as jnp
from jax import lax

from .._core import Array, index_dtype
from ..reduce import (
    PAIR_COUNT,
    PAIR_STATISTICS,
    extreme_statistic,
    float_dtype,
    mean_statistic,
    pair_leaves,
    pair_statistics,
    result_shape,
    spread_statistics,
)
from ._sliding_folds import (
    IntSum,
    ShiftedMoments,
    SlidingExtreme,
    SlidingFold,
    SlidingPairs,
    SlidingSum,
    shift,
    tmap,
)


SLIDING_STATISTICS = ("count", "sum", "mean", "var", "std", "sem", "min", "max", "cov", "corr")


def counts_between(w: int, b: int) -> list[int]:
    """Whole sub-blocks strictly between the sub-blocks of ``i - w + 1`` and ``i``, by ``i % b``."""
    q, r = divmod(w, b)
    out = []
    for o in range(b):
        v = o - r + 1
        out.append(q - 2 if v == b else (q - 1 if v >= 0 else q))
    return out


def sliding_fold(fold: SlidingFold, leaves, w: int):
    """The fold of every trailing window of ``w`` points (truncated at the start).

    Args:
        fold: the level's fold.
        leaves: pytree of ``(N, C)`` per-point partials (identities where not counted).
        w: static window length >= 1.

    Returns:
        A pytree of ``(N, C)`` partials: row ``i`` folds ``leaves[max(0, i - w + 1) .. i]``.
    """
    n = jax.tree_util.tree_leaves(leaves)[0].shape[0]
    b = fold.block
    if w <= b or n <= b:
        inner = fold.next()  # per-point leaves are partials of the inner fold
        acc = leaves
        for d in range(1, min(w, n)):
            acc = inner.combine(shift(leaves, d, inner), acc)
        return acc
    nb = -(-n // b)
    size = nb * b

    def pad(a, e):
        return jnp.concatenate([a, jnp.broadcast_to(e[:1], (size - n,) + a.shape[1:])])

    if size > n:
        leaves = tmap(pad, leaves, fold.next().identity_like(leaves))
    r = tmap(lambda a: a.reshape((nb, b) + a.shape[1:]), leaves)
    pre, suf = fold.presuf(r)
    inner = fold.next()
    totals = tmap(lambda a: a[:, 0], suf)  # the suffix at a sub-block's start: its total
    sel = middles(inner, totals, w, b)
    flat = tmap(lambda a: a.reshape((size,) + a.shape[2:]), suf)
    head = shift(flat, w - 1, inner)  # the suffix from i - w + 1 to its sub-block's end
    head = tmap(lambda a: a.reshape((nb, b) + a.shape[1:]), head)
    out = inner.combine(inner.combine(head, sel), pre)
    return tmap(lambda a: a.reshape((size,) + a.shape[2:])[:n], out)


def middles(inner: SlidingFold, totals, w: int, b: int):
    """The whole sub-blocks strictly inside each window, ``(nb, b, ...)`` partials.

    Entry ``[J, o]`` (row ``i = J b + o``) folds the totals of the sub-blocks between the
    sub-block of ``i - w + 1`` and that of ``i``: ``counts_between(w, b)[o]`` of them.
    """
    counts = counts_between(w, b)
    lo = min(counts)
    # mids[c][J]: the fold of totals[J - c .. J - 1]
    if lo <= 0:
        mid = inner.identity_like(totals)
    else:
        mid = shift(sliding_fold(inner, totals, lo), 1, inner)
    mids = {max(lo, 0): mid}
    for c in range(max(lo, 0), max(counts)):
        mids[c + 1] = inner.combine(shift(totals, c + 1, inner), mids[c])
    # the middle of column o (row i = J b + o) is mids[counts[o]][J]: a static column choice
    top = max(counts)
    sel = tmap(lambda a: a[:, None], mids[top])
    for c, m in mids.items():
        if c != top and c in counts:
            mask = jnp.array([k == c for k in counts])[None, :, None]
            sel = tmap(lambda u, v, mask=mask: jnp.where(mask, u[:, None], v), m, sel)
    return sel


def finite_m2(v: Array, last: Any, w: int) -> Array:
    """``M2`` of every trailing window of ``w > 16`` points of ``v`` ``(N, C)``, finite values.

    Rows after ``last`` are absent (``None``: every row is present). The fold of
    :class:`ShiftedMoments` with what finite data make static: the points of each piece
    come from the row positions (no product of counts), the shifts are each sub-block's
    first and last present points (no search), the deviations and their squares go through
    one product per direction, and a window's three pieces (the suffix its first sub-block
    leaves it, the whole sub-blocks between, its last sub-block's prefix) are combined in
    one pass, around a shift of a piece holding points of the window: ``M2 = sum(M2_k) +
    sum(n_k (d_k - d)**2)``, with ``d_k`` a piece's mean offset from that shift and ``d``
    the window's. Each piece folds only its own points; nothing is subtracted from a sum.
    """
    fold = ShiftedMoments()
    b = fold.block
    num, ch = v.shape
    fdt, idt = v.dtype, index_dtype()
    nb = -(-num // b)
    size = nb * b
    if size > num:  # absent rows complete the last sub-block
        v = jnp.concatenate([v, jnp.zeros((size - num, ch), fdt)])
        last = num - 1 if last is None else last
    r = v.reshape(nb, b, ch)
    o = jnp.arange(b, dtype=idt)[None, :, None]
    c_pre = r[:, :1]  # the first point of a sub-block: in every prefix piece holding one
    if last is None:
        present: Any = True
        n_pre, n_suf = o + 1, b - o
        c_suf = r[:, b - 1 :]
    else:
        start = (jnp.arange(nb, dtype=idt) * b)[:, None, None]
        present = start + o <= last
        n_pre = jnp.clip(last - start + 1, 0, o + 1)  # present points of [start, start + o]
        n_suf = jnp.clip(last - start - o + 1, 0, b - o)  # of [start + o, start + b - 1]
        # the last present point of a sub-block (in every suffix piece holding one)
        at = lax.dynamic_index_in_dim(v, jnp.clip(last, 0, size - 1), keepdims=False)
        c_suf = jnp.where(start + b - 1 <= last, r[:, b - 1 :], at)
    n_pre = jnp.broadcast_to(n_pre, r.shape)
    n_suf = jnp.broadcast_to(n_suf, r.shape)
    big = jnp.finfo(fdt).max
    s = SlidingSum()

    def sums(c, reverse):
        # a deviation or square beyond the float range is clamped to it (a product's 0 * inf
        # would reach pieces without that point); the pieces holding it get M2 = inf
        d = jnp.clip(jnp.where(present, r - c, 0), -big, big)
        both = s.scan(jnp.stack([d, jnp.minimum(d * d, big)]).reshape(2 * nb, b, ch), reverse)
        return both[:nb], both[nb:]

    s1p, s2p = sums(c_pre, False)
    s1s, s2s = sums(c_suf, True)

    def spread(cnt, s1, s2):
        mean = s1 / jnp.where(cnt > 0, cnt, 1).astype(fdt)
        return mean, jnp.where(s2 >= big, jnp.inf, jnp.maximum(s2 - s1 * mean, 0))

    # the sub-block totals (their suffix at offset 0) as (n, c, m, M2) partials
    m_t, q_t = spread(n_suf[:, 0], s1s[:, 0], s2s[:, 0])
    totals = (n_suf[:, 0], c_suf[:, 0] + jnp.zeros_like(m_t), m_t, q_t)
    n_m, c_m, m_m, q_m = middles(fold, totals, w, b)
    # the suffix from row i - w + 1 to its sub-block's end (static shift; empty at the top)
    c_suf = jnp.broadcast_to(c_suf, r.shape)

    def head(a):
        flat = a.reshape((size, ch))
        return shift(flat, w - 1, s).reshape(r.shape)

    n_h, c_h, s1h, s2h = head(n_suf), head(c_suf), head(s1s), head(s2s)
    m_h, q_h = spread(n_h, s1h, s2h)
    m_p, q_p = spread(n_pre, s1p, s2p)
    # the shift: a point of a non-empty piece (the prefix holds row i when it is present)
    ref = jnp.where(n_pre > 0, c_pre, jnp.where(n_m > 0, c_m, c_h))
    pieces = ((n_h, c_h, m_h), (n_m, c_m, m_m), (n_pre, c_pre, m_p))
    nf = [k.astype(fdt) for k, _, _ in pieces]
    d = [jnp.where(k > 0, (c - ref) + m, 0) for k, c, m in pieces]
    n = nf[0] + nf[1] + nf[2]
    mean = (nf[0] * d[0] + nf[1] * d[1] + nf[2] * d[2]) / jnp.where(n > 0, n, 1)
    m2 = q_h + q_m + q_p
    for k, dk in zip(nf, d, strict=True):
        m2 = m2 + k * (dk - mean) ** 2
    return m2.reshape(size, ch)[:num]


def count_fold(flags: Array, w: int) -> Array:
    """Trailing-window counts of boolean ``flags`` ``(N, C)``, exactly, in the index dtype."""
    idt = index_dtype()
    fdt = jnp.result_type(float)
    if w < 2 ** (jnp.finfo(fdt).nmant + 1):  # sums of 0/1 below 2**(mantissa + 1): exact
        return sliding_fold(SlidingSum(), flags.astype(fdt), w).round().astype(idt)
    return sliding_fold(IntSum(), flags.astype(idt), w)


def count_flags(flags: list[Array], w: int) -> list[Array]:
    """Trailing-window counts of several boolean ``(N, C)`` flags, exactly.

    Packed into one fold as digits in base ``w + 1`` (no window counts more than ``w``) when
    the packed sums are exact integers of the float dtype, else one fold each.
    """
    fdt = jnp.result_type(float)
    base = w + 1
    if len(flags) == 1 or base ** len(flags) > 2 ** (jnp.finfo(fdt).nmant + 1):
        return [count_fold(f, w) for f in flags]
    packed = sum(f.astype(fdt) * float(base**k) for k, f in enumerate(flags))
    total = sliding_fold(SlidingSum(), packed, w).round()
    out = []
    for _ in flags:  # the digits, exact: every operand an integer below 2**(mantissa + 1)
        rest = jnp.floor(total / base)
        out.append((total - rest * base).astype(index_dtype()))
        total = rest
    return out


# rows of one chunk of a long series (a power of two: a multiple of every fold's alignment
# up to it); series shorter than CHUNK_MIN chunks run as one piece
CHUNK = 1 << 16
CHUNK_MIN = 2


def alignment(fold: SlidingFold, w: int) -> int:
    """The row alignment :func:`sliding_fold` of ``w`` gives its sub-blocks at every level.

    A piece of the series starting at a multiple of it (and long enough) is cut into the
    same sub-blocks, at every level of the recursion, as the whole series: its windows are
    folded by the same operations on the same values (the same bits).
    """
    b = fold.block
    if w <= b:
        return 1
    lo = min(counts_between(w, b))
    return b * (alignment(fold.next(), lo) if lo > 0 else 1)


def folds_of(stats: tuple[str, ...], w: int, nonfinite: bool) -> list[SlidingFold]:
    """The folds :func:`statistics` runs for ``stats``."""
    folds: list[SlidingFold] = []
    if nonfinite or {"sum", "mean"} & set(stats):
        folds.append(SlidingSum())
    if nonfinite and w >= 2 ** (jnp.finfo(jnp.result_type(float)).nmant + 1):
        folds.append(IntSum())
    if {"var", "std", "sem"} & set(stats):
        folds.append(ShiftedMoments())
    folds += [SlidingExtreme(s) for s in ("min", "max") if s in stats]
    return folds


def chunked(
    piece, yf: Array, w: int, align: int, dtypes: dict[str, Any]
) -> dict[str, Array] | None:
    """``piece`` over a long series chunk by chunk, or None where one piece serves.

    ``piece(v, first)`` gives the statistics of the windows of rows ``first ..`` of ``v``
    (rows ``first .. first + len(v) - 1`` of ``yf``), its windows truncated at ``v``'s start:
    ``(len(v), C)`` arrays with the names and dtypes of ``dtypes``. Chunk ``k`` reads ``L``
    rows from ``s_k = min(k CHUNK, N - L)``, ``L`` between ``H + CHUNK`` and ``H + CHUNK +
    align`` making ``N - L`` a multiple of ``align`` and ``H >= w - 1`` a multiple of
    ``align`` (every chunk starts on the whole series' sub-block
    boundaries at every level, so its windows get the same bits as in one piece), and
    writes all ``L``.
    The chunks run last to first, so a row ends with the value of the first chunk holding
    it, which holds its whole window (the first ``H`` rows of chunk ``k`` lie in chunk
    ``k - 1`` after them). No temporary is N long (each chunk's stay in cache): only the
    outputs are written (a fresh N-long temporary costs its page faults again every call).
    """
    num = yf.shape[0]
    c = max(CHUNK, align)
    hist = -(-(w - 1) // align) * align
    size = hist + c + (num - hist - c) % align  # rows a chunk reads
    if num < CHUNK_MIN * size or 2 * hist > c:
        return None
    s_last = num - size  # a multiple of align
    nc = -(-s_last // c) + 1  # chunks: the last one starts at s_last

    def body(i, acc):
        first = jnp.minimum((nc - 1 - i) * c, s_last)
        res = piece(lax.dynamic_slice_in_dim(yf, first, size, axis=0), first)
        if acc is None:
            return res
        return {k: lax.dynamic_update_slice_in_dim(acc[k], res[k], first, axis=0) for k in acc}

    # the results, given by the caller (``dtypes``: name -> dtype, each ``(N, C)`` like
    # ``yf``): tracing ``piece`` once more only to learn them would double the tracing time
    out = {k: jnp.zeros(yf.shape, dt) for k, dt in dtypes.items()}
    return lax.fori_loop(0, nc, body, out)


@functools.partial(
    jax.jit, static_argnames=("window", "stats", "ddof", "omit", "min_periods", "finite")
)
def sliding_statistics(
    y: Array,
    length: Array | None,
    *,
    window: int,
    stats: tuple[str, ...],
    ddof: int,
    omit: bool,
    min_periods: int | None = None,
    finite: bool = False,
) -> dict[str, Array]:
    """count/sum/mean/var/std/sem/min/max/cov/corr over every trailing window of ``window`` points.

    Args:
        y: ``(N, C)`` values; rows from ``length`` on are absent (bucket padding, or the rows
            a centred window reads past the end): they never enter a statistic.
        length: scalar int (may be traced), the present rows ``[0, length)``; ``None``: all
            ``N`` rows (no masks in the program).
        window: static int >= 1; row ``j``'s window is ``[max(0, j - window + 1), j]``.
        stats: names among :data:`SLIDING_STATISTICS`.
        ddof: delta degrees of freedom of var/std/sem.
        omit: leave NaN readings out (per channel).
        min_periods: ``None``: the raw statistics and ``"count"``. An int: only ``stats``,
            finished by :func:`finish` (NaN where a window counts fewer points), in the
            program that computes them (no pass of its own over N-long results).
        finite: the caller has checked that every present value is finite (NaN and inf
            nowhere): the program holds only the branch the run-time check would take for
            such data (the same operations, so the same results), a smaller program.

    Returns:
        dict of ``(N, C)`` arrays by statistic name (the registry's conventions), and
        ``"count"`` (the counted points of each window) always; ``"cov"``/``"corr"``
        ``(N, C, C)`` with their point counts (``PAIR_COUNT``).
    """
    idt = index_dtype()
    fdt = float_dtype(y.dtype)
    num, ch = y.shape
    w = window
    out: dict[str, Array] = {}
    if num == 0:
        out = {s: jnp.zeros(result_shape(s, (0,), (ch,)), fdt) for s in stats}
        out["count"] = jnp.zeros((0, ch), idt)
        if set(PAIR_STATISTICS) & set(stats):
            out[PAIR_COUNT] = jnp.zeros((0, ch, ch), idt)
        return finished(out, stats, min_periods, num, length, w, fdt)
    yf = y.astype(fdt)
    is_float = jnp.issubdtype(y.dtype, jnp.inexact)
    last: int | Array = num - 1 if length is None else jnp.asarray(length, idt) - 1
    pair = tuple(s for s in stats if s in PAIR_STATISTICS)
    if pair:  # every channel pair's co-moments, from partials of each window's own points
        # the pair partials count their own NaN/inf points: one program, outside the cond
        pos = jnp.arange(num, dtype=idt)
        present = True if length is None else (pos <= last)[:, None]
        folded = sliding_fold(SlidingPairs(), pair_leaves(yf, present, omit), w)
        out.update(pair_statistics(pair, folded, ddof, ch))
        rows = jnp.minimum(pos, last) - jnp.maximum(pos - (w - 1), 0) + 1
        out["count"] = jnp.broadcast_to(jnp.maximum(rows, 0)[:, None], (num, ch))
        out = finished(out, pair, min_periods, num, length, w, fdt)
        stats = tuple(s for s in stats if s not in PAIR_STATISTICS)
        if not stats and min_periods is not None:
            return out
    keep = None if min_periods is None else (stats, min_periods)

    def piece(v: Array, first: Any) -> dict[str, Array]:
        # the windows of rows first .. first + len(v) - 1, truncated at v's start

        def run(nonfinite: bool):
            def go(v):  # positions from iotas inside the branch (no N-long operands)
                pos = first + jnp.arange(v.shape[0], dtype=idt)
                present: Any = True if length is None else (pos <= last)[:, None]
                rows = jnp.minimum(pos, last) - jnp.maximum(pos - (w - 1), 0) + 1
                rows = jnp.broadcast_to(jnp.maximum(rows, 0)[:, None], v.shape)
                return statistics(
                    v, present, rows, w, stats, ddof, omit, nonfinite=nonfinite,
                    min_periods=keep, last=None if length is None else last - first,
                )  # fmt: skip

            return go

        if not is_float or finite:
            return run(False)(v)
        # the NaN/inf counts cost folds of their own: a program without them runs when every
        # present value is finite (one reduction decides; both programs give the same results)
        ok = jnp.isfinite(v)
        if length is not None:
            ok = ok | (first + jnp.arange(v.shape[0], dtype=idt) > last)[:, None]
        return lax.cond(jnp.all(ok), run(False), run(True), v)

    folds = folds_of(stats, w, is_float)
    align = max([alignment(f, w) for f in folds] + [1])
    # what ``statistics`` returns: ``stats`` (and the raw counts unless finished there)
    dtypes = {s: fdt for s in stats}
    if keep is None:
        dtypes["count"] = idt
    res = chunked(piece, yf, w, align, dtypes)
    out.update(piece(yf, 0) if res is None else res)
    return out


def finished(out, stats, min_periods, num, length, w, fdt):
    """``out`` finished by :func:`finish` for ``stats`` when ``min_periods`` is an int."""
    if min_periods is None:
        return out
    idt = index_dtype()
    pos = jnp.arange(num, dtype=idt)
    last = num - 1 if length is None else jnp.asarray(length, idt) - 1
    rows = jnp.maximum(jnp.minimum(pos, last) - jnp.maximum(pos - (w - 1), 0) + 1, 0)
    return finish(out, rows, stats, min_periods, fdt)


def finish(
    out: dict[str, Array], count: Array, stats: tuple[str, ...], min_periods: int, fdt: Any
) -> dict[str, Array]:
    """``min_periods``: NaN where a window has too few non-NaN points (``count``: rows).

    ``"cov"``/``"corr"`` count the points of each channel pair (pandas' pairwise-complete
    observations), their ``PAIR_COUNT``.
    """
    ok = out["count"] >= min_periods
    ok_pairs = out[PAIR_COUNT] >= min_periods if PAIR_COUNT in out else ok
    # pandas' count compares min_periods with the rows of the window, NaN rows included
    ok_rows = (count >= min_periods)[:, None]
    res = {}
    for s in stats:
        keep = ok_rows if s == "count" else (ok_pairs if s in PAIR_STATISTICS else ok)
        res[s] = jnp.where(keep, out[s].astype(fdt), jnp.nan)
    return res


def statistics(
    yf: Array,
    present: Any,
    rows: Array,
    w: int,
    stats: tuple[str, ...],
    ddof: int,
    omit: bool,
    *,
    nonfinite: bool,
    min_periods: tuple[tuple[str, ...], int] | None = None,
    last: Any = None,
) -> dict[str, Array]:
    """:func:`sliding_statistics` of float ``yf``; ``nonfinite=False`` when it holds no NaN/inf.

    ``min_periods``: ``None``, or ``(names, m)``: only ``names``, finished by :func:`finish`
    with ``min_periods=m``. ``last``: the last present row (``None``: every row; ``present``
    is the same rows as a mask).
    """
    idt = index_dtype()
    fdt = yf.dtype
    num, ch = yf.shape
    nan = jnp.array(jnp.nan, fdt)
    out: dict[str, Array] = {}
    is_float = nonfinite
    isnan = jnp.isnan(yf) if is_float else jnp.zeros(yf.shape, bool)
    notnan = present & ~isnan
    moments = bool({"var", "std", "sem"} & set(stats))
    sums = bool({"sum", "mean"} & set(stats))
    zeros = jnp.zeros((num, ch), idt)
    n_nan = n_pos = n_neg = zeros
    if is_float:
        # NaN and +-inf counts of every window in one fold of 0/1 flags (exact integers); the
        # sums and moments fold finite values only (a matmul's 0 * inf would be NaN)
        flags = [present & isnan]
        if sums or moments:
            flags += [present & (yf == jnp.inf), present & (yf == -jnp.inf)]
        counts = count_flags(flags, w)
        n_nan = counts[0]
        if sums or moments:
            n_pos, n_neg = counts[1], counts[2]
    n = rows - n_nan if omit else rows
    poisoned = n_nan > 0 if (is_float and not omit) else jnp.zeros((num, ch), bool)
    out["count"] = n
    finite = notnan & jnp.isfinite(yf) if is_float else notnan
    if sums:
        total = sliding_fold(SlidingSum(), jnp.where(finite, yf, 0), w)
        # a window holding +inf (-inf) sums to +inf (-inf), both: NaN (inf - inf), as NumPy
        inf = jnp.array(jnp.inf, fdt)
        total = jnp.where(n_pos > 0, inf, total)
        total = jnp.where(n_neg > 0, -inf, total)
        total = jnp.where((n_pos > 0) & (n_neg > 0), nan, total)
        if "sum" in stats:
            out["sum"] = jnp.where(poisoned, nan, total)
        if "mean" in stats:
            out["mean"] = mean_statistic(n, total, poisoned)
    if moments and not is_float and w > ShiftedMoments.block:
        q = finite_m2(yf, last, w)  # every present value finite
        out.update(spread_statistics(stats, n, q, ddof, poisoned))
    elif moments:
        # moments of the finite points; a window holding +-inf has NaN variance (inf - inf)
        v = jnp.where(finite, yf, 0)
        zero = jnp.zeros_like(v)
        leaves = (finite.astype(idt), v, zero, zero)  # one point: its own shift, no deviation
        _, _, _, q = sliding_fold(ShiftedMoments(), leaves, w)
        out.update(spread_statistics(stats, n, q, ddof, poisoned | (n_pos + n_neg > 0)))
    for which in ("min", "max"):
        if which in stats:
            fold = SlidingExtreme(which)
            vals = jnp.where(notnan, yf, fold.ident)
            ext = sliding_fold(fold, vals, w)
            out[which] = extreme_statistic(n, ext, poisoned)
    if min_periods is None:
        return out
    names, m = min_periods
    return finish(out, rows[:, 0], names, m, fdt)
