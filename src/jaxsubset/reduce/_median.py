"""Medians of labelled points without a global sort: a radix select over segments.

The selection runs on order-preserving integer keys (no gradient flows through them); the
result is then READ from ``v`` at the index of a point holding each selected middle value, so
the gradient of a median reaches the one or two points it is made of (as the gradient of
:meth:`jaxsubset.Subsets.median`).
"""

from typing import Any

import jax.numpy as jnp
import numpy as np
from jax import lax

from .._core import Array


def order_key(v: Array) -> Array:
    """Unsigned ints whose order is the float order of ``v`` (NaN above +inf, as np.sort).

    ``v`` is float32 or float64; a NaN of either sign is canonicalised first, so every NaN
    key is above the key of +inf.
    """
    bits = 64 if v.dtype == jnp.float64 else 32
    udt = jnp.uint64 if bits == 64 else jnp.uint32
    v = jnp.where(jnp.isnan(v), jnp.asarray(np.nan, v.dtype), v)
    u = lax.bitcast_convert_type(v, udt)
    sign = jnp.asarray(1 << (bits - 1), udt)
    return jnp.where((u & sign) != 0, ~u, u | sign)


def digit_width(nseg: int, n: int) -> int:
    """Bits per radix pass: 11, fewer when ``nseg << 11`` histogram slots would be too many.

    The slots must fit an int32 index, and are held to ``max(2**24, 8 n)`` so that many
    segments do not make the histogram far larger than the data.
    """
    budget = min(max(1 << 24, 8 * n), (1 << 31) - 1)
    width = 11
    while width > 1 and (nseg << width) > budget:
        width -= 1
    return width


