"""The reference road: every statistic as the padded, masked reduction of :class:`Subsets`.

This is the ground truth the fast roads are tested against. It reads every range into
``capacity`` padded slots (``K x capacity`` work and memory), so it needs a static capacity
at least as large as every range; a range holding more points gives NaN (``"count"`` stays
exact), never the statistic of a truncated range.
"""

import jax.numpy as jnp
from jax import lax

from .._subsets import Subsets, _gather
from .._typing import Array
from .._validate import index_dtype
from ._registry import PAIR_COUNT, PAIR_STATISTICS, float_dtype, quantile_q


def nan_counts(y: Array, start: Array, count: Array) -> Array:
    """``(K, C)`` int: NaN readings per range, from integer prefix sums (exact, no pollution)."""
    idt = index_dtype()
    if not jnp.issubdtype(y.dtype, jnp.inexact):
        return jnp.zeros((start.shape[0], y.shape[1]), idt)
    p = jnp.cumsum(jnp.isnan(y).astype(idt), axis=0)
    p = jnp.concatenate([jnp.zeros((1, y.shape[1]), idt), p])
    return p[start + count] - p[start]


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
    out: dict[str, Array] = {}
    fdt = float_dtype(y.dtype)
    sub: Subsets = _gather(jnp.zeros((y.shape[0],), fdt), y, start, count, capacity)
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
        out[s] = jnp.where(fits, v.astype(fdt), jnp.nan)
    return out
