"""Covariance and correlation between channels: co-moment partials, their fold and finish.

``"cov"``/``"corr"`` of ``(N, C)`` data are computed for the ``P = C (C + 1) / 2`` channel
pairs ``(i, j)``, ``i <= j`` (:func:`pairs`), and mirrored into ``(C, C)`` matrices at the end.
Each pair has its own points: those where both channels count (finite, and not NaN; with
``omit`` a NaN in either channel leaves the point out of that pair only, pandas' pairwise
complete observations).

A pair's partial is ``(n, cx, mx, cy, my, Cxy, Qx, Qy, bad)``: ``n`` points with means
``cx + mx`` and ``cy + my``, where the shifts ``cx``/``cy`` are values of one of the partial's
own points, co-moment ``Cxy = sum (x - mean_x)(y - mean_y)``, the channels' ``M2`` ``Qx``/``Qy``,
and ``bad`` the count of points making the entry NaN (an infinite value, or a NaN that is
not omitted). Two partials combine by Chan's formula extended to the co-moment,
``Cxy = Cxy_a + Cxy_b + dx dy na nb / n``, with ``dx = (cx_b - cx_a) + (mx_b - mx_a)`` a
difference of two data values first (:func:`._moments.chan`): every partial holds only points
of its own subset, so a value outside a window never changes it, a constant channel has
deviations of exactly 0 (a covariance of exactly 0), and large offsets cancel as in a
two-pass formula. The block tree and the block road fold the same partials.
"""

from typing import Any

import jax.numpy as jnp
import numpy as np

from .._core import Array, index_dtype
from ._moments import chan


Pair = tuple[Array, Array, Array, Array, Array, Array, Array, Array, Array]
# the points each entry of "cov"/"corr" is made of, (K, C, C) ints: an internal result key the
# roads add beside them (``rolling_statistic``'s ``min_periods`` reads it)
PAIR_COUNT = "count(pairs)"


def pairs(c: int) -> tuple[np.ndarray, np.ndarray]:
    """The channel pairs ``(i, j)``, ``i <= j``, of ``c`` channels (row-major upper triangle)."""
    return np.triu_indices(c)


def pair_leaves(yf: Array, present: Any, omit: bool) -> Pair:
    """Per-point partials ``(N, P)`` of every channel pair of float ``yf`` ``(N, C)``.

    ``present`` (bool, broadcastable to ``(N, 1)``, or True): rows that exist (bucket padding
    and rows past the end are absent: empty partials).
    """
    idt = index_dtype()
    i, j = pairs(yf.shape[1])
    a, b = yf[:, i], yf[:, j]
    fin = present & jnp.isfinite(a) & jnp.isfinite(b)
    nan = jnp.isnan(a) | jnp.isnan(b)
    # the points that make the entry NaN: an inf (inf - inf), or a NaN that is not omitted
    bad = present & ~fin & ~nan if omit else present & ~fin
    av = jnp.where(fin, a, 0)
    bv = jnp.where(fin, b, 0)
    z = jnp.zeros_like(av)
    return (fin.astype(idt), av, z, bv, z, z, z, z, bad.astype(idt))


def combine(p: Pair, q: Pair) -> Pair:
    """Chan's combination of two pair partials (either may be empty), the co-moment with it."""
    na, cxa, mxa, cya, mya, ca, qxa, qya, ba = p
    nb, cxb, mxb, cyb, myb, cb, qxb, qyb, bb = q
    dt = mxa.dtype
    n, cx, mx, qx = chan((na, cxa, mxa, qxa), (nb, cxb, mxb, qxb))
    _, cy, my, qy = chan((na, cya, mya, qya), (nb, cyb, myb, qyb))
    both = (na > 0) & (nb > 0)
    w = jnp.where(both, nb.astype(dt) / jnp.where(n > 0, n, 1).astype(dt), 0)
    dx = jnp.where(both, (cxb - cxa) + (mxb - mxa), 0)
    dy = jnp.where(both, (cyb - cya) + (myb - mya), 0)
    cxy = ca + cb + dx * dy * na.astype(dt) * w
    return n, cx, mx, cy, my, cxy, qx, qy, ba + bb


def mirror(p: Array, c: int) -> Array:
    """``(K, P)`` pair results as ``(K, C, C)`` symmetric matrices."""
    i, j = pairs(c)
    index = np.zeros((c, c), np.int32)
    index[i, j] = np.arange(i.shape[0])
    index[j, i] = np.arange(i.shape[0])
    return jnp.take(p, jnp.asarray(index.reshape(-1)), axis=1).reshape(p.shape[:1] + (c, c))


def pair_statistics(stats: tuple[str, ...], folded: Pair, ddof: int, c: int) -> dict[str, Array]:
    """``"cov"``/``"corr"`` (those of ``stats``) ``(K, C, C)`` and their point counts.

    Args:
        stats: statistic names; only ``"cov"`` and ``"corr"`` are read.
        folded: the pair partials of every subset, ``(K, P)`` each.
        ddof: delta degrees of freedom of ``"cov"`` (divisor ``n - ddof``).
        c: the number of channels.

    Returns:
        dict with the asked statistics and :data:`PAIR_COUNT` (the points of each entry; an
        entry holding an infinite value or an unomitted NaN is NaN whatever its count).
    """
    n, _, _, _, _, cxy, qx, qy, bad = folded
    fdt = cxy.dtype
    nan = jnp.array(jnp.nan, fdt)
    bad = bad > 0
    out: dict[str, Array] = {PAIR_COUNT: mirror(n, c)}
    if "cov" in stats:
        denom = n - ddof
        cov = cxy / jnp.where(denom > 0, denom, 1).astype(fdt)
        out["cov"] = mirror(jnp.where(bad | (denom <= 0), nan, cov), c)
    if "corr" in stats:
        i, j = pairs(c)
        ok = ~bad & (n >= 2) & (qx > 0) & (qy > 0) & jnp.isfinite(qx) & jnp.isfinite(qy)
        den = jnp.sqrt(jnp.where(ok, qx, 1)) * jnp.sqrt(jnp.where(ok, qy, 1))
        ok = ok & (den > 0) & jnp.isfinite(cxy)
        r = jnp.clip(jnp.where(ok, cxy, 0) / jnp.where(ok, den, 1), -1, 1)
        r = jnp.where(jnp.asarray(i == j), jnp.asarray(1, fdt), r)  # exactly 1 on the diagonal
        out["corr"] = mirror(jnp.where(ok, r, nan), c)
    return out


__all__ = ["combine", "mirror", "pair_leaves", "pair_statistics", "pairs"]