def select_rank(seg: Array, key: Array, nseg: int, rank: Array) -> tuple[Array, Array]:
    """The key of rank ``rank[s]`` (0-based, ascending) among the keys of each segment.

    A radix select: ``width`` bits per pass, each pass one scatter-add histogram of
    (segment, digit) restricted to the points whose higher digits match the selection so far.
    Exact for any ``rank < count``; a segment with ``rank >= count`` gets an unspecified key.

    Args:
        seg: ``(N,)`` int segment of each point, in ``[0, nseg)``.
        key: ``(N,)`` uint32/uint64 order keys.
        nseg: static number of segments.
        rank: ``(nseg,)`` int.

    Returns:
        ``(selected, ties_above)``: ``(nseg,)`` the selected key, and ``(nseg,)`` bool, True
        where the key of rank ``rank + 1`` is the same key (another copy of it).
    """
    bits = 64 if key.dtype == jnp.uint64 else 32
    udt = key.dtype
    width_max = digit_width(nseg, key.shape[0])
    seg = seg.astype(jnp.int32)
    rank = rank.astype(jnp.int32)
    prefix = jnp.zeros((nseg,), udt)
    done = 0
    last = jnp.zeros((nseg,), jnp.int32)
    while done < bits:
        width = min(width_max, bits - done)
        shift = bits - done - width
        dig = ((key >> shift) & ((1 << width) - 1)).astype(jnp.int32)
        slot = (seg << width) + dig
        if done > 0:
            # points whose higher digits left the selection go to a slot past the end, which
            # the scatter drops
            slot = jnp.where((key >> (shift + width)) == prefix[seg], slot, nseg << width)
        hist = jnp.zeros((nseg << width,), jnp.int32).at[slot].add(1, mode="drop")
        # two-level choice of the digit: 2**width = groups x lanes, no long cumulative sums
        lanes = 1 << (width // 2)
        h3 = hist.reshape(nseg, -1, lanes)
        ccum = jnp.cumsum(h3.sum(axis=2), axis=1)
        g = jnp.argmax(ccum > rank[:, None], axis=1)
        below_g = jnp.where(g > 0, jnp.take_along_axis(ccum, (g - 1)[:, None], 1)[:, 0], 0)
        fine = jnp.take_along_axis(h3, g[:, None, None], 1)[:, 0]
        fcum = jnp.cumsum(fine, axis=1) + below_g[:, None]
        j = jnp.argmax(fcum > rank[:, None], axis=1)
        below = jnp.where(j > 0, jnp.take_along_axis(fcum, (j - 1)[:, None], 1)[:, 0], below_g)
        chosen = (g * lanes + j).astype(udt)
        rank = rank - below
        prefix = (prefix << width) | chosen
        last = jnp.take_along_axis(fine, j[:, None], 1)[:, 0]
        done += width
    # after the last digit, ``last`` counts the copies of the selected key and ``rank`` is
    # the rank among them
    return prefix, rank + 1 < last


def segment_median(seg: Array, v: Array, nseg: int, n: Array) -> Array:
    """Median of ``v`` ``(N,)`` per segment: the mean of the values of ranks (n-1)//2, n//2.

    Args:
        seg: ``(N,)`` int segment of each point, in ``[0, nseg)``.
        v: ``(N,)`` float32/float64 values; NaN ranks above +inf.
        nseg: static number of segments.
        n: ``(nseg,)`` int, the points ranked in each segment. With ``n`` smaller than the
            segment's size (NaN readings left out) the ranks never reach the NaN keys.

    Returns:
        ``(nseg,)``; NaN where ``n == 0``. Exact (the two middle values of the sorted
        values, as SciPy), differentiable in ``v``: the value is read at the first point
        holding each middle value.
    """
    num = v.shape[0]
    vs = lax.stop_gradient(v)
    key = order_key(vs)
    n = n.astype(jnp.int32)
    lo_rank = jnp.maximum(n - 1, 0) // 2
    lo_key, again = select_rank(seg, key, nseg, lo_rank)
    # the upper middle: the lower again (odd count, or a copy of it), or the next larger key
    top = jnp.asarray(np.iinfo(np.dtype(key.dtype)).max, key.dtype)
    above = jnp.where(key > lo_key[seg], seg, nseg)  # the others are dropped
    nxt = jnp.full((nseg,), top, key.dtype).at[above].min(key, mode="drop")
    hi_key = jnp.where(((n % 2) == 1) | again, lo_key, nxt)
    if num == 0:
        return jnp.full((nseg,), jnp.nan, v.dtype)
    # the first point holding each middle key: a scatter-min of point indices
    iota = jnp.arange(num, dtype=jnp.int32)

    def first(k: Array) -> Array:
        cand = jnp.where(key == k[seg], iota, num)
        return jnp.minimum(jnp.full((nseg,), num, jnp.int32).at[seg].min(cand), num - 1)

    med = (v[first(lo_key)] + v[first(hi_key)]) / 2
    return jnp.where(n > 0, med, jnp.nan)


def sorted_by_label(lab: Array, v: Array) -> Array:
    """``v`` ordered by ``(label, value)``, NaN last within a label; differentiable in ``v``
    (the order comes from a stopped copy, the values through one gather)."""
    vs = lax.stop_gradient(v)
    vs = jnp.where(jnp.isnan(vs), jnp.asarray(np.nan, v.dtype), vs)
    iota = jnp.arange(v.shape[0], dtype=jnp.int32)
    _, _, perm = lax.sort((lab, vs, iota), num_keys=2)
    return v[perm]


def rank(n: Array, q: Any, dtype: Any) -> Array:
    """``h = (n - 1) q`` (``n >= 1``: else 0) rounded to ``dtype``, as NumPy rounds it, on every
    road alike: kept apart from the ``h - floor(h)`` that follows, which a compiler free to
    fuse it would compute from the unrounded product in some programs and not in others
    (bucketed and unbucketed calls disagreeing in the last bit)."""
    return rounded(jnp.maximum(n - 1, 0).astype(dtype) * jnp.asarray(q, dtype))


def rounded(p: Array) -> Array:
    """The product ``p`` rounded on its own: behind a select (of ``p``, or NaN where ``p`` is
    NaN: the same values), which no compiler contracts with a following sum into a fused
    multiply-add (XLA does where it optimises; ``optimization_barrier`` is removed before
    code generation, so it would not stop it)."""
    return jnp.where(p == p, p, jnp.nan)


def lerp(a: Array, b: Array, t: Array) -> Array:
    """NumPy's ``_lerp``: ``a + (b - a) t`` from the nearer end (``b - (b - a)(1 - t)`` for
    ``t >= 0.5``), so ``t = 1`` gives ``b`` exactly (and NaN where an end is +-inf, as NumPy)."""
    d = b - a
    # the products rounded on their own, as NumPy: a compiler free to fuse them into the
    # sums (fused multiply-adds where XLA optimises) would round differently in different
    # programs, so bucketed and unbucketed calls would disagree in the last bit
    down, up = rounded(d * (1 - t)), rounded(d * t)
    return jnp.where(t >= 0.5, b - down, a + up)


def sorted_median(lab: Array, v: Array, nbins: int, start: Array, n: Array) -> Array:
    """Median per bin by one sort of ``(label, value)`` pairs (the backend-neutral road).

    Args:
        lab: ``(N,)`` int label of each point in ``[0, nbins]`` (``nbins``: in no bin).
        v: ``(N,)`` float values.
        nbins: static number of bins.
        start: ``(nbins,)`` first index of each bin in label order (the bins are contiguous
            after a sort by label).
        n: ``(nbins,)`` the points ranked per bin; NaN sorts last within its bin, so ranks
            below the count of real readings never reach one.

    Returns:
        ``(nbins,)`` medians, NaN where ``n == 0``; the gradient reaches the middle points
        through the gather of ``v`` in sorted order.
    """
    num = v.shape[0]
    if num == 0:
        return jnp.full((nbins,), jnp.nan, v.dtype)
    ordered = sorted_by_label(lab, v)
    lo = jnp.clip(start + jnp.maximum(n - 1, 0) // 2, 0, num - 1)
    hi = jnp.clip(start + n // 2, 0, num - 1)
    med = (ordered[lo] + ordered[hi]) / 2
    return jnp.where(n > 0, med, jnp.nan)


def sorted_quantile(lab: Array, v: Array, nbins: int, start: Array, n: Array, q: float) -> Array:
    """The ``q``-quantile per bin by one sort of ``(label, value)`` pairs, as ``numpy.quantile``.

    The rank ``h = (n - 1) q`` is interpolated linearly between the sorted values of ranks
    ``floor(h)`` and ``floor(h) + 1`` with NumPy's ``_lerp`` (from the nearer end), exactly
    as :meth:`jaxsubset.Subsets.quantile`; the arguments are those of :func:`sorted_median`.

    Returns:
        ``(nbins,)`` quantiles, NaN where ``n == 0``; the gradient reaches the one or two
        values read.
    """
    num = v.shape[0]
    if num == 0:
        return jnp.full((nbins,), jnp.nan, v.dtype)
    ordered = sorted_by_label(lab, v)
    top = jnp.maximum(n - 1, 0)
    h = rank(n, q, v.dtype)
    lo = jnp.floor(h)
    t = h - lo
    lo_i = lo.astype(n.dtype)
    hi_i = jnp.minimum(lo_i + 1, top)
    a = ordered[jnp.clip(start + lo_i, 0, num - 1)]
    b = ordered[jnp.clip(start + hi_i, 0, num - 1)]
    return jnp.where(n > 0, lerp(a, b, t), jnp.nan)


def key_dtype(dtype: Any) -> Any:
    """The float dtype a median is selected in: float32 below 64 bits, else float64."""
    return jnp.float64 if dtype == jnp.float64 else jnp.float32
