"""The reference road: every statistic as the padded, masked reduction of :class:`Subsets`.

This is the ground truth the fast roads are tested against. It reads every range into
``capacity`` padded slots (``K x capacity`` work and memory), so it needs a static capacity
at least as large as every range; a range holding more points gives NaN (``"count"`` stays
exact), never the statistic of a truncated range.
"""

import jax.numpy as jnp
from jax import lax

from .._core import Array, index_dtype
from .._subsets import Subsets, gather_padded
from ..reduce import PAIR_COUNT, PAIR_STATISTICS, float_dtype, quantile_q


def range_counts(flags: Array, start: Array, count: Array) -> Array:
    """``(K, C)`` int: the true ``flags`` (``(N, C)`` bool) of every range, exactly.

    Integer prefix sums (no rounding, so no pollution from outside a range), in int32 where
    ``N`` fits (half the memory traffic of int64), read at ``stop - 1`` and ``start - 1``
    (no zero row prepended: that copy alone costs as much as the sum).
    """
    idt = index_dtype()
    num = flags.shape[0]
    if num == 0:  # (every range empty)
        return jnp.zeros((start.shape[0], flags.shape[1]), idt)
    pdt = jnp.int32 if num < 2**31 - 1 else idt
    p = jnp.cumsum(flags, axis=0, dtype=pdt)
    stop = start + count

    def at(i: Array) -> Array:  # p[i - 1], 0 for i == 0
        return jnp.where((i > 0)[:, None], jnp.take(p, i - 1, axis=0, mode="clip"), 0)

    return (at(stop) - at(start)).astype(idt)


def nan_counts(y: Array, start: Array, count: Array) -> Array:
    """``(K, C)`` int: NaN readings per range, from integer prefix sums (exact, no pollution)."""
    if not jnp.issubdtype(y.dtype, jnp.inexact):
        return jnp.zeros((start.shape[0], y.shape[1]), index_dtype())
    return range_counts(jnp.isnan(y), start, count)


def counted(y: Array, start: Array, count: Array, omit: bool) -> Array:
    """``(K, C)`` int: the points a statistic counts (the non-NaN ones with ``omit``)."""
    n = jnp.broadcast_to(count[:, None], (count.shape[0], y.shape[1])).astype(index_dtype())
    return n - nan_counts(y, start, count) if omit else n


# padded slots read at once: more ranges than fit are reduced batch by batch (``lax.map``), so
# memory stays ~``MAX_SLOTS`` values whatever K (each result the same bits however the ranges
# are batched: ``Subsets`` sums in a fixed order, ``_reduce.ordered_sum``)
MAX_SLOTS = 1 << 24


