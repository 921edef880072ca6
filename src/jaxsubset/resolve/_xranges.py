"""x-value ranges: ``select`` (``lo <= x < hi`` by ``closed``) and ``nearest``."""

import functools

import jax
import jax.numpy as jnp
import numpy as np

from .._core import (
    Array,
    ArrayLike,
    Int,
    as_x,
    as_xy,
    check_closed,
    check_sorted_x,
    concrete_bound as _concrete_bound,
    int_limits as _int_limits,
    now_or_traced,
    static_int,
    time_kind,
    traced_array,
)
from .._subsets import Subsets, gather_padded
from ._buckets import (
    check_broadcast,
    eager,
    keep_host,
)
from ._eager import bucketed
from ._exact import exact_positions, exact_subsets
from ._index import gather
from ._keys import Key, keys, resolve_bound, sides
from ._search import count_keys
from ._type import Ranges, real_length, to_subsets


def xrange(x: Array, lo: Key, hi: Key, closed: str, n_real: Array) -> Ranges:
    """The points with ``lo <= x < hi`` (``closed`` decides the ends), bounds as resolver keys."""
    lo_side, hi_side = sides(closed)
    i0 = count_keys(x, lo, lo_side, n_real)
    i1 = count_keys(x, hi, hi_side, n_real)
    i0, i1 = jnp.broadcast_arrays(i0, i1)
    return Ranges(i0, jnp.maximum(i1 - i0, 0))


def select_ranges(
    x: ArrayLike,
    lo: ArrayLike,
    hi: ArrayLike,
    *,
    closed: str = "left",
    length: ArrayLike | None = None,
) -> Ranges:
    """Index ranges of the points with ``lo <= x < hi`` (by default; see :func:`select`).

    Example:
        >>> import jax.numpy as jnp, jaxsubset
        >>> r = jaxsubset.ranges.select(jnp.arange(10.0), 2.0, 5.0, closed="both")
        >>> r.start.tolist(), r.count.tolist()
        (2, 4)
    """
    return resolve_select(x, lo, hi, closed=closed, length=length, func="ranges.select")


@exact_positions(others=("lo", "hi"))
def resolve_select(
    x: ArrayLike,
    lo: ArrayLike,
    hi: ArrayLike,
    *,
    closed: str = "left",
    length: ArrayLike | None = None,
    func: str = "ranges.select",
    time: str | None = None,
) -> Ranges:
    """:func:`select_ranges` with the caller's name (``func``) for messages."""
    closed = check_closed(closed, func)
    tk = time or time_kind(x)
    x = as_x(x, func)
    check_sorted_x(x, func)
    lo_side, hi_side = sides(closed)
    lo_key = resolve_bound(lo, "lo", x, func, tk, lo_side)
    hi_key = resolve_bound(hi, "hi", x, func, tk, hi_side)
    check_broadcast(lo_key, hi_key, func)
    if eager(length, x, lo, hi) and x.shape[0] > 0:
        return eager_xrange(x, None, (lo_key, hi_key), closed=closed)
    return xrange(x, lo_key, hi_key, closed, real_length(length, x.shape[0], func))


