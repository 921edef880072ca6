"""Medians without a global sort: a radix select over segments, and masked padded medians."""

from typing import Any

import jax.numpy as jnp
import numpy as np
from jax import lax

from ._typing import Array


def _masked_median(vals: Array, mask: Array) -> Array:
    """Median along axis 1 of ``vals`` ``(K, L, C)`` over ``mask`` ``(K, L, C)``; NaN if empty."""
    ordered = jnp.sort(jnp.where(mask, vals, jnp.inf), axis=1)
    n = jnp.sum(mask, axis=1)
    lo = jnp.maximum(n - 1, 0) // 2
    hi = n // 2
    a = jnp.take_along_axis(ordered, lo[:, None, :], axis=1)[:, 0]
    b = jnp.take_along_axis(ordered, hi[:, None, :], axis=1)[:, 0]
    return jnp.where(n > 0, (a + b) / 2, jnp.nan)


def _order_key(v: Array) -> Array:
    """Unsigned ints whose order is the float order of ``v`` (NaN above +inf, as np.sort)."""
    bits = 64 if v.dtype == jnp.float64 else 32
    udt = jnp.uint64 if bits == 64 else jnp.uint32
    u = lax.bitcast_convert_type(v, udt)
    sign = jnp.asarray(1 << (bits - 1), udt)
    return jnp.where((u & sign) != 0, ~u, u | sign)


def _from_key(k: Array, dtype: Any) -> Array:
    bits = 64 if dtype == jnp.float64 else 32
    udt = jnp.uint64 if bits == 64 else jnp.uint32
    sign = jnp.asarray(1 << (bits - 1), udt)
    u = jnp.where((k & sign) != 0, k & ~sign, ~k)
    return lax.bitcast_convert_type(u.astype(udt), dtype)


def _segment_median(seg: Array, v: Array, nseg: int, cnt: Array | None = None) -> Array:
    """Median of ``v`` ``(N,)`` per segment id ``seg`` in O(N) passes, without sorting.

    A radix select on the order-preserving integer keys: 11 bits per pass (6 passes for
    float64, 3 for float32), each one scatter-add histogram of (segment, digit); the upper
    middle value of an even count is the lower one again or the next larger value (one
    scatter-min). Exact: the result is ``(v[lo] + v[hi]) / 2`` of the sorted values, as scipy.
    ``cnt`` (points per segment) defaults to the first histogram's row sums (no extra pass).
    """
    dtype = v.dtype
    bits = 64 if dtype == jnp.float64 else 32
    udt = jnp.uint64 if bits == 64 else jnp.uint32
    key = _order_key(v)
    rank = None if cnt is None else jnp.maximum(cnt.astype(jnp.int32) - 1, 0) // 2
    prefix = jnp.zeros((nseg,), udt)
    digits = 11
    done = 0
    last_hist = None
    while done < bits:
        width = min(digits, bits - done)
        shift = bits - done - width
        dig = ((key >> shift) & ((1 << width) - 1)).astype(jnp.int32)
        slot = (seg << width) + dig
        if done > 0:
            # points whose higher digits left the selection go to a slot past the end, which
            # the scatter drops: adding a constant 1 was measured ~1.4x faster on CPU than
            # adding a 0/1 weight per point
            slot = jnp.where((key >> (shift + width)) == prefix[seg], slot, nseg << width)
        hist = jnp.zeros((nseg << width,), jnp.int32).at[slot].add(1, mode="drop")
        # two-level choice of the digit: 2**width = groups x lanes, no long cumulative sums
        lanes = 1 << (width // 2)
        h3 = hist.reshape(nseg, -1, lanes)
        if cnt is None:  # the first histogram counts every point of every segment
            cnt = h3.sum(axis=(1, 2))
        cnt = cnt.astype(jnp.int32)
        if rank is None:
            rank = jnp.maximum(cnt - 1, 0) // 2
        ccum = jnp.cumsum(h3.sum(axis=2), axis=1)
        g = jnp.argmax(ccum > rank[:, None], axis=1)
        below_g = jnp.where(g > 0, jnp.take_along_axis(ccum, (g - 1)[:, None], 1)[:, 0], 0)
        fine = jnp.take_along_axis(h3, g[:, None, None], 1)[:, 0]
        fcum = jnp.cumsum(fine, axis=1) + below_g[:, None]
        j = jnp.argmax(fcum > rank[:, None], axis=1)
        below = jnp.where(j > 0, jnp.take_along_axis(fcum, (j - 1)[:, None], 1)[:, 0], below_g)
        chosen = (g * lanes + j).astype(jnp.int32)
        rank = rank - below
        prefix = (prefix << width) | chosen.astype(udt)
        last_hist = jnp.take_along_axis(fine, j[:, None], 1)[:, 0]
        done += width
    lo_val = _from_key(prefix, dtype)
    # the upper middle: another copy of the lower one, or the next larger value
    odd = (cnt % 2) == 1
    again = rank + 1 < last_hist
    top = jnp.asarray(np.iinfo(np.uint64 if bits == 64 else np.uint32).max, udt)
    above = jnp.where(key > prefix[seg], seg, nseg)  # the others are dropped
    nxt = _from_key(jnp.full((nseg,), top, udt).at[above].min(key, mode="drop"), dtype)
    hi_val = jnp.where(odd | again, lo_val, nxt)
    return jnp.where(cnt > 0, (lo_val + hi_val) / 2, jnp.nan)