def reference_ranges(
    y: Array,
    start: Array,
    count: Array,
    stats: tuple[str, ...],
    *,
    ddof: int,
    omit: bool,
    capacity: int,
    pieces: tuple[int, int, int, int] | None = None,
) -> dict[str, Array]:
    """Statistics over ranges by gathering them into padded :class:`Subsets`.

    Args:
        y: ``(N, C)`` values.
        start: ``(K,)`` first index of each range, clipped to ``[0, N]``.
        count: ``(K,)`` points per range, with ``start + count <= N``.
        stats: statistic names.
        ddof: delta degrees of freedom of ``"var"``/``"std"``.
        omit: leave NaN readings out (per channel).
        capacity: static padded length; ranges longer than it give NaN.
        pieces: the static layout ``(n1, s1, n2, s2)`` of the ranges when they are
            consecutive pieces from index 0 (``n1`` of ``s1`` points, then ``n2`` of ``s2``:
            ``ranges.chunks``): then reduced as reshaped ``(n1, s1)`` and ``(n2, s2)`` blocks
            of the data (a view, no gather, no padding), where ``s1 <= capacity``.

    Returns:
        dict of ``(K, C)`` arrays by statistic name (see the registry's conventions).
    """
    out: dict[str, Array] = {}
    if "count" in stats:
        out["count"] = counted(y, start, count, omit)
    padded = tuple(s for s in stats if s != "count")
    if not padded:
        return out
    if any(s in PAIR_STATISTICS for s in padded):
        padded = padded + (PAIR_COUNT,)
        stats = stats + (PAIR_COUNT,)
    k = start.shape[0]
    # (the pieces of data of another length than y's are clipped ranges: gathered)
    if (
        pieces is not None
        and pieces[0] + pieces[2] == k
        and pieces[0] * pieces[1] + pieces[2] * pieces[3] == y.shape[0]
        and pieces[1] <= capacity
    ):
        out.update(_pieces(y, pieces, padded, ddof, omit))
        return {s: out[s] for s in stats}
    batch = max(1, MAX_SLOTS // (capacity * max(y.shape[1], 1)))
    if k <= batch:
        out.update(_padded(y, start, count, padded, ddof, omit, capacity))
        return {s: out[s] for s in stats}
    nb = -(-k // batch)
    pad = nb * batch - k  # empty ranges fill the last batch

    def one(sc: tuple[Array, Array]) -> dict[str, Array]:
        return _padded(y, sc[0], sc[1], padded, ddof, omit, capacity)

    parts = lax.map(
        one,
        (jnp.pad(start, (0, pad)).reshape(nb, batch), jnp.pad(count, (0, pad)).reshape(nb, batch)),
    )
    for s, v in parts.items():
        out[s] = v.reshape((nb * batch,) + v.shape[2:])[:k]
    return {s: out[s] for s in stats}


def _pieces(
    y: Array,
    pieces: tuple[int, int, int, int],
    stats: tuple[str, ...],
    ddof: int,
    omit: bool,
) -> dict[str, Array]:
    """Consecutive pieces as reshaped blocks: ``n1`` of ``s1`` points, then ``n2`` of ``s2``.

    Each block is a view of the data with an all-True mask (XLA folds it away), reduced as
    ``chunks`` reduces its Subsets (``_view``); the two blocks' results are concatenated.
    """
    n1, s1, n2, s2 = pieces
    idt = index_dtype()
    parts = []
    off = 0
    for k, size in ((n1, s1), (n2, s2)):
        if k == 0:
            continue
        block = y[off : off + k * size]
        off += k * size
        one = _one_channel(y, stats)
        v = block[:, 0].reshape(k, size) if one else block.reshape(k, size, y.shape[1])
        count = jnp.full((k,), size, idt)
        sub = Subsets(
            x=jnp.zeros((k, size), float_dtype(y.dtype)),
            y=v,
            mask=jnp.ones((k, size), bool),
            start=jnp.arange(k, dtype=idt) * size + (off - k * size),
            count=count,
            _view=True,
        )
        parts.append(_reduce(sub, count, stats, ddof, omit, size, one))
    if len(parts) == 1:
        return parts[0]
    return {s: jnp.concatenate([p[s] for p in parts]) for s in parts[0]}


def _one_channel(y: Array, stats: tuple[str, ...]) -> bool:
    """One channel and no pair statistic: reduce ``(K, L)`` slots, not ``(K, L, 1)`` (XLA:CPU
    reduces the middle axis of ``(K, L, 1)`` several times slower than the last of ``(K, L)``)."""
    return y.shape[1] == 1 and not any(s in PAIR_STATISTICS for s in stats)


def _padded(
    y: Array,
    start: Array,
    count: Array,
    stats: tuple[str, ...],
    ddof: int,
    omit: bool,
    capacity: int,
) -> dict[str, Array]:
    """The padded reduction of one batch of ranges (every statistic but ``"count"``)."""
    fdt = float_dtype(y.dtype)
    one = _one_channel(y, stats)
    sub: Subsets = gather_padded(
        jnp.zeros((y.shape[0],), fdt), y[:, 0] if one else y, start, count, capacity
    )
    return _reduce(sub, count, stats, ddof, omit, capacity, one)


def _reduce(
    sub: Subsets,
    count: Array,
    stats: tuple[str, ...],
    ddof: int,
    omit: bool,
    capacity: int,
    one: bool,
) -> dict[str, Array]:
    """Every statistic but ``"count"`` of padded subsets (``one``: ``sub.y`` is ``(K, L)``,
    the results get their channel axis back)."""
    out: dict[str, Array] = {}
    fdt = float_dtype(sub.y.dtype)
    policy = "omit" if omit else "propagate"
    fits = (count <= capacity)[:, None]
    pair = tuple(s for s in stats if s in PAIR_STATISTICS)
    if pair:
        res = sub._pair_stats(pair, ddof, policy, "reference_ranges")
        for s in (*pair, PAIR_COUNT):
            v = res[s] if s == PAIR_COUNT else res[s].astype(fdt)
            out[s] = v if s == PAIR_COUNT else jnp.where(fits[:, :, None], v, jnp.nan)
    for s in stats:
        if s in pair or s == PAIR_COUNT:
            continue
        if s in ("var", "std", "sem"):
            v = getattr(sub, s)(ddof=ddof, nan_policy=policy)
        elif s.startswith("quantile("):
            v = sub.quantile(quantile_q(s), nan_policy=policy)
        else:
            v = getattr(sub, s)(nan_policy=policy)
        if one:
            v = v[:, None]
        out[s] = jnp.where(fits, v.astype(fdt), jnp.nan)
    return out