@exact_subsets(resolve_select, gather, others=("lo", "hi"))
def select(
    x: ArrayLike,
    y: ArrayLike,
    lo: ArrayLike,
    hi: ArrayLike,
    *,
    capacity: int,
    closed: str = "left",
    length: ArrayLike | None = None,
) -> Subsets:
    """Subsets by x value: the points with ``lo <= x < hi`` (by default), found by binary search.

    Args:
        x: ``(N,)`` sorted sample positions (ties allowed).
        y: ``(N, *channels)`` values.
        lo: scalar or ``(*batch)`` lower x bounds (traced is fine).
        hi: scalar or ``(*batch)`` upper x bounds (traced is fine).
        capacity: static Python int, the padded length of every subset.
        closed: which ends are included: ``"left"`` ``lo <= x < hi``, ``"right"``
            ``lo < x <= hi``, ``"both"`` ``lo <= x <= hi``, ``"neither"`` ``lo < x < hi``.
        length: optional traced number of real points (see :func:`jaxsubset.pack`).

    Returns:
        :class:`Subsets` with batch shape ``broadcast(lo, hi).shape``.

    Raises:
        ValueError: if concrete ``x`` is unsorted or holds NaN. Under ``jit`` ``x`` cannot be
            checked: an unsorted ``x`` then gives the ranges ``searchsorted`` finds, which are
            meaningless; use :func:`jaxsubset.check_sorted` to raise at run time.

    Example:
        >>> import jax.numpy as jnp, jaxsubset
        >>> x = jnp.arange(10.0)
        >>> s = jaxsubset.select(x, x, 2.0, 5.0, capacity=4)
        >>> s.x.tolist(), s.count.tolist()
        ([2.0, 3.0, 4.0, 0.0], 3)
        >>> jaxsubset.select(x, x, 2.0, 5.0, capacity=4, closed="both").count.tolist()
        4
    """
    capacity = static_int(capacity, "capacity", "select")
    tk = time_kind(x)
    keep = keep_host(length, x, y, lo, hi)
    x, y = as_xy(x, y, "select", keep_host=keep)
    if keep:
        closed = check_closed(closed, "select")
        check_sorted_x(x, "select")
        lo_side, hi_side = sides(closed)
        lo_key = resolve_bound(lo, "lo", x, "select", tk, lo_side)
        hi_key = resolve_bound(hi, "hi", x, "select", tk, hi_side)
        check_broadcast(lo_key, hi_key, "select")
        return eager_select(x, y, (lo_key, hi_key), closed=closed, capacity=capacity)
    r = resolve_select(x, lo, hi, closed=closed, length=length, func="select", time=tk)
    return to_subsets(x, y, r, capacity)


@bucketed(static_argnames=("closed", "capacity"))
def eager_select(
    x: Array, y: Array, bounds: tuple[Key, Key], n: Array, *, closed: str, capacity: int
) -> Subsets:
    """Eager :func:`select`: the ranges and their gather, one program per bucket."""
    r = xrange(x, *bounds, closed, n)
    return gather_padded(x, y, r.start, r.count, capacity, length=n)


@bucketed(static_argnames=("closed",))
def eager_xrange(
    x: Array, y: None, bounds: tuple[Key, Key], n: Array, *, closed: str
) -> tuple[Array, Array]:
    """Eager :func:`select_ranges`, one program per bucket."""
    r = xrange(x, *bounds, closed, n)
    return r.start, r.count


def above_midpoint(a: Array, b: Array, v: Array) -> Array:
    """``b - v < v - a`` exactly, for samples ``a <= v <= b`` of x's dtype: never from rounded
    distances (float32 cannot tell 2147483628 from 2147483629, nor 3.0000001 from 3).

    Integer x: with ``f = floor(v)``, ``b - v < v - a`` iff ``A < B``, or ``A == B`` and ``v``
    is not whole, or ``A == B + 1`` and ``v - f > 1/2`` (``A = b - f``, ``B = f - a``, both
    >= 0, taken in the unsigned integers of x's width: no overflow). Float x: the midpoint
    ``a/2 + b/2`` as an exact sum (its TwoSum error decides where it rounds onto ``v``).
    """
    xdt = np.dtype(a.dtype)
    if xdt.kind in "iu":
        ut = np.dtype(f"uint{8 * xdt.itemsize}")
        lo, hi = _int_limits(xdt)
        if jnp.issubdtype(v.dtype, jnp.integer):
            f, frac = jnp.clip(v, max(lo, _int_limits(v.dtype)[0]), hi).astype(xdt), None
        else:
            fl = jnp.floor(v)
            f = jnp.clip(fl, float(lo), float(hi)).astype(xdt)
            frac = v - fl

        def diff(p: Array, q: Array) -> Array:  # p - q >= 0, in the unsigned integers
            as_u = functools.partial(jax.lax.bitcast_convert_type, new_dtype=ut)
            return as_u(p) - as_u(q)

        big, small = diff(b, f), diff(f, a)
        nearer = big < small
        if frac is not None:
            nearer = nearer | ((big == small) & (frac > 0)) | ((big == small + 1) & (frac > 0.5))
        return nearer
    d = jnp.promote_types(xdt, v.dtype)
    if not jnp.issubdtype(d, jnp.inexact):
        d = jnp.promote_types(d, jax.dtypes.canonicalize_dtype(np.float64))
    half = jnp.asarray(0.5, d)
    pa, pb, vv = a.astype(d) * half, b.astype(d) * half, v.astype(d)
    mid = pa + pb
    z = mid - pa
    err = (pa - (mid - z)) + (pb - z)  # pa + pb == mid + err exactly
    return (mid < vv) | ((mid == vv) & (err < 0))


def nearest_impl(x: Array, values: Array, key: Key, n_real: Array) -> Array:
    """The first index of the sample nearest to each value (``n_real >= 1``).

    ``hi`` is the first sample ``>= v`` (exact, in key space): past the end the last sample,
    before the start the first, else the nearer of ``hi - 1`` and ``hi`` (ties to the lower).
    """
    hi = count_keys(x, key, "left", n_real)
    last = n_real - 1
    h = jnp.clip(hi, 0, last)
    lo = jnp.clip(hi - 1, 0, last)
    nearer_hi = above_midpoint(x[lo], x[h], values)
    best = jnp.where(hi >= n_real, last, jnp.where((hi <= 0) | nearer_hi, h, lo))
    best = jnp.where(hi <= 0, 0, best)
    # With duplicate x values, ties go to the FIRST sample holding the nearest value.
    return count_keys(x, (keys(x[best]), None, None), "left", n_real)


@exact_positions("values", computes=True)
def nearest(
    x: ArrayLike, values: ArrayLike, *, length: ArrayLike | None = None
) -> Int[Array, "*batch"]:
    """Index of the sample nearest to each value (ties to the lower index), in O(log N).

    The exact, jit-safe replacement for snapping a bound to the grid with
    ``jnp.where(jnp.isclose(x, v, atol=dx / 2))``, whose default ``rtol`` picks wrong points on
    long arrays. Values beyond the ends snap to the first/last sample.

    Args:
        x: ``(N,)`` sorted sample positions, ``N >= 1``.
        values: scalar or ``(*batch)`` positions to snap (traced is fine).
        length: optional traced number of real points (see :func:`jaxsubset.pack`).

    Returns:
        ``(*batch)`` int indices into ``x``.

    Example:
        >>> import jax.numpy as jnp, jaxsubset
        >>> x = jnp.array([0.0, 1.0, 2.0, 3.0])
        >>> jaxsubset.nearest(x, jnp.array([-5.0, 0.5, 1.6, 9.0])).tolist()
        [0, 0, 2, 3]
    """
    func = "nearest"
    tk = time_kind(x)
    x = as_x(x, func)
    if x.shape[0] == 0:
        raise ValueError(f"{func}: `x` must hold at least one point, got len(x)=0")
    check_sorted_x(x, func)
    n_real = jnp.maximum(real_length(length, x.shape[0], func), 1)
    key = resolve_bound(values, "values", x, func, tk, "left")
    vals = now_or_traced(values, lambda v: host_values(v, x, func, tk), traced_array)
    if eager(length, x, vals):  # one program per bucket of N and of the number of values
        return eager_nearest(x, None, (vals, key))
    return nearest_impl(x, vals, key, n_real)


def host_values(values: ArrayLike, x: Array, func: str, tk: str | None) -> Array:
    """Concrete values to snap, in a dtype holding them and x's: only values between two
    samples use their distances, so integers are clipped to x's range (those beyond it snap
    to an end by their key alone) and no value wraps in 32-bit mode."""
    v = _concrete_bound(values, "values", x, func, tk)
    if v.dtype.kind in "biuO":
        lo, hi = _int_limits(x.dtype) if x.dtype.kind in "iu" else (-(2**53), 2**53)
        v = np.vectorize(lambda e: min(max(int(e), lo), hi), otypes=[np.int64])(v)
        v = v.astype(x.dtype if x.dtype.kind in "iu" else np.float64)
    return jax.device_put(v.astype(np.result_type(v.dtype, x.dtype)))  # no program


@bucketed()
def eager_nearest(x: Array, y: None, batch: tuple[Array, Key], n: Array) -> Array:
    """Eager :func:`nearest`, one program per bucket."""
    return nearest_impl(x, *batch, n)
