"""Every way of asking for subsets, reduced to contiguous index ranges ``(start, count)``.

``x`` is sorted, so every subset is a contiguous index range. The constructors differ only in how
they compute ``(start, count)`` (Python arithmetic for static layouts, ``searchsorted`` for
x-bounds); all of them end in the same gather (:func:`from_ranges`).

All constructors accept ``length``: the number of real points when a dataset was padded to a
common length by :func:`jaxsubset.pack` (points at and past ``length`` are never selected).

Called eagerly (every argument concrete, no ``length``), the constructors pad the data to a
bucket of lengths and run one compiled program per bucket (see "eager buckets" at the end);
the ``Subsets`` are exactly the unpadded call's.

The rules, in one place (``stream`` resolves with the same functions):

- ``closed``: :func:`sides`; bins are ``numpy.histogram``'s (half-open, the last closed).
- Bounds are compared exactly, as order-preserving integer keys of x's dtype (:func:`keys`):
  integer bounds of any size, float bounds on integer x (rounded toward the side that keeps
  the count), subnormal floats (which XLA on CPU flushes in float comparisons), -0.0 == 0.0.
- Index ranges are clipped to ``[0, N)``, never shifted; integer bounds are clipped on the
  host before they meet the index dtype, so nothing wraps in JAX's 32-bit mode.
- One x-width window per point follows pandas' row rule for ties; ``at - width`` saturates.
"""

import dataclasses
import functools
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from . import _bucket
from ._axis import (
    bound_array as _bound_array,
    concrete_bound as _concrete_bound,
    exact_array as _exact_array,
    int_limits as _int_limits,
    period_edges,
    time_kind,
    window_width as _window_width,
    x_to_ns,
)
from ._checks import argument_guard
from ._statistics._registry import backend
from ._subsets import Subsets, _gather, read_rows
from ._typing import Array, ArrayLike, Int
from ._validate import (
    as_int_bounds,
    as_x,
    as_xy,
    check_closed,
    check_sorted_x,
    index_dtype,
    is_traced,
    static_int,
    traced_array,
)


# A bound in x's key space (see "the ONE resolver"): ``(key, below, above)``, each flag an
# array or None where it cannot be set.
Key = tuple[Array, Any, Any]


@functools.partial(jax.tree_util.register_dataclass)
@dataclasses.dataclass(frozen=True)
class Ranges:
    """Contiguous index ranges ``[start, start + count)``: what every subset request reduces to.

    The functions of :mod:`jaxsubset.ranges` return it; :func:`jaxsubset.gather` turns it into
    padded :class:`Subsets`, and the O(N) statistics consume it without padding.

    Attributes:
        start: ``(*batch)`` int, first index of each range, in ``[0, N]``.
        count: ``(*batch)`` int, number of points of each range (``start + count <= N``).
        max_count: static Python int or None: an upper bound on every ``count`` known without
            looking at data (chunks, sliding windows), used as the default capacity.

    Example:
        >>> import jax.numpy as jnp, jaxsubset
        >>> r = jaxsubset.ranges.chunks(jnp.arange(7.0), 3)
        >>> r.start.tolist(), r.count.tolist(), r.max_count
        ([0, 3, 5], [3, 2, 2], 3)
    """

    start: Int[Array, "*batch"]
    count: Int[Array, "*batch"]
    max_count: int | None = dataclasses.field(default=None, metadata=dict(static=True))

    @property
    def stop(self) -> Int[Array, "*batch"]:
        """``(*batch)`` int, one past the last index of each range."""
        return self.start + self.count

    @property
    def batch_shape(self) -> tuple[int, ...]:
        """The shape of the batch of ranges, ``()`` for a single range."""
        return tuple(self.count.shape)


def gather(x: ArrayLike, y: ArrayLike, ranges: Ranges, *, capacity: int | None = None) -> Subsets:
    """Read index ranges into padded :class:`Subsets` (one gather, never a shifted window).

    Args:
        x: ``(N,)`` sample positions.
        y: ``(N, *channels)`` values.
        ranges: :class:`Ranges` on these arrays (from :mod:`jaxsubset.ranges`).
        capacity: static Python int, the padded length; default ``ranges.max_count``.

    Returns:
        :class:`Subsets` with the ranges' batch shape.

    Example:
        >>> import jax.numpy as jnp, jaxsubset
        >>> x = jnp.arange(10.0)
        >>> r = jaxsubset.ranges.select(x, jnp.array([1.0, 7.5]), jnp.array([3.0, 20.0]))
        >>> jaxsubset.gather(x, x, r, capacity=4).x.tolist()
        [[1.0, 2.0, 0.0, 0.0], [8.0, 9.0, 0.0, 0.0]]
    """
    func = "gather"
    if not isinstance(ranges, Ranges):
        raise TypeError(f"{func}: `ranges` must be a jaxsubset.Ranges, got {type(ranges).__name__}")
    if capacity is None:
        if ranges.max_count is None:
            raise TypeError(
                f"{func}: `capacity` is required for ranges whose size depends on data "
                "(see jaxsubset.required_capacity)"
            )
        capacity = max(ranges.max_count, 1)
        slots = _bucket.bucket(capacity, _bucket.MIN_K)  # a derived capacity: few programs
    else:
        slots = None
    capacity = static_int(capacity, "capacity", func)
    x, y = as_xy(x, y, func)
    start, count = ranges.start, ranges.count
    idt = np.dtype(index_dtype())
    concrete = not is_traced(start) and not is_traced(count)
    if concrete and any(not np.can_cast(np.asarray(a).dtype, idt) for a in (start, count)):
        # user ranges wider than the index dtype (int64/uint64 in 32-bit mode): clipped
        # exactly on the host; `_gather` clips the others overflow-safely
        start, count = host_range(np.asarray(start), np.asarray(count), x.shape[0], func)
    if eager(None, x, y, start, count) and x.shape[0] > 0:
        return bucketed_gather(x, y, start, count, capacity, slots=slots)
    return _gather(x, y, start, count, capacity)


# ---------------------------------------------------------------------------- shared pieces
def _length(length: ArrayLike | None, n: int, func: str) -> Array:
    """The number of real points: ``len(x)`` or the traced ``length`` clipped to it."""
    if length is None:
        return jnp.asarray(n, index_dtype())
    length = as_int_bounds(length, "length", func)
    if length.ndim != 0:
        raise ValueError(f"{func}: `length` must be a scalar, got shape {tuple(length.shape)}")
    if not is_traced(length) and not 0 <= int(length) <= n:
        raise ValueError(f"{func}: `length` must be in [0, len(x)={n}], got {int(length)}")
    return jnp.clip(length.astype(index_dtype()), 0, n)


# ---------------------------------------------------------------------------- the ONE resolver
# Every x-bound becomes a key in x's own order-preserving integer key space (see `keys`),
# with two flags: `below` (the bound lies below every value x's dtype holds: count 0) and
# `above` (above every value: count N). A bound that x's dtype cannot represent is rounded
# toward the side that keeps the count exact: #{x < v} = #{x < ceil_X(v)} (side "left") and
# #{x <= v} = #{x <= floor_X(v)} (side "right"). Comparisons are then integer comparisons, so
# they are exact for int64/uint64 x beyond 2**53 and for subnormal floats (XLA on CPU flushes
# subnormals to zero in float comparisons; bit patterns are never flushed).
def sides(closed: str) -> tuple[str, str]:
    """``searchsorted`` sides for the lower and upper bound of a ``closed`` interval."""
    lo_side = "left" if closed in ("left", "both") else "right"
    hi_side = "right" if closed in ("right", "both") else "left"
    return lo_side, hi_side


def key_dtype(dtype: Any) -> np.dtype:
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return np.dtype(f"int{8 * dtype.itemsize}")
    return dtype


def keys(a: Any, xp: Any = jnp) -> Any:
    """Order-preserving integer keys of ``a`` (``xp`` is ``jnp`` or ``np``); ints unchanged.

    For floats: the bit pattern as a signed int, negative values' magnitude bits flipped so
    that the order of the keys is the order of the values, and -0.0 mapped to +0.0's key 0
    (they compare equal). Integer operations only: one cheap elementwise pass.
    """
    dtype = np.dtype(a.dtype)
    if dtype.kind != "f":
        return a
    kdt = key_dtype(dtype)
    info = np.iinfo(kdt)
    bits = jax.lax.bitcast_convert_type(a, kdt) if xp is jnp else np.asarray(a).view(kdt)
    bits = xp.where(bits == kdt.type(info.min), kdt.type(0), bits)  # -0.0 -> +0.0
    return xp.where(bits < 0, bits ^ kdt.type(info.max), bits)


def host_key(v: np.ndarray, xdt: np.dtype, side: str) -> tuple[np.ndarray, Any, Any]:
    """Concrete bound values (any numeric dtype, Python ints) -> ``(key, below, above)``, exact."""
    up = side == "left"
    if xdt.kind in "iu":
        lo, hi = _int_limits(xdt)
        if v.dtype.kind == "f":
            f = np.ceil(v) if up else np.floor(v)
            below = f < float(lo)  # lo is 0 or -2**k, hi + 1 is 2**k: exact as floats
            above = f >= float(hi + 1)
            return np.where(below | above, 0, f).astype(xdt), below, above
        if v.dtype.kind in "biu" and np.can_cast(v.dtype, xdt):
            return v.astype(xdt), None, None
        obj = v.astype(object) if v.dtype.kind == "b" else v
        below = np.asarray(obj < lo, bool)  # NumPy compares with Python ints exactly
        above = np.asarray(obj > hi, bool)
        key = np.where(below | above, 0, obj)
        return np.asarray(key).astype(xdt), below, above
    # float x; a bound beyond x's dtype (1e300 on float32 x) rounds to +-inf, which the
    # comparisons below correct exactly: no overflow warning (the suite turns them into errors)
    if v.dtype.kind == "O" or (v.dtype.kind in "iu" and v.dtype.itemsize >= 4):
        vo = v.astype(object)
        r = np.asarray([as_float(e) for e in vo.ravel()], np.float64).reshape(v.shape)
        with np.errstate(over="ignore"):
            r = r.astype(xdt)
        ro = r.astype(np.float64).astype(object)
        lt, gt = np.asarray(ro < vo, bool), np.asarray(ro > vo, bool)  # Python: exact
    else:
        with np.errstate(over="ignore"):
            r = v.astype(xdt)
        if v.dtype.kind == "f" and v.dtype.itemsize > xdt.itemsize:
            back = r.astype(v.dtype)
            lt, gt = back < v, back > v
        else:
            lt = gt = np.zeros(v.shape, bool)
    key = keys(r, np)
    key = key + lt.astype(key.dtype) if up else key - gt.astype(key.dtype)
    return key, None, None


def as_float(e: Any) -> float:
    """``float(e)``, and +-inf for an int beyond float64's range (``10**400``), as NumPy casts."""
    try:
        return float(e)
    except OverflowError:
        return float("inf") if e > 0 else float("-inf")


def traced_key(v: Array, xdt: np.dtype, side: str) -> Key:
    """A traced bound -> ``(key, below, above)`` with the rules of :func:`host_key`.

    Exact except that a float bound of another width than a float ``x`` is converted by XLA,
    which on CPU flushes subnormal inputs to zero.
    """
    up = side == "left"
    vdt = np.dtype(v.dtype)
    if xdt.kind in "iu":
        lo, hi = _int_limits(xdt)
        if vdt.kind == "f":
            f = jnp.ceil(v) if up else jnp.floor(v)
            below = f < float(lo)
            above = f >= float(hi + 1)
            return jnp.where(below | above, 0, f).astype(xdt), below, above
        if np.can_cast(vdt, xdt):
            return v.astype(xdt), None, None
        vlo, vhi = _int_limits(vdt if vdt.kind != "b" else np.uint8)
        # None where v's dtype holds no value below (above) x's dtype
        under = v < vdt.type(lo) if lo > vlo else None
        over = v > vdt.type(hi) if hi < vhi else None
        c = jnp.clip(v, vdt.type(max(lo, vlo)), vdt.type(min(hi, vhi)))
        return c.astype(xdt), under, over
    if vdt == xdt:
        return keys(v), None, None
    r = v.astype(xdt)
    if vdt.kind == "f":
        if vdt.itemsize <= xdt.itemsize:
            return keys(r), None, None
        kb, kv = keys(r.astype(vdt)), keys(v)
        lt, gt = kb < kv, kb > kv
    else:  # integers: exact when they fit the mantissa, else compare the rounded value back
        vlo, vhi = _int_limits(vdt if vdt.kind != "b" else np.uint8)
        if max(abs(vlo), vhi) < 2 ** (np.finfo(xdt).nmant + 1):
            return keys(r), None, None
        over = r >= float(vhi + 1)
        under = r < float(vlo)
        ri = jnp.where(over | under, 0, r).astype(vdt)
        lt = ~over & (under | (ri < v))
        gt = ~under & (over | (ri > v))
    key = keys(r)
    key = key + lt.astype(key.dtype) if up else key - gt.astype(key.dtype)
    return key, None, None


ANCHOR = 64  # sorted queries per exactly searched anchor
# eager windows over fewer points search their bounds with the plain search: the guided one
# compiles into a larger program (see BENCHMARKS.md, issue 14) for a run-time gain that a
# few calls of this size do not repay
GUIDED_EAGER = 1 << 21


def unkeys(k: Array, dtype: Any) -> Array:
    """The values whose :func:`keys` are ``k`` (``-0.0`` comes back as ``+0.0``)."""
    dtype = np.dtype(dtype)
    if dtype.kind != "f":
        return k
    info = np.iinfo(k.dtype)
    bits = jnp.where(k < 0, k ^ k.dtype.type(info.max), k)
    return jax.lax.bitcast_convert_type(bits, dtype)


def sorted_search(xk: Array, key: Array, side: str, dtype: Any) -> Array:
    """``searchsorted(xk, key, side)`` for SORTED ``key`` (one window per point): exact.

    Every ``ANCHOR``-th query (and the last) is searched in full; the answer of a query in
    between lies between its two anchors' answers (both arrays are sorted). It is guessed by
    interpolating the query between the keys at those answers, then VERIFIED with two
    comparisons; only queries whose guess fails are bisected between the bounds the check
    leaves (a loop that does not run when every guess holds, as on evenly spaced x). The
    interpolation is only a hint: the answer is the exact comparison's, for any sorted ``xk``.
    """
    n, q = xk.shape[0], key.shape[0]
    idt = index_dtype()
    m = -(-q // ANCHOR)
    qpos = np.minimum(np.arange(m + 1) * ANCHOR, q - 1)
    anchors = jnp.searchsorted(xk, key[qpos], side=side).astype(idt)
    kp = jnp.pad(key, (0, m * ANCHOR - q), mode="edge").reshape(m, ANCHOR)

    def below(i: Array) -> Array:  # xk[i] <= key ("right") / xk[i] < key ("left"): answer > i
        xi = xk[jnp.clip(i, 0, n - 1)]
        return (xi <= kp) if side == "right" else (xi < kp)

    # the anchors' answers bracket a query's answer; each side is checked (so a bound that is
    # out of order, e.g. a clipped one, costs a longer search, never a wrong answer)
    lo = anchors[:-1, None]
    hi = jnp.maximum(anchors[1:, None], lo)
    lo = jnp.where((lo == 0) | below(lo - 1), lo, 0)
    hi = jnp.where((hi == n) | ~below(hi), hi, n)

    # interpolated in value space (keys of floats are not linear across binades)
    fdt = jnp.result_type(float)  # a hint only: values far apart may round

    def value(k: Array) -> Array:
        return unkeys(k, dtype).astype(fdt)

    v_lo = value(xk[jnp.clip(lo, 0, n - 1)])
    d = value(kp) - v_lo
    span = value(xk[jnp.clip(hi - 1, 0, n - 1)]) - v_lo
    cnt = (hi - 1 - lo).astype(fdt)
    good = (span > 0) & (cnt > 0) & jnp.isfinite(d) & jnp.isfinite(span)
    r = jnp.where(good, jnp.clip(d * cnt / jnp.where(good, span, 1), 0, cnt + 1), 0)
    if side == "right":
        g = lo + jnp.where(d >= 0, jnp.floor(r).astype(idt) + 1, 0)
    else:
        g = lo + jnp.where(d > 0, jnp.ceil(r).astype(idt), 0)
    g = jnp.clip(g, lo, hi)
    left_ok = (g == lo) | below(g - 1)
    right_ok = (g == hi) | ~below(g)
    ok = left_ok & right_ok

    def fix() -> Array:
        b_lo = jnp.where(ok, g, jnp.where(left_ok, g + 1, lo))
        b_hi = jnp.where(ok, g, jnp.where(left_ok, hi, g - 1))

        def step(state: tuple[Array, Array]) -> tuple[Array, Array]:
            a, b = state
            mid = a + (b - a) // 2
            go = below(mid) & (a < b)
            return jnp.where(go, mid + 1, a), jnp.where(go | (a >= b), b, mid)

        out, _ = jax.lax.while_loop(lambda st: jnp.any(st[0] < st[1]), step, (b_lo, b_hi))
        return out

    g = jax.lax.cond(jnp.all(ok), lambda: g, fix)
    return g.reshape(-1)[:q]


def searchsorted_keys(x: Array, key: Array, side: str, sorted_keys: bool = False) -> Array:
    """``searchsorted(x, v, side)`` with ``v`` given as its key: a binary search in key space.

    Few bounds (``K log2 N < N``): only the probed points of ``x`` are converted to keys, so a
    search costs O(log N) per bound and no pass over ``x``. Many bounds (one window per
    point): the keys of ``x`` once (one elementwise pass) and ``jnp.searchsorted`` on them,
    which is cheaper than converting at every probe. Both are the same exact comparison.
    """
    idt = index_dtype()
    n = x.shape[0]
    lo = jnp.zeros(key.shape, idt)
    hi = jnp.full(key.shape, n, idt)
    if n == 0:
        return lo
    if np.dtype(x.dtype).kind != "f" or key.size * int(n).bit_length() >= n:
        # sorted queries on the CPU: anchors and verified guesses (its cond/while_loop are
        # cheap there); elsewhere jnp.searchsorted's fixed-trip parallel bisection
        if sorted_keys and key.ndim == 1 and key.size > 2 * ANCHOR and backend() == "cpu":
            return sorted_search(keys(x), key, side, x.dtype)
        return jnp.searchsorted(keys(x), key, side=side).astype(idt)

    def body(_: Any, carry: tuple[Array, Array]) -> tuple[Array, Array]:
        lo, hi = carry
        active = lo < hi
        mid = lo + (hi - lo) // 2
        k = keys(x[jnp.minimum(mid, n - 1)])
        go = (k < key) if side == "left" else (k <= key)
        return jnp.where(active & go, mid + 1, lo), jnp.where(active & ~go, mid, hi)

    lo, _ = jax.lax.fori_loop(0, int(n).bit_length(), body, (lo, hi))
    return lo


def _count(x: Array, bound: Key, side: str, n_real: Array, sorted_keys: bool = False) -> Array:
    """``#{x < v}`` (side "left") or ``#{x <= v}`` ("right") among the first ``n_real`` points.

    ``sorted_keys``: the bounds are known to be sorted (one window per point of sorted x).
    """
    key, below, above = bound
    i = jnp.minimum(searchsorted_keys(x, key, side, sorted_keys), n_real)
    if above is not None:
        i = jnp.where(jnp.asarray(above), n_real, i)
    if below is not None:
        i = jnp.where(jnp.asarray(below), 0, i)
    return i


def resolve_bound(value: Any, name: str, x: Array, func: str, time: str | None, side: str) -> Key:
    """Any bound (concrete or traced, dates on a time axis) -> x's key space for ``side``."""
    xdt = np.dtype(x.dtype)
    if is_traced(value):
        return traced_key(traced_array(value), xdt, side)
    # device_put: no program per shape, unlike jnp.asarray
    host = host_key(_concrete_bound(value, name, x, func, time), xdt, side)
    return map_key(host, lambda a: jax.device_put(np.asarray(a)))


def map_key(bound: tuple[Any, Any, Any], f: Callable[[Any], Array]) -> Key:
    """``(key, below, above)`` with ``f`` applied to each part (a None flag stays None)."""
    key, below, above = bound
    return f(key), None if below is None else f(below), None if above is None else f(above)


def int_width(w: Any, xdt: np.dtype, side: str, traced: bool) -> tuple[Any, Any, Any]:
    """An x-width on integer x as ``(w_wrap, t, all_below)``: ``a - w`` is below every value of
    x's dtype exactly where ``a < t`` (or everywhere if ``all_below``), and otherwise equals
    ``a - w_wrap`` in wrapping integer arithmetic (the true difference fits, so it is exact).

    A fractional width on integers: ``x > a - w`` iff ``x > a - ceil(w)`` and ``x >= a - w``
    iff ``x >= a - floor(w)``, so the lower bound's side decides: "right" (``x > a - w``) uses
    ``ceil(w)``, "left" ``floor(w)``.
    """
    lo, hi = _int_limits(xdt)
    if not traced:
        wrap, t, big = host_width(np.asarray(w), xdt, side)
        return jnp.asarray(wrap), jnp.asarray(t), jnp.asarray(big) if np.any(big) else None
    wdt = np.dtype(w.dtype)
    if wdt.kind == "f":
        f = jnp.ceil(w) if side == "right" else jnp.floor(w)
        big = jnp.clip(f, 0.0, None) >= float(hi + 1)  # wider than x's dtype: clipped to its max
        w = jnp.where(big, xdt.type(hi), jnp.where(big, 0.0, jnp.clip(f, 0.0, None)).astype(xdt))
    else:
        w = jnp.clip(w, 0, None)
        if not np.can_cast(wdt, xdt):
            w = jnp.minimum(w, wdt.type(min(hi, _int_limits(wdt)[1]))).astype(xdt)
        w = w.astype(xdt)
    return w, (xdt.type(lo) + w).astype(xdt), None


def host_width(w: np.ndarray, xdt: np.dtype, side: str) -> tuple[Any, Any, Any]:
    """:func:`int_width` for a concrete width, in NumPy (also what ``stream`` uses)."""
    lo, hi = _int_limits(xdt)
    bits = 8 * xdt.itemsize
    if w.dtype.kind == "f":
        w = np.ceil(w) if side == "right" else np.floor(w)
        big = np.asarray(w > float(hi - lo))
        w = np.where(big, 0, w)
        w = np.vectorize(int, otypes=[object])(w) if w.size else w.astype(object)
    else:
        w = w.astype(object)
        big = np.asarray(w > hi - lo, bool)
        w = np.where(big, 0, w)
    wrap = np.asarray(w % (1 << bits), object)
    if xdt.kind == "i":
        wrap = np.where(wrap > hi, wrap - (1 << bits), wrap)
    t = np.asarray(lo + w, object)
    return np.asarray(wrap).astype(xdt), np.asarray(t).astype(xdt), big


def host_lower(a: np.ndarray, width: np.ndarray, xdt: np.dtype, side: str) -> tuple[Any, Any]:
    """NumPy twin of :func:`lower_bounds` for anchors ``a`` in x's dtype: ``(key, below)``."""
    if xdt.kind in "iu":
        wrap, t, big = host_width(width, xdt, side)
        below = (a < t) | big
        with np.errstate(over="ignore"):
            diff = a - wrap  # wraps only where `below` (there the true difference does not fit)
        return np.where(below, xdt.type(_int_limits(xdt)[0]), diff), below
    wdt = np.dtype(jax.dtypes.canonicalize_dtype(width.dtype))
    d = np.dtype(jnp.promote_types(xdt, wdt))
    key, _, _ = host_key(a.astype(d) - width.astype(d), xdt, side)
    return key, None


def lower_bounds(a: Array, width: Any, x: Array, side: str, func: str, time: str | None) -> Key:
    """The key of ``a - width`` for anchors ``a`` already in x's dtype (saturating, exact)."""
    xdt = np.dtype(x.dtype)
    traced = is_traced(width)
    if traced:
        width = traced_array(width)
    else:
        width = _concrete_bound(width, "width", x, func, time, width=True)
        if np.any(width < 0):
            raise ValueError(f"{func}: `width` must be >= 0, got {width.tolist()!r}")
    if xdt.kind in "iu":
        wrap, t, big = int_width(width, xdt, side, traced)
        below = a < t
        if big is not None:
            below = below | big
        key = jnp.where(below, xdt.type(_int_limits(xdt)[0]), a - wrap)
        return key, below, None
    wdt = np.dtype(jax.dtypes.canonicalize_dtype(width.dtype))
    d = jnp.promote_types(xdt, wdt)
    w = width.astype(d) if traced else jnp.asarray(width.astype(d))
    return traced_key(a.astype(d) - w, xdt, side)


def host_index(value: Any, name: str, func: str, lo: int, hi: int, xp: Any = jnp) -> Array:
    """Concrete integer index bounds clipped EXACTLY to ``[lo, hi]`` on the host, then cast.

    Python ints, int64 and uint64 of any size keep their meaning (``2**40`` past the end of
    the data is clipped to the end, never wrapped) in both JAX modes. Traced bounds are cast
    to the index dtype (they already hold its values). ``xp=np``: a NumPy result.
    """
    if is_traced(value):
        return as_int_bounds(value, name, func).astype(index_dtype())
    v = np.asarray(value)
    ok = v.dtype.kind in "iu" or (
        v.dtype == object and all(isinstance(e, int) for e in v.ravel().tolist())
    )
    if not ok or v.dtype.kind == "b":
        raise TypeError(f"{func}: `{name}` must hold integers, got dtype {v.dtype}")
    if v.dtype.kind == "i" or (v.dtype.kind == "u" and v.dtype.itemsize < 8):
        c = np.clip(v.astype(np.int64), lo, hi)
    else:
        c = np.vectorize(lambda e: min(max(int(e), lo), hi), otypes=[np.int64])(v)
    return xp.asarray(np.asarray(c, np.int64).astype(index_dtype()))


def from_ranges(
    x: ArrayLike,
    y: ArrayLike,
    start: ArrayLike,
    count: ArrayLike,
    *,
    capacity: int,
) -> Subsets:
    """Subsets from explicit index ranges ``[start, start + count)``: arbitrary segments.

    Every other constructor ends here. Ranges are clipped to the data: a range that runs past
    the end is shortened (never shifted), a negative count is empty.

    Args:
        x: ``(N,)`` sample positions.
        y: ``(N, *channels)`` values.
        start: ``(*batch)`` int, first index of each range (traced is fine).
        count: ``(*batch)`` int, number of points of each range (traced is fine).
        capacity: static Python int, the padded length ``L`` of every subset.

    Returns:
        :class:`Subsets` with batch shape ``broadcast(start, count).shape``.

    Example:
        >>> import jax.numpy as jnp, jaxsubset
        >>> x = jnp.arange(6.0)
        >>> s = jaxsubset.from_ranges(x, x, jnp.array([1, 4]), jnp.array([2, 5]), capacity=4)
        >>> s.count.tolist(), s.sum().tolist()
        ([2, 2], [3.0, 9.0])
    """
    func = "from_ranges"
    capacity = static_int(capacity, "capacity", func)
    x, y = as_xy(x, y, func)
    start, count = host_range(start, count, x.shape[0], func)
    if eager(None, x, y, start, count) and x.shape[0] > 0:
        return bucketed_gather(x, y, start, count, capacity)
    return _gather(x, y, start, count, capacity)


def host_range(start: Any, count: Any, n: int, func: str) -> tuple[Array, Array]:
    """``[start, start + count)`` clipped to ``[0, n)`` (never shifted), exact on the host.

    Both concrete: the clipped range in Python ints. Otherwise each is cast to the index
    dtype (a concrete one clipped to it first) and ``_gather`` clips overflow-safely.
    """
    if not is_traced(start) and not is_traced(count):
        s = np.asarray(start)
        c = np.asarray(count)
        for a, nm in ((s, "start"), (c, "count")):
            if a.dtype.kind not in "iu" and not (
                a.dtype == object and all(isinstance(e, int) for e in a.ravel().tolist())
            ):
                raise TypeError(f"{func}: `{nm}` must hold integers, got dtype {a.dtype}")
        shape = np.broadcast_shapes(s.shape, c.shape)
        # 1-D object arrays of Python ints: a ufunc on a 0-d one returns a scalar, and the
        # next one would convert a Python int beyond int64 (2**70, uint64 2**63) to C long
        s, c = (np.broadcast_to(a.astype(object), shape).reshape(-1) for a in (s, c))
        stop = np.asarray(s + np.maximum(c, 0), object)
        s0 = np.asarray(np.minimum(np.maximum(s, 0), n), object)
        s1 = np.asarray(np.minimum(np.maximum(stop, s0), n), object)
        idt = index_dtype()
        return (  # device_put: no program per shape, unlike jnp.asarray
            jax.device_put(s0.astype(np.int64).astype(idt).reshape(shape)),
            jax.device_put((s1 - s0).astype(np.int64).astype(idt).reshape(shape)),
        )
    big = int(np.iinfo(index_dtype()).max)
    return (
        host_index(start, "start", func, -big, big),
        host_index(count, "count", func, -big, big),
    )


def to_subsets(x: Array, y: Array, r: Ranges, capacity: int) -> Subsets:
    return _gather(x, y, r.start, r.count, capacity)


# ---------------------------------------------------------------------------- index ranges
def isolate_ranges(
    x: ArrayLike,
    start: ArrayLike | None,
    stop: ArrayLike | None,
    *,
    length: ArrayLike | None = None,
    _func: str = "ranges.isolate",
) -> Ranges:
    """Index ranges ``[start:stop]`` with Python slice semantics (see :func:`jaxsubset.isolate`).

    Example:
        >>> import jax.numpy as jnp, jaxsubset
        >>> r = jaxsubset.ranges.isolate(jnp.arange(10.0), -3, None)
        >>> r.start.tolist(), r.count.tolist()
        (7, 3)
    """
    x = as_x(x, _func)
    n = x.shape[0]
    if eager(length, x, start, stop):
        return host_isolate(start, stop, n, _func)
    n_real = _length(length, x.shape[0], _func)

    def norm(bound: Any, name: str, default: Array) -> Array:
        if bound is None:
            return default
        # [-N, N] holds every distinct slice bound: beyond it Python clips to the ends anyway
        b = host_index(bound, name, _func, -n, n)
        return jnp.clip(jnp.where(b < 0, b + n_real, b), 0, n_real)

    i0 = norm(start, "start", jnp.zeros((), index_dtype()))
    i1 = norm(stop, "stop", n_real)
    i0, i1 = jnp.broadcast_arrays(i0, i1)
    return Ranges(i0, jnp.maximum(i1 - i0, 0))


def host_isolate(start: Any, stop: Any, n: int, func: str) -> Ranges:
    """:func:`isolate_ranges` of concrete bounds, on the host (no program per shape)."""
    idt = np.dtype(index_dtype())

    def norm(bound: Any, name: str, default: int) -> np.ndarray:
        if bound is None:
            return np.asarray(default, np.int64)
        b = np.asarray(host_index(bound, name, func, -n, n, xp=np), np.int64)
        return np.clip(np.where(b < 0, b + n, b), 0, n)

    i0, i1 = np.broadcast_arrays(norm(start, "start", 0), norm(stop, "stop", n))
    return Ranges(
        jax.device_put(i0.astype(idt)), jax.device_put(np.maximum(i1 - i0, 0).astype(idt))
    )


def isolate(
    x: ArrayLike,
    y: ArrayLike,
    start: ArrayLike | None,
    stop: ArrayLike | None,
    *,
    capacity: int,
    length: ArrayLike | None = None,
) -> Subsets:
    """Subsets ``x[start:stop]``, ``y[start:stop]`` with Python slice semantics and traced bounds.

    Negative bounds count from the end, bounds past either end are clipped, ``stop <= start``
    is empty, ``None`` means the start/end of the data. Never a shifted window: a range near the
    end is shorter, not moved (unlike ``lax.dynamic_slice``).

    Args:
        x: ``(N,)`` sample positions.
        y: ``(N, *channels)`` values.
        start: scalar or ``(*batch)`` int (or ``None``), first index.
        stop: scalar or ``(*batch)`` int (or ``None``), one past the last index.
        capacity: static Python int, the padded length of every subset.
        length: optional traced number of real points (see :func:`jaxsubset.pack`).

    Returns:
        :class:`Subsets` with batch shape ``broadcast(start, stop).shape``.

    Example:
        >>> import jax, jax.numpy as jnp, jaxsubset
        >>> x = jnp.linspace(0.0, 1.0, 11)
        >>> f = jax.jit(lambda i, j: jaxsubset.isolate(x, x, i, j, capacity=4).x)
        >>> f(2, 5).tolist()
        [0.2, 0.3, 0.4, 0.0]
        >>> f(-2, 100).tolist()  # the last two points; not a window shifted back
        [0.9, 1.0, 0.0, 0.0]
    """
    capacity = static_int(capacity, "capacity", "isolate")
    x, y = as_xy(x, y, "isolate")
    r = isolate_ranges(x, start, stop, length=length, _func="isolate")
    if eager(length, x, y, r) and x.shape[0] > 0:  # the ranges: scalar work, no N-sized op
        return bucketed_gather(x, y, r.start, r.count, capacity)
    return to_subsets(x, y, r, capacity)


def chunk_ranges(
    x: ArrayLike,
    n: int | None = None,
    *,
    size: int | None = None,
    length: ArrayLike | None = None,
    _func: str = "ranges.chunks",
) -> Ranges:
    """Index ranges of ``n`` ``array_split`` pieces or pieces of ``size`` (see :func:`chunks`).

    Example:
        >>> import jax.numpy as jnp, jaxsubset
        >>> jaxsubset.ranges.chunks(jnp.arange(7.0), size=3).count.tolist()
        [3, 3, 1]
    """
    n, size = chunk_args(n, size, _func)
    x = as_x(x, _func)
    big_n = x.shape[0]
    idt = index_dtype()
    if n is not None:
        bound = -(-big_n // n)
        if length is None:
            q, r = divmod(big_n, n)
            i = np.arange(n)
            start_h, count_h = i * q + np.minimum(i, r), q + (i < r)
            if not is_traced(x):  # cast on the host: no program per number of pieces
                return Ranges(
                    jax.device_put(start_h.astype(idt)), jax.device_put(count_h.astype(idt)), bound
                )
            return Ranges(jnp.asarray(start_h, idt), jnp.asarray(count_h, idt), bound)
        m = _length(length, big_n, _func)
        qj, rj = m // n, m % n
        ij = jnp.arange(n, dtype=idt)
        return Ranges(ij * qj + jnp.minimum(ij, rj), qj + (ij < rj).astype(idt), bound)
    assert size is not None  # for mypy: `chunk_args` gives exactly one
    k = -(-big_n // size)
    m = _length(length, big_n, _func)
    start = jnp.arange(k, dtype=idt) * size
    return Ranges(start, jnp.clip(m - start, 0, size), size)


def chunk_args(n: Any, size: Any, func: str) -> tuple[int | None, int | None]:
    """Exactly one of ``n`` and ``size``, as a checked static int."""
    if (n is None) == (size is None):
        raise TypeError(
            f"{func}: pass exactly one of `n` (number of pieces) and `size`, got "
            f"n={n!r}, size={size!r}"
        )
    if n is not None:
        return static_int(n, "n", func), None
    return None, static_int(size, "size", func)


def bucketed_chunks(x: Array, y: Array, n: Any, size: Any) -> Subsets:
    """Eager :func:`chunks`: the pieces of the real N, gathered at the bucket's capacity."""
    n, size = chunk_args(n, size, "chunks")
    big_n = x.shape[0]
    nb = _bucket.bucket(big_n)
    if n is not None:
        q, rem = divmod(big_n, n)
        i = np.arange(n)
        start, count = i * q + np.minimum(i, rem), q + (i < rem)
        cap = max(-(-big_n // n), 1)
        slots = _bucket.bucket(max(-(-nb // n), 1), _bucket.MIN_K)  # nearby n share it
        return bucketed_gather(x, y, start, count, cap, slots=slots)
    assert size is not None
    start = np.arange(-(-nb // size)) * size  # the bucket's pieces; the real ones first
    count = np.clip(big_n - start, 0, size)
    return bucketed_gather(x, y, start, count, size, k=-(-big_n // size))


def chunks(
    x: ArrayLike,
    y: ArrayLike,
    n: int | None = None,
    *,
    size: int | None = None,
    length: ArrayLike | None = None,
) -> Subsets:
    """The whole dataset in ``n`` pieces (``numpy.array_split``) or in pieces of ``size``.

    With ``n``: the first ``N % n`` pieces have ``N // n + 1`` points, the rest ``N // n``
    (``n > N`` gives empty pieces, as ``array_split`` does). With ``size``: ``ceil(N / size)``
    pieces of ``size`` points, the last one shorter. The capacity is derived (the longest
    piece), so nothing can overflow.

    Args:
        x: ``(N,)`` sample positions.
        y: ``(N, *channels)`` values.
        n: static Python int, the number of pieces (exactly one of ``n`` and ``size``).
        size: static Python int, the number of points per piece.
        length: optional traced number of real points (see :func:`jaxsubset.pack`); the pieces
            then split ``length`` points, and the number of pieces/capacity follow from ``N``.

    Returns:
        :class:`Subsets` with batch shape ``(n,)`` (or ``(ceil(N / size),)``).

    Example:
        >>> import jax.numpy as jnp, jaxsubset
        >>> s = jaxsubset.chunks(jnp.arange(7.0), jnp.arange(7.0), 3)
        >>> s.count.tolist(), s.start.tolist(), s.capacity
        ([3, 2, 2], [0, 3, 5], 3)
    """
    x, y = as_xy(x, y, "chunks")
    if eager(length, x, y) and x.shape[0] > 0:
        return bucketed_chunks(x, y, n, size)
    r = chunk_ranges(x, n, size=size, length=length, _func="chunks")
    big_n = x.shape[0]
    if length is None and big_n > 0:
        # Without a traced `length` the pieces are consecutive with static sizes: n1 pieces
        # of s1 points, then n2 of s2 < s1. Reshaping is a free view under jit and its all-True
        # mask folds away, where the gather costs a copy and masked reductions (the same
        # Subsets, bit for bit; the speed-up is in BENCHMARKS.md).
        if n is not None:
            q, rem = divmod(big_n, n)
            layout = (rem, q + 1, n - rem, q) if rem else (n, q, 0, q)
        else:
            assert size is not None  # for mypy: chunk_ranges checked that exactly one is given
            layout = (big_n // size, size, int(big_n % size > 0), big_n % size)
        return split(x, y, r.start, r.count, layout)
    assert r.max_count is not None  # for mypy: chunk ranges always have a bound
    return to_subsets(x, y, r, max(r.max_count, 1))


@functools.partial(jax.jit, static_argnames=("layout",))
def split(
    x: Array, y: Array, start: Array, count: Array, layout: tuple[int, int, int, int]
) -> Subsets:
    """Consecutive pieces by reshape: ``n1`` of ``s1`` points, then ``n2`` of ``s2`` (padded)."""
    n1, s1, n2, s2 = layout

    def pieces(a: Array) -> Array:
        head = a[: n1 * s1].reshape((n1, s1) + a.shape[1:])
        if n2 == 0:
            return head
        tail = a[n1 * s1 :].reshape((n2, s2) + a.shape[1:])
        tail = jnp.pad(tail, [(0, 0), (0, s1 - s2)] + [(0, 0)] * (a.ndim - 1))
        return jnp.concatenate([head, tail])

    # From static sizes only (no large literal): for equal pieces a broadcast True that XLA
    # folds out of every masked reduction.
    mask = jnp.ones((n1 + n2, s1), bool)
    if n2:
        mask = mask.at[n1:].set(jnp.arange(s1) < s2)
    return Subsets(x=pieces(x), y=pieces(y), mask=mask, start=start, count=count, _view=True)


def sliding_ranges(
    x: ArrayLike,
    size: int,
    *,
    step: int = 1,
    length: ArrayLike | None = None,
    _func: str = "ranges.sliding",
) -> Ranges:
    """Index ranges of fixed-size sliding windows (see :func:`jaxsubset.sliding`).

    Example:
        >>> import jax.numpy as jnp, jaxsubset
        >>> jaxsubset.ranges.sliding(jnp.arange(6.0), 4).start.tolist()
        [0, 1, 2]
    """
    x = as_x(x, _func)
    size = static_int(size, "size", _func)
    step = static_int(step, "step", _func)
    big_n = x.shape[0]
    if size > big_n:
        raise ValueError(f"{_func}: `size` must be <= len(x)={big_n}, got {size}")
    k = (big_n - size) // step + 1
    idt = index_dtype()
    if eager(length, x):  # on the host: no program per number of windows
        start_h = (np.arange(k) * step).astype(idt)
        return Ranges(jax.device_put(start_h), jax.device_put(np.full((k,), size, idt)), size)
    start = jnp.arange(k, dtype=idt) * step
    if length is None:
        count = jnp.full((k,), size, idt)
    else:
        m = _length(length, big_n, _func)
        count = jnp.where(start + size <= m, size, 0).astype(idt)
    return Ranges(start, count, size)


def sliding(
    x: ArrayLike,
    y: ArrayLike,
    size: int,
    *,
    step: int = 1,
    length: ArrayLike | None = None,
) -> Subsets:
    """Fixed-size sliding windows: ``numpy.lib.stride_tricks.sliding_window_view(y, size)[::step]``.

    ``K = (N - size) // step + 1`` full windows, window ``k`` starting at ``k * step``.

    Args:
        x: ``(N,)`` sample positions.
        y: ``(N, *channels)`` values.
        size: static Python int, points per window (``1 <= size <= N``).
        step: static Python int, points between window starts.
        length: optional traced number of real points (see :func:`jaxsubset.pack`); windows
            not entirely inside it are empty.

    Returns:
        :class:`Subsets` with batch shape ``(K,)`` and capacity ``size``.

    Example:
        >>> import jax.numpy as jnp, jaxsubset
        >>> s = jaxsubset.sliding(jnp.arange(6.0), jnp.arange(6.0), 3, step=2)
        >>> s.start.tolist(), s.mean().tolist()
        ([0, 2], [1.0, 3.0])
    """
    x, y = as_xy(x, y, "sliding")
    if eager(length, x, y) and x.shape[0] > 0:
        size = static_int(size, "size", "sliding")
        step = static_int(step, "step", "sliding")
        big_n = x.shape[0]
        if size > big_n:
            raise ValueError(f"sliding: `size` must be <= len(x)={big_n}, got {size}")
        # the bucket's windows, the real (full) ones first; those past N are cut off
        start = np.arange((_bucket.bucket(big_n) - size) // step + 1) * step
        count = np.where(start + size <= big_n, size, 0)
        return bucketed_gather(x, y, start, count, size, k=(big_n - size) // step + 1)
    r = sliding_ranges(x, size, step=step, length=length, _func="sliding")
    assert r.max_count is not None  # for mypy: sliding ranges carry their size
    if length is None:
        return full_windows(x, y, r.start, r.count, r.max_count)
    return to_subsets(x, y, r, r.max_count)


@functools.partial(jax.jit, static_argnames=("size",))
def full_windows(x: Array, y: Array, start: Array, count: Array, size: int) -> Subsets:
    """Windows known to be full and inside the data: the gather without masking.

    Every window holds ``size`` points from ``start <= N - size``, so the mask is a constant
    all-True that XLA folds out of the reductions and of a user's ``where(mask, ...)``, and
    no slot needs zeroing (BENCHMARKS.md measures it against the masked gather).
    """
    xs, ys = read_rows((x, y), start, size)  # one row read per window
    return Subsets(x=xs, y=ys, mask=jnp.ones(xs.shape, bool), start=start, count=count)


# ---------------------------------------------------------------------------- x-value ranges
def xrange(x: Array, lo: Key, hi: Key, closed: str, n_real: Array) -> Ranges:
    """The points with ``lo <= x < hi`` (``closed`` decides the ends), bounds as resolver keys."""
    lo_side, hi_side = sides(closed)
    i0 = _count(x, lo, lo_side, n_real)
    i1 = _count(x, hi, hi_side, n_real)
    i0, i1 = jnp.broadcast_arrays(i0, i1)
    return Ranges(i0, jnp.maximum(i1 - i0, 0))


def select_ranges(
    x: ArrayLike,
    lo: ArrayLike,
    hi: ArrayLike,
    *,
    closed: str = "left",
    length: ArrayLike | None = None,
    _func: str = "ranges.select",
    _time: str | None = None,
) -> Ranges:
    """Index ranges of the points with ``lo <= x < hi`` (by default; see :func:`select`).

    Example:
        >>> import jax.numpy as jnp, jaxsubset
        >>> r = jaxsubset.ranges.select(jnp.arange(10.0), 2.0, 5.0, closed="both")
        >>> r.start.tolist(), r.count.tolist()
        (2, 4)
    """
    closed = check_closed(closed, _func)
    tk = _time or time_kind(x)
    x = as_x(x, _func)
    check_sorted_x(x, _func)
    lo_side, hi_side = sides(closed)
    lo_key = resolve_bound(lo, "lo", x, _func, tk, lo_side)
    hi_key = resolve_bound(hi, "hi", x, _func, tk, hi_side)
    check_broadcast(lo_key, hi_key, _func)
    if eager(length, x, lo, hi) and x.shape[0] > 0:
        batch, lo_key, hi_key = padded_bounds(lo_key, hi_key)
        xp, _, m = _padded_xy(x, None)
        return cut_ranges(_padded_xrange(xp, lo_key, hi_key, m, closed=closed), batch)
    return xrange(x, lo_key, hi_key, closed, _length(length, x.shape[0], _func))


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
    x, y = as_xy(x, y, "select")
    if eager(length, x, y, lo, hi) and x.shape[0] > 0:
        closed = check_closed(closed, "select")
        check_sorted_x(x, "select")
        lo_side, hi_side = sides(closed)
        lo_key = resolve_bound(lo, "lo", x, "select", tk, lo_side)
        hi_key = resolve_bound(hi, "hi", x, "select", tk, hi_side)
        check_broadcast(lo_key, hi_key, "select")
        batch, lo_key, hi_key = padded_bounds(lo_key, hi_key)
        xp, yp, m = _padded_xy(x, y)
        out = _padded_select(xp, yp, lo_key, hi_key, m, closed=closed, capacity=capacity)
        if not batch:
            return out
        return cut_subsets(out, int(np.prod(batch)), batch, capacity)
    r = select_ranges(x, lo, hi, closed=closed, length=length, _func="select", _time=tk)
    return to_subsets(x, y, r, capacity)


def rolling_ranges(
    x: ArrayLike,
    width: ArrayLike | None = None,
    *,
    at: ArrayLike | None = None,
    closed: str = "right",
    center: bool = False,
    before: ArrayLike | None = None,
    after: ArrayLike | None = None,
    length: ArrayLike | None = None,
    _func: str = "ranges.rolling",
    _time: str | None = None,
    _guided: bool = True,
    _checked: bool = False,
) -> Ranges:
    """Index ranges of x-width windows at each anchor (see :func:`jaxsubset.rolling`).

    ``_guided``: one window per row may use the guided search of sorted bounds
    (:func:`sorted_search`); False: the plain one (a smaller program, the same answers).
    ``_checked``: the widths were checked on the host before they were traced (the eager
    programs per bucket), so no run-time check is compiled in.

    Example:
        >>> import jax.numpy as jnp, jaxsubset
        >>> x = jnp.array([0.0, 1.0, 1.5, 4.0])
        >>> jaxsubset.ranges.rolling(x, 2.0).start.tolist()
        [0, 0, 0, 3]
        >>> r = jaxsubset.ranges.rolling(x, 2.0, center=True)  # x[i] - 1 < x <= x[i] + 1
        >>> r.start.tolist(), r.count.tolist()
        ([0, 1, 1, 3], [2, 2, 2, 1])
    """
    closed = check_closed(closed, _func)
    tk = _time or time_kind(x)
    x = as_x(x, _func)
    check_sorted_x(x, _func)
    if not _checked:
        width, before, after = (
            guard_width(w, name, _func) if is_traced(w) else w
            for w, name in ((width, "width"), (before, "before"), (after, "after"))
        )
    if eager(length, x, width, at, before, after) and x.shape[0] > 0:
        args = rolling_args(x, width, at, center, before, after, _func, tk)
        if args is not None:
            widths, at_p, batch = args
            xp, _, m = _padded_xy(x, None)
            r = _padded_ranges(xp, widths, at_p, m, closed=closed, center=bool(center), func=_func)
            return cut_ranges(r, batch)
    n_real = _length(length, x.shape[0], _func)
    lo_side, hi_side = sides(closed)
    before, after, mode = window_widths(width, before, after, center, closed, x, _func, tk)
    if mode != "trailing":  # before/after already exact (durations as ns)
        if at is None:
            return rolling_rows(
                x, before, closed, n_real, _func, None, after=after, mode=mode, guided=_guided
            )
        if not is_traced(at):
            at = _concrete_bound(at, "at", x, _func, tk)
        hi = anchored_upper(x, at, after, hi_side, _func, None)
        lo = anchored_lower(x, at, before, lo_side, _func, None)
        return xrange(x, lo, hi, closed, n_real)
    width = before
    if at is None:
        return rolling_rows(x, width, closed, n_real, _func, tk, guided=_guided)
    hi = resolve_bound(at, "at", x, _func, tk, hi_side)
    lo = anchored_lower(x, at, width, lo_side, _func, tk)
    return xrange(x, lo, hi, closed, n_real)


def guard_width(value: Any, name: str, func: str) -> Array:
    """A traced width (``width``, ``before``, ``after``) guarded by a run-time check: >= 0.

    Concrete widths are checked on the host (``must be >= 0``, NaN refused); a traced one
    cannot be, and a negative or NaN width would give each row's own point as its window
    (a window never starts past its row), silently. The check (:func:`error_if`) costs only
    its predicate until it fires and raises the host's message, naming the first bad value.
    """
    w = traced_array(value)
    if not jnp.issubdtype(w.dtype, jnp.number):
        return w  # bools and the like: refused with the host's error further on
    return argument_guard(w, ~(w >= 0), func, name, ">= 0")


def rolling_rows(
    x: Array,
    width: Any,
    closed: str,
    n_real: Array,
    func: str,
    time: str | None,
    *,
    after: Any = None,
    mode: str = "trailing",
    guided: bool = True,
) -> Ranges:
    """One window per row, pandas' rule for ties (``calculate_variable_window_bounds``).

    Trailing windows (``mode="trailing"``, and ``after == 0``): row ``i``'s window ends AT row
    ``i``: at ``i + 1`` for ``closed`` "right"/"both" (later rows tied with it are not in it),
    at the first row tied with it for "left"/"neither" (no row with ``x == x[i]``). Centred
    windows and ``after > 0`` end by value, as pandas' centred windows: at
    ``searchsorted(x, x[i] + after, side)``, so every row tied with ``x[i]`` (and with the
    end) is in or out together. Every window starts at
    ``searchsorted(x, x[i] - width, side)``, at most at ``i`` (pandas: a window never starts
    past its own row) and at most at its end; rows at and past ``length`` are empty.
    """
    lo_side, hi_side = sides(closed)
    idt = index_dtype()
    rows = jnp.arange(x.shape[0], dtype=idt)

    def row_end() -> Array:
        if hi_side == "right":
            return rows + 1
        return _count(x, (keys(x), None, None), "left", n_real, sorted_keys=guided)

    if mode == "trailing":
        end = row_end()
    else:
        end = _count(x, upper_bounds(x, after, x, hi_side, func), hi_side, n_real, guided)
        if mode == "after" and (is_traced(after) or np.any(np.asarray(after) == 0)):
            end = jnp.where(jnp.asarray(after == 0), row_end(), end)
    end = jnp.minimum(end, n_real)
    lower = lower_bounds(x, width, x, lo_side, func, time)
    start = _count(x, lower, lo_side, n_real, sorted_keys=guided)
    start = jnp.minimum(jnp.minimum(start, rows), end)
    count = jnp.where(rows < n_real, end - start, 0)
    return Ranges(start, count)


def anchored_lower(x: Array, at: Any, width: Any, side: str, func: str, time: str | None) -> Key:
    """The key of ``at - width`` for explicit anchors: exact integer arithmetic on integer x
    (both concrete: Python ints on the host; an integer difference below x's dtype counts
    nothing), else the difference in the promoted float dtype, rounded toward ``side``."""
    xdt = np.dtype(x.dtype)
    if not is_traced(at) and not is_traced(width):
        ah = _concrete_bound(at, "at", x, func, time)
        w = _concrete_bound(width, "width", x, func, time, width=True)
        if np.any(w < 0):
            raise ValueError(f"{func}: `width` must be >= 0, got {w.tolist()!r}")
        return map_key(host_anchored_lower(ah, w, xdt, side), jnp.asarray)
    a = (
        traced_array(at)
        if is_traced(at)
        else _exact_array(_concrete_bound(at, "at", x, func, time), "at", func)
    )
    if is_traced(width):
        width = traced_array(width)
    else:
        w = _concrete_bound(width, "width", x, func, time, width=True)
        if np.any(w < 0):
            raise ValueError(f"{func}: `width` must be >= 0, got {w.tolist()!r}")
        width = w
    wkind = np.dtype(width.dtype).kind
    if xdt.kind in "iu" and a.dtype.kind in "iu" and wkind in "iuO":
        ak, below, above = traced_key(a, xdt, "left")  # anchors of another integer dtype, clipped
        key, b2, _ = lower_bounds(ak, width, x, side, func, None)
        below = b2 if below is None else below | b2
        if above is not None:
            below = below & ~above
        return key, below, None
    wj = width if is_traced(width) else _exact_array(np.asarray(width), "width", func)
    d = jnp.promote_types(xdt, jnp.promote_types(a.dtype, wj.dtype))
    if not jnp.issubdtype(d, jnp.floating):
        d = jnp.promote_types(d, jax.dtypes.canonicalize_dtype(np.float64))
    return traced_key(a.astype(d) - wj.astype(d), xdt, side)


def host_anchored_lower(
    a: np.ndarray, w: np.ndarray, xdt: np.dtype, side: str
) -> tuple[np.ndarray, Any, Any]:
    """Concrete ``at - width`` as ``(key, below, above)``: Python-int exact when both are
    integers, else in the promoted float dtype (``stream`` resolves with this too)."""
    if a.dtype.kind in "iuO" and w.dtype.kind in "iuO":
        lo = np.asarray(a.astype(object) - w.astype(object), object)
    else:
        d = np.dtype(jnp.promote_types(xdt, jnp.promote_types(canon_np(a), canon_np(w))))
        if d.kind != "f":
            d = np.dtype(jax.dtypes.canonicalize_dtype(np.float64))
        lo = a.astype(d) - w.astype(d)
    return host_key(lo, xdt, side)


def canon_np(v: np.ndarray) -> np.dtype:
    if v.dtype == object:
        return np.dtype(jax.dtypes.canonicalize_dtype(np.int64))
    return np.dtype(jax.dtypes.canonicalize_dtype(v.dtype))


# ------------------------------------------------------------- centred and asymmetric windows
def upper_bounds(a: Array, width: Any, x: Array, side: str, func: str, dtype: Any = None) -> Key:
    """The key of ``a + width`` for anchors ``a`` (saturating, exact): the mirror of
    :func:`lower_bounds`. ``width`` is traced or a concrete NumPy array already converted.

    On integer x: ``x <= a + w`` iff ``x <= a + floor(w)`` and ``x < a + w`` iff
    ``x < a + ceil(w)``, so the rounding of a fractional width is the lower bound's with the
    other side; ``a + w`` is above x's dtype exactly where ``a > hi - w`` (``hi - w`` is the
    bitwise NOT of ``lo + w`` in two's complement and unsigned alike), else the wrapping sum is
    the true one. ``dtype``: the anchors' integer dtype when it is wider than x's (the sum is
    then taken in it and clipped into x's key space).
    """
    xdt = np.dtype(x.dtype)
    traced = is_traced(width)
    adt = xdt if dtype is None else np.dtype(dtype)
    if adt.kind in "iu":
        wrap, t, big = int_width(width, adt, "left" if side == "right" else "right", traced)
        above = a > ~t
        if big is not None:
            above = above | big
        key = jnp.where(above, adt.type(_int_limits(adt)[1]), a + wrap)
        if adt == xdt:
            return key, None, above
        k2, below, above2 = traced_key(key, xdt, side)
        return k2, below, above | above2 if above2 is not None else above
    wdt = np.dtype(jax.dtypes.canonicalize_dtype(width.dtype))
    d = jnp.promote_types(jnp.promote_types(xdt, a.dtype), wdt)
    if not jnp.issubdtype(d, jnp.floating):
        d = jnp.promote_types(d, jax.dtypes.canonicalize_dtype(np.float64))
    w = width.astype(d) if traced else jnp.asarray(width.astype(d))
    return traced_key(a.astype(d) + w, xdt, side)


def anchored_upper(x: Array, at: Any, after: Any, side: str, func: str, time: str | None) -> Key:
    """The key of ``at + after`` for explicit anchors (exact integers, else the promoted float
    dtype rounded toward ``side``); ``after`` already converted (:func:`window_widths`)."""
    xdt = np.dtype(x.dtype)
    if not is_traced(at) and not is_traced(after):
        ah = _concrete_bound(at, "at", x, func, time)
        return map_key(host_anchored_upper(ah, np.asarray(after), xdt, side), jnp.asarray)
    a = (
        traced_array(at)
        if is_traced(at)
        else _exact_array(_concrete_bound(at, "at", x, func, time), "at", func)
    )
    if not is_traced(after):
        after = _exact_array(np.asarray(after), "after", func)
    if xdt.kind in "iu" and a.dtype.kind in "iu" and np.dtype(after.dtype).kind in "iu":
        wide = None if np.can_cast(a.dtype, xdt) else a.dtype
        if wide is None:
            a = a.astype(xdt)
        return upper_bounds(a, after, x, side, func, dtype=wide)
    d = jnp.promote_types(xdt, jnp.promote_types(a.dtype, after.dtype))
    if not jnp.issubdtype(d, jnp.floating):
        d = jnp.promote_types(d, jax.dtypes.canonicalize_dtype(np.float64))
    return traced_key(a.astype(d) + after.astype(d), xdt, side)


def host_anchored_upper(
    a: np.ndarray, w: np.ndarray, xdt: np.dtype, side: str
) -> tuple[np.ndarray, Any, Any]:
    """Concrete ``at + after`` as ``(key, below, above)``: Python-int exact when both are
    integers, else in the promoted float dtype (``stream`` resolves with this too)."""
    if a.dtype.kind in "iuO" and w.dtype.kind in "iuO":
        hi = np.asarray(a.astype(object) + w.astype(object), object)
    else:
        d = np.dtype(jnp.promote_types(xdt, jnp.promote_types(canon_np(a), canon_np(w))))
        if d.kind != "f":
            d = np.dtype(jax.dtypes.canonicalize_dtype(np.float64))
        hi = a.astype(d) + w.astype(d)
    return host_key(hi, xdt, side)


def host_upper(a: np.ndarray, width: np.ndarray, xdt: np.dtype, side: str) -> tuple[Any, Any]:
    """NumPy twin of :func:`upper_bounds` for anchors ``a`` in x's dtype: ``(key, above)``
    (``above``: ``a + width`` lies above every value of x's integer dtype; None for floats)."""
    if xdt.kind in "iu":
        wrap, t, big = host_width(width, xdt, "left" if side == "right" else "right")
        above = (a > ~t) | big
        with np.errstate(over="ignore"):
            total = a + wrap  # wraps only where `above` (there the true sum does not fit)
        return np.where(above, xdt.type(_int_limits(xdt)[1]), total), above
    wdt = np.dtype(jax.dtypes.canonicalize_dtype(width.dtype))
    d = np.dtype(jnp.promote_types(xdt, wdt))
    if d.kind != "f":
        d = np.dtype(jax.dtypes.canonicalize_dtype(np.float64))
    key, _, _ = host_key(a.astype(d) + width.astype(d), xdt, side)
    return key, None


def window_widths(
    width: Any,
    before: Any,
    after: Any,
    center: Any,
    closed: str,
    x: Array | np.ndarray,
    func: str,
    time: str | None,
) -> tuple[Any, Any, str]:
    """``(before, after, mode)``: the window ``a - before < x <= a + after`` (``closed="right"``).

    ``mode`` is ``"trailing"`` (``width`` alone: ``before=width, after=0``), ``"center"``
    (``before = after = width / 2``) or ``"after"`` (``before``/``after`` given). Centred on
    integer x (time axes included) an odd width is halved exactly: a bound ``a +- w/2`` lies
    between two integers, so each side becomes the integer that keeps the same points
    (``x > a - w/2`` is ``x > a - ceil(w/2)``, ``x >= a - w/2`` is ``x >= a - floor(w/2)``).
    Only ``x``'s dtype is read (``stream`` passes an empty NumPy array of it).
    """
    if not isinstance(center, bool | np.bool_):
        raise TypeError(f"{func}: `center` must be True or False, got {center!r}")
    given = before is not None or after is not None
    if width is not None and given:
        raise ValueError(
            f"{func}: give `width` or `before`/`after`, not both (`width=w` is `before=w, after=0`)"
        )
    if center and given:
        raise ValueError(f"{func}: `center=True` centres `width`; it takes no `before`/`after`")
    if width is None and not given:
        raise TypeError(f"{func}: a window needs `width` (or `before`/`after`)")
    if not center and not given:  # the resolver's trailing path converts and checks it
        return width, None, "trailing"
    if given:
        zero = np.asarray(0)
        b = zero if before is None else _window_width(before, "before", x, func, time)
        f = zero if after is None else _window_width(after, "after", x, func, time)
        return b, f, "after"
    w = _window_width(width, "width", x, func, time)
    lo_side, hi_side = sides(closed)
    if np.dtype(w.dtype).kind in "iuO" and np.dtype(x.dtype).kind in "iu":
        if is_traced(w):
            odd = w & 1
            b = w // 2 + odd if lo_side == "right" else w // 2
            return b, w // 2 + odd if hi_side == "left" else w // 2, "center"
        wo = w.astype(object)
        b = wo // 2 + (wo % 2) * (lo_side == "right")
        f = wo // 2 + (wo % 2) * (hi_side == "left")
        return np.asarray(b, object), np.asarray(f, object), "center"
    if is_traced(w):
        half = w / 2
    else:
        half = np.asarray(w, np.float64 if w.dtype.kind in "iuO" else w.dtype) / 2
    return half, half, "center"


def rolling(
    x: ArrayLike,
    y: ArrayLike,
    width: ArrayLike | None = None,
    *,
    capacity: int,
    at: ArrayLike | None = None,
    closed: str = "right",
    center: bool = False,
    before: ArrayLike | None = None,
    after: ArrayLike | None = None,
    length: ArrayLike | None = None,
) -> Subsets:
    """x-width windows at each point (or at ``at``): pandas offset-window semantics.

    The window anchored at ``a`` holds the points with ``a - before < x <= a + after`` for the
    default ``closed="right"``; ``"left"`` is ``a - before <= x < a + after``, ``"both"``
    ``a - before <= x <= a + after``, ``"neither"`` ``a - before < x < a + after``. ``width``
    alone is ``before=width, after=0`` (``a - width < x <= a``, as
    ``pandas.Series.rolling("5s")``); ``center=True`` is ``before = after = width / 2``, as
    ``pandas.Series.rolling("5s", center=True)`` (on integer x, time axes included, an odd
    width is halved exactly: ``x > a - 2.5`` keeps ``x >= a - 2``). ``a - before`` and
    ``a + after`` saturate at the ends of x's dtype (exact integer arithmetic on integer and
    time axes, never a wrap).

    One window per point (``at=None``) follows pandas' rules for tied x: a trailing window
    (``after`` 0) ends AT its own row (later rows tied with it are not in it); a centred
    window or one with ``after > 0`` ends by value (every row tied with ``x[i] + after`` is in
    or out together, as pandas' centred windows), and every window starts at most at its own
    row. With ``at``, every window is exactly the interval above.

    Args:
        x: ``(N,)`` sorted sample positions.
        y: ``(N, *channels)`` values.
        width: scalar or array broadcastable against the anchors, window width in x units
            (>= 0; traced is fine: a negative or NaN traced width, ``before`` or ``after``
            raises at run time, see :func:`jaxsubset.checked`); on a datetime64 axis a
            duration (``"7D"``, ``timedelta64``).
        capacity: static Python int, the padded length of every window.
        at: ``(*batch)`` anchor positions; default ``x`` itself (one window per point).
        closed: which ends are included (see above).
        center: static bool, centre ``width`` on the anchor (pandas' ``center=True``).
        before: instead of ``width``: the extent below the anchor (>= 0, traced is fine;
            default 0 when ``after`` is given).
        after: the extent above the anchor (>= 0, traced is fine; default 0).
        length: optional traced number of real points (see :func:`jaxsubset.pack`).

    Returns:
        :class:`Subsets` with the anchors' batch shape (``(N,)`` by default).

    Raises:
        ValueError: if concrete ``x`` is unsorted or holds NaN (see :func:`select`).

    Example:
        >>> import jax.numpy as jnp, jaxsubset
        >>> x = jnp.array([0.0, 1.0, 1.5, 4.0])
        >>> jaxsubset.rolling(x, x, 2.0, capacity=4).count.tolist()
        [1, 2, 3, 1]
        >>> jaxsubset.rolling(x, x, before=1.0, after=0.5, capacity=4).count.tolist()
        [1, 2, 2, 1]
    """
    capacity = static_int(capacity, "capacity", "rolling")
    tk = time_kind(x)
    x, y = as_xy(x, y, "rolling")
    if eager(length, x, y, width, at, before, after) and x.shape[0] > 0:
        s = bucketed_rolling(x, y, width, at, closed, center, before, after, capacity, tk)
        if s is not None:
            return s
    r = rolling_ranges(
        x,
        width,
        at=at,
        closed=closed,
        center=center,
        before=before,
        after=after,
        length=length,
        _func="rolling",
        _time=tk,
    )
    return to_subsets(x, y, r, capacity)


def check_edges(edges: ArrayLike, func: str, x: Array | None = None) -> Array:
    """Validate bin edges: 1-D, at least two, non-decreasing and NaN-free when concrete."""
    # concrete edges checked on the host: jnp.asarray would compile a program per shape
    arr: Any = traced_array(edges) if is_traced(edges) else np.asarray(edges)
    if arr.ndim != 1 or arr.shape[0] < 2:
        raise ValueError(
            f"{func}: `edges` must be a 1-D array of at least 2 edges, got shape {tuple(arr.shape)}"
        )
    if not is_traced(edges):
        np_e = np.asarray(edges)
        # object: Python ints beyond int64 (exact bounds), compared as Python ints
        ints = np_e.dtype == object and all(
            isinstance(v, int | np.integer) for v in np_e.ravel().tolist()
        )
        if np_e.dtype.kind not in "biuf" and not ints:
            raise TypeError(f"{func}: `edges` must be numeric, got dtype {np_e.dtype}")
        if np_e.dtype.kind == "f" and np.isnan(np_e).any():
            raise ValueError(f"{func}: `edges` holds NaN")
        bad = np_e[1:] < np_e[:-1]
        if bad.any():
            i = int(np.argmax(bad))
            a, b = np_e[i : i + 2].tolist()  # Python numbers (also from object edges)
            raise ValueError(
                f"{func}: `edges` must increase monotonically, but edges[{i}]={a!r} > "
                f"edges[{i + 1}]={b!r}"
            )
    if x is not None:
        arr = arr.astype(jnp.promote_types(x.dtype, arr.dtype))
    # concrete edges stay on the host (the callers resolve them exactly): a device_put would
    # cast float64 edges to float32 in 32-bit mode, warning of overflow for 1e300
    return arr


def _period_edges(x: Any, period: str, length: Any, tk: str | None, func: str) -> np.ndarray:
    """The edges of a period (``"1M"``, ``"7D"``) over concrete dates ``x`` (int64 ns), as
    ``datetime64[ns]``: :func:`jaxsubset.bin_edges` over the real points."""
    if tk != "M":
        if is_traced(x):
            raise TypeError(
                f"{func}: `edges`={period!r} is a period, whose edges are computed on the host "
                "from concrete dates, but `x` is traced (inside jit/vmap): compute them outside "
                f"first, `edges = jaxsubset.to_ns(jaxsubset.bin_edges(dates, {period!r}))`"
            )
        raise TypeError(
            f"{func}: `edges`={period!r} is a string, but `x` is not a time axis: periods such "
            "as '1M', '1Y', '7D' need numpy.datetime64 x"
        )
    if is_traced(length):
        raise TypeError(f"{func}: a period's edges need a concrete `length`, got a traced one")
    # dates, or int64 ns already (``bins`` converts x before it asks for the ranges)
    xc = x_to_ns(x, func) if time_kind(x) == "M" else np.asarray(x)
    if length is not None:
        xc = xc[: int(np.asarray(length))]
    if xc.size == 0:
        raise ValueError(f"{func}: `x` is empty; a period's bins need at least one date")
    ns = period_edges(int(xc[0]), int(xc[-1]), period, f"{func}: `edges`={period!r}")
    return ns.view("datetime64[ns]")


def bin_ranges(
    x: ArrayLike,
    edges: ArrayLike,
    *,
    length: ArrayLike | None = None,
    _func: str = "ranges.bins",
    _time: str | None = None,
) -> Ranges:
    """Index ranges of ``numpy.histogram`` bins (see :func:`jaxsubset.bins`).

    Example:
        >>> import jax.numpy as jnp, jaxsubset
        >>> x = jnp.array([0.0, 1.0, 1.0, 2.0, 3.0])
        >>> jaxsubset.ranges.bins(x, jnp.array([0.0, 1.0, 3.0])).count.tolist()
        [1, 4]
    """
    tk = _time or time_kind(x)
    if isinstance(edges, str):
        edges = _period_edges(x, edges, length, tk, _func)
    x = as_x(x, _func)
    check_sorted_x(x, _func)
    e: np.ndarray | Array  # the concrete edges (exact, on the host) or the traced ones
    if not is_traced(edges):
        e = _concrete_bound(edges, "edges", x, _func, tk)
        check_edges(e, _func)
    else:
        e = traced_array(edges)
        check_edges(e, _func)
    if eager(length, x, e) and x.shape[0] > 0:
        lk, lst, nb = padded_edges(np.asarray(e), x, _func)
        xp, _, m = _padded_xy(x, None)
        return cut_ranges(_padded_bin_ranges(xp, lk, lst, nb, m), (int(e.shape[0]) - 1,))
    n_real = _length(length, x.shape[0], _func)
    # edge e_i opens bin i (x >= e_i) and closes bin i - 1 (x < e_i); the last edge closes the
    # last bin inclusively (x <= e_B), as numpy.histogram and scipy's binned_statistic
    below_edge = _count(x, resolve_bound(e, "edges", x, _func, None, "left"), "left", n_real)
    last = _count(x, resolve_bound(e[-1:], "edges", x, _func, None, "right"), "right", n_real)
    left = below_edge[:-1]
    right = jnp.concatenate([below_edge[1:-1], last])
    return Ranges(left, jnp.maximum(right - left, 0))


def bins(
    x: ArrayLike,
    y: ArrayLike,
    edges: ArrayLike,
    *,
    capacity: int,
    length: ArrayLike | None = None,
) -> Subsets:
    """One subset per bin, with ``numpy.histogram`` edges: ``[e_i, e_{i+1})``, the last closed.

    Args:
        x: ``(N,)`` sorted sample positions.
        y: ``(N, *channels)`` values.
        edges: ``(B + 1,)`` non-decreasing bin edges (values may be traced; B is static),
            or on a time axis a period (``"1M"``, ``"1Q"``, ``"1Y"``, ``"7D"``, ``"12h"``):
            pandas ``resample``'s bins, the edges of :func:`jaxsubset.bin_edges` computed
            on the host from concrete dates.
        capacity: static Python int, the padded length of every bin.
        length: optional traced number of real points (see :func:`jaxsubset.pack`).

    Returns:
        :class:`Subsets` with batch shape ``(B,)``.

    Raises:
        ValueError: if concrete ``x`` is unsorted or holds NaN, or concrete ``edges`` decrease.

    Example:
        >>> import jax.numpy as jnp, jaxsubset
        >>> x = jnp.array([0.0, 1.0, 1.0, 2.0, 3.0])
        >>> jaxsubset.bins(x, x, jnp.array([0.0, 1.0, 3.0]), capacity=4).count.tolist()
        [1, 4]
    """
    capacity = static_int(capacity, "capacity", "bins")
    tk = time_kind(x)
    x, y = as_xy(x, y, "bins")
    if eager(length, x, y, edges) and x.shape[0] > 0:
        return bucketed_bins(x, y, edges, capacity, tk)
    r = bin_ranges(x, edges, length=length, _func="bins", _time=tk)
    return to_subsets(x, y, r, capacity)


def bucketed_bins(x: Array, y: Array, edges: Any, capacity: int, tk: str | None) -> Subsets:
    """Eager :func:`bins`: N and the number of bins padded (edges repeat the last one)."""
    func = "bins"
    check_sorted_x(x, func)
    if isinstance(edges, str):  # a period ("1M", "7D"): its edges from the concrete dates
        edges = _period_edges(x, edges, None, tk, func)
    raw = _concrete_bound(edges, "edges", x, func, tk)
    check_edges(raw, func)
    left, last, nb = padded_edges(raw, x, func)
    xp, yp, m = _padded_xy(x, y)
    out = _padded_bins(xp, yp, left, last, nb, m, capacity=capacity)
    nbins = raw.shape[0] - 1
    return cut_subsets(out, nbins, (nbins,), capacity)


def padded_edges(raw: np.ndarray, x: Array, func: str) -> tuple[Key, Key, Array]:
    """Concrete edges (already converted and checked) as padded keys: ``(left, last, nbins)``.

    The extra edges repeat the last one: their bins are empty and cut off.
    """
    left = resolve_bound(raw, "edges", x, func, None, "left")
    last = resolve_bound(raw[-1:], "edges", x, func, None, "right")
    nbins = raw.shape[0] - 1
    size = _bucket.bucket(nbins, _bucket.MIN_K) + 1
    left = map_key(left, lambda a: _bucket.pad(a, size, fill=np.asarray(a)[-1]))
    return left, last, jnp.asarray(nbins, index_dtype())


def nearest_impl(x: Array, values: Array, key: Key, n_real: Array) -> Array:
    """The first index of the sample nearest to each value (``n_real >= 1``).

    ``hi`` is the first sample ``>= v`` (exact, in key space): past the end the last sample,
    before the start the first, else the nearer of ``hi - 1`` and ``hi`` (ties to the lower).
    """
    hi = _count(x, key, "left", n_real)
    last = n_real - 1
    h = jnp.clip(hi, 0, last)
    lo = jnp.clip(hi - 1, 0, last)
    d = jnp.promote_types(x.dtype, values.dtype)
    if not jnp.issubdtype(d, jnp.inexact):
        d = jnp.promote_types(d, jax.dtypes.canonicalize_dtype(np.float64))
    v = values.astype(d)
    d_lo = v - x[lo].astype(d)
    d_hi = x[h].astype(d) - v
    best = jnp.where(hi >= n_real, last, jnp.where((hi <= 0) | (d_hi < d_lo), h, lo))
    best = jnp.where(hi <= 0, 0, best)
    # With duplicate x values, ties go to the FIRST sample holding the nearest value.
    return _count(x, (keys(x[best]), None, None), "left", n_real)


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
    n_real = jnp.maximum(_length(length, x.shape[0], func), 1)
    key = resolve_bound(values, "values", x, func, tk, "left")
    if is_traced(values):
        vals = traced_array(values)
    else:
        # only values between two samples use their distances: integers clipped to x's range
        # (those beyond it snap to an end by `key` alone), so no value wraps in 32-bit mode
        v = _concrete_bound(values, "values", x, func, tk)
        if v.dtype.kind in "biuO":
            lo, hi = _int_limits(x.dtype) if x.dtype.kind in "iu" else (-(2**53), 2**53)
            v = np.vectorize(lambda e: min(max(int(e), lo), hi), otypes=[np.int64])(v)
            v = v.astype(x.dtype if x.dtype.kind in "iu" else np.float64)
        vals = jax.device_put(v.astype(np.result_type(v.dtype, x.dtype)))  # no program
        if eager(length, x):  # one program per bucket of N and of the number of values
            batch, _, key = padded_bounds(key, key)
            if batch:
                vals = _bucket.pad(np.asarray(vals).reshape(-1), key[0].shape[0], fill=0)
            xp, _, m = _padded_xy(x, None)
            i = np.asarray(_padded_nearest(xp, vals, key, m))
            return jax.device_put(i.reshape(-1)[: int(np.prod(batch))].reshape(batch))
    return nearest_impl(x, vals, key, n_real)


_padded_nearest = jax.jit(nearest_impl)


# ---------------------------------------------------------------------------- eager buckets
# Called outside `jit` (every argument concrete, no `length`), the constructors pad x with its
# last value (still sorted) and y with zeros to `_bucket.bucket(N)` rows and run ONE jitted
# program per bucket of shapes: the ranges are resolved with the traced `length=N`, so no
# padding row is in any range and the gather never reads one, into a number of subsets and a
# capacity that depend only on the bucket; the Subsets are then cut back to the real number of
# subsets and capacity. Every field (values, mask, start, count) is the unbucketed call's.


def eager(length: Any, *args: Any) -> bool:
    """Whether a constructor call is bucketed: bucketing on, no ``length``, all concrete."""
    return _bucket.enabled() and length is None and not is_traced(args)


def _padded_xy(x: Array, y: Array | None) -> tuple[Array, Any, Array]:
    """``x`` (padded with its last value), ``y`` (with zeros) at ``bucket(N)`` rows, and N."""
    n = x.shape[0]
    size = _bucket.bucket(n)
    last = np.asarray(x)[-1] if _bucket.on_host(x) else x[-1]
    yp = None if y is None else _bucket.pad(y, size)
    return _bucket.pad(x, size, fill=last), yp, jnp.asarray(n, index_dtype())


def k_bucket(k: int, n: int) -> int:
    """The bucket of ``k`` subsets (N's buckets when there is one per point)."""
    return _bucket.bucket(k, _bucket.MIN_N if k == n else _bucket.MIN_K)


def cut(a: Array, k: int, batch: tuple[int, ...], cap: int | None) -> Array:
    """Rows ``[:k]`` (and slots ``[:cap]``) of a padded field, reshaped to ``batch``."""
    if _bucket.on_host(a):  # on the host: no program per shape
        h = np.asarray(a)[:k]
        h = h if cap is None else h[:, :cap]
        return jax.device_put(h.reshape(batch + h.shape[1:]))
    a = a[:k] if cap is None else a[:k, :cap]
    return a.reshape(batch + a.shape[1:])


def cut_subsets(s: Subsets, k: int, batch: tuple[int, ...], cap: int) -> Subsets:
    """The first ``k`` subsets of ``s`` with ``cap`` slots, in the batch shape ``batch``."""
    return Subsets(
        x=cut(s.x, k, batch, cap),
        y=cut(s.y, k, batch, cap),
        mask=cut(s.mask, k, batch, cap),
        start=cut(s.start, k, batch, None),
        count=cut(s.count, k, batch, None),
    )


@functools.partial(jax.jit, static_argnames=("capacity",))
def _padded_gather(
    x: Array, y: Array, start: Array, count: Array, n: Array, *, capacity: int
) -> Subsets:
    return _gather(x, y, start, count, capacity, length=n)


def bucketed_gather(
    x: Array,
    y: Array,
    start: Any,
    count: Any,
    capacity: int,
    *,
    k: int | None = None,
    slots: int | None = None,
) -> Subsets:
    """Concrete ranges gathered by :func:`_padded_gather` on padded ``x``/``y``.

    ``start``/``count`` broadcast to the batch shape; ``k``: keep only the first ``k`` of a
    1-D batch (ranges computed for the bucket); ``slots``: gather into this many slots
    (>= ``capacity``, a capacity of the bucket), then cut to ``capacity``.
    """
    idt = np.dtype(index_dtype())
    s, c = np.broadcast_arrays(np.asarray(start), np.asarray(count))
    batch = s.shape if k is None else (k,)
    k = s.size if k is None else k
    s, c = s.reshape(-1).astype(idt), c.reshape(-1).astype(idt)
    kb = k_bucket(s.shape[0], x.shape[0])
    xp, yp, n = _padded_xy(x, y)
    out = _padded_gather(
        xp, yp, _bucket.pad(s, kb), _bucket.pad(c, kb), n, capacity=slots or capacity
    )
    return cut_subsets(out, k, batch, capacity)


@functools.partial(jax.jit, static_argnames=("closed", "capacity"))
def _padded_select(
    x: Array, y: Array, lo: Key, hi: Key, n: Array, *, closed: str, capacity: int
) -> Subsets:
    r = xrange(x, lo, hi, closed, n)
    return _gather(x, y, r.start, r.count, capacity, length=n)


def padded_bin_ranges(
    x: Array, left: Key, last: Key, nbins: Array, n: Array
) -> tuple[Array, Array]:
    """:func:`bin_ranges` with the edges padded past the ``nbins`` real bins."""
    below_edge = _count(x, left, "left", n)
    closing = _count(x, last, "right", n)
    start = below_edge[:-1]
    bin_no = jnp.arange(start.shape[0], dtype=start.dtype)
    stop = jnp.where(bin_no == nbins - 1, closing, below_edge[1:])
    return start, jnp.maximum(stop - start, 0)


_padded_bin_ranges = jax.jit(padded_bin_ranges)


@functools.partial(jax.jit, static_argnames=("capacity",))
def _padded_bins(
    x: Array, y: Array, left: Key, last: Key, nbins: Array, n: Array, *, capacity: int
) -> Subsets:
    """:func:`padded_bin_ranges` and the gather."""
    start, count = padded_bin_ranges(x, left, last, nbins, n)
    return _gather(x, y, start, count, capacity, length=n)


@functools.partial(jax.jit, static_argnames=("closed",))
def _padded_xrange(x: Array, lo: Key, hi: Key, n: Array, *, closed: str) -> tuple[Array, Array]:
    r = xrange(x, lo, hi, closed, n)
    return r.start, r.count


def check_broadcast(lo: Key, hi: Key, func: str) -> None:
    """``lo`` and ``hi`` (resolved keys, concrete or traced) broadcast to one batch shape."""
    try:
        np.broadcast_shapes(np.shape(lo[0]), np.shape(hi[0]))
    except ValueError:
        raise ValueError(
            f"{func}: `lo` and `hi` must broadcast to one batch shape, got shapes "
            f"{np.shape(lo[0])} and {np.shape(hi[0])}"
        ) from None


def padded_bounds(lo: Key, hi: Key) -> tuple[tuple[int, ...], Key, Key]:
    """Concrete bound keys broadcast to their batch shape, flattened and padded to a bucket.

    Returns ``(batch, lo, hi)``; scalar bounds (batch ``()``) stay as they are (one
    program serves every scalar). The padding bounds repeat the first one; their ranges are
    cut off.
    """
    parts = [a for key in (lo, hi) for a in key if a is not None]
    batch = np.broadcast_shapes(*(np.shape(a) for a in parts))
    if not batch:
        return (), lo, hi
    k = int(np.prod(batch))
    size = _bucket.bucket(k, _bucket.MIN_K)

    def flat(a: Any) -> Array:
        h = np.broadcast_to(np.asarray(a), batch).reshape(-1)
        if k == 0:
            return jax.device_put(np.zeros((size,), h.dtype))
        return _bucket.pad(h, size, fill=h[0])

    return batch, map_key(lo, flat), map_key(hi, flat)


def cut_ranges(r: Any, batch: tuple[int, ...]) -> Ranges:
    """The first ``prod(batch)`` of padded ``(start, count)``, on the host, as ``Ranges``."""
    k = int(np.prod(batch))
    start, count = (np.asarray(a).reshape(-1)[:k].reshape(batch) for a in r)
    return Ranges(jax.device_put(start), jax.device_put(count))  # no program per shape


@functools.partial(jax.jit, static_argnames=("closed", "center", "capacity"))
def _padded_rolling(
    x: Array,
    y: Array,
    widths: dict,
    at: Any,
    n: Array,
    *,
    closed: str,
    center: bool,
    capacity: int,
) -> Subsets:
    r = rolling_ranges(
        x, **widths, at=at, closed=closed, center=center, length=n, _func="rolling", _checked=True
    )
    start, count = jnp.broadcast_arrays(r.start, r.count)
    return _gather(x, y, start.reshape(-1), count.reshape(-1), capacity, length=n)


def rolling_args(
    x: Array,
    width: Any,
    at: Any,
    center: Any,
    before: Any,
    after: Any,
    func: str,
    tk: str | None,
) -> tuple[dict[str, Any], Any, tuple[int, ...]] | None:
    """Concrete window arguments converted for one program per bucket, or None where not
    bucketed: ``(widths, at, batch)``, the anchors flattened and padded to ``bucket(K)``
    with their first value (``batch``: their shape, ``(N,)`` without anchors).

    Scalar widths are converted as :func:`jaxsubset.rolling_statistic` converts them; array
    widths are broadcast to the windows' batch shape (``(N,)`` without anchors) and padded
    with it, with zero widths (their windows are cut off). Not bucketed: an empty batch,
    a ``center`` that is not a bool, or widths that do not broadcast so (the unbucketed
    call raises, or broadcasts further).
    """
    widths: dict[str, Any] = {"width": width, "before": before, "after": after}
    if not isinstance(center, bool | np.bool_):
        return None
    xdt = np.dtype(x.dtype)
    arrays = []
    for name, w in widths.items():
        if w is not None:
            _window_width(w, name, x, func, tk)  # the resolver's own checks (>= 0, durations)
            if not traced_exactly(_concrete_bound(w, name, x, func, tk, width=True), xdt):
                return None
            widths[name] = _bound_array(w, name, x, func, tk, width=True)
            if np.ndim(widths[name]) != 0:
                arrays.append(name)
    n = x.shape[0]
    batch: tuple[int, ...] = (n,)
    if at is not None:
        if not traced_exactly(_concrete_bound(at, "at", x, func, tk), xdt):
            return None
        at = _bound_array(at, "at", x, func, tk)
        batch = tuple(at.shape)
    try:
        batch = np.broadcast_shapes(batch, *(np.shape(widths[k]) for k in arrays))
    except ValueError:
        return None
    if (at is None and batch != (n,)) or 0 in batch:
        return None
    k = int(np.prod(batch))
    size = _bucket.bucket(k, _bucket.MIN_K) if at is not None else _bucket.bucket(n)

    def flat(a: Any, fill: Any) -> Array:
        h = np.broadcast_to(np.asarray(a), batch).reshape(-1)
        return _bucket.pad(h, size, fill=h[0] if fill is None else fill)

    for name in arrays:
        widths[name] = flat(widths[name], 0)
    if at is not None:
        at = flat(at, None)
    return widths, at, batch


def traced_exactly(v: np.ndarray, xdt: np.dtype) -> bool:
    """Whether a concrete integer width or anchor keeps its meaning when the resolver sees it
    traced: it fits x's integer dtype (a traced width is clipped to it; the host resolver
    saturates wider ones exactly) or, on float x, float's exact integers; Python ints
    beyond int64 stay on the host."""
    if v.dtype == object:
        return False
    if v.dtype.kind not in "iu" or v.size == 0:
        return True
    if xdt.kind in "iu":
        lo, hi = _int_limits(xdt)
    else:
        hi = 2 ** (np.finfo(xdt).nmant + 1)
        lo = -hi
    return lo <= int(v.min()) and int(v.max()) <= hi


def bucketed_rolling(
    x: Array,
    y: Array,
    width: Any,
    at: Any,
    closed: str,
    center: Any,
    before: Any,
    after: Any,
    capacity: int,
    tk: str | None,
) -> Subsets | None:
    """An eager :func:`rolling` in one program per bucket, or None where it is not bucketed
    (see :func:`rolling_args`)."""
    func = "rolling"
    closed = check_closed(closed, func)
    check_sorted_x(x, func)
    args = rolling_args(x, width, at, center, before, after, func, tk)
    if args is None:
        return None
    widths, at, batch = args
    xp, yp, m = _padded_xy(x, y)
    out = _padded_rolling(
        xp, yp, widths, at, m, closed=closed, center=bool(center), capacity=capacity
    )
    return cut_subsets(out, int(np.prod(batch)), batch, capacity)


def bucketed_ranges(
    x: Array, widths: dict, at: Any, closed: str, center: bool, func: str
) -> Ranges:
    """The eager windows as one jitted resolver program per bucket of shapes (host results).

    ``widths`` and ``at`` already converted (:func:`rolling_args` or
    :func:`jaxsubset.rolling_statistic`). ``x`` is padded with its last value to
    ``bucket(N)`` (still sorted) and resolved with ``length=N``, so no padding point is
    inside a window; anchors are padded to ``bucket(K)``. ``x`` is checked here, as the
    resolver does eagerly.
    """
    check_sorted_x(x, func)
    n = x.shape[0]
    batch: tuple[int, ...] = (n,)
    if at is not None:
        batch = tuple(np.shape(at))
        flat = np.asarray(at).reshape(-1) if _bucket.on_host(at) else at.reshape(-1)
        if flat.shape[0] == 0:
            return rolling_ranges(x, **widths, at=at, closed=closed, center=center, _func=func)
        at = _bucket.pad(flat, _bucket.bucket(flat.shape[0], _bucket.MIN_K), fill=flat[0])
    xp, _, m = _padded_xy(x, None)
    r = _padded_ranges(xp, widths, at, m, closed=closed, center=center, func=func)
    return cut_ranges(r, batch)


@functools.partial(jax.jit, static_argnames=("closed", "center", "func"))
def _padded_ranges(
    x: Array, widths: dict, at: Any, n: Array, *, closed: str, center: bool, func: str
) -> tuple[Array, Array]:
    # the guided search of sorted bounds only where its run time pays for its compile time
    # in an eager call (the plain search gives the same answers)
    r = rolling_ranges(
        x, **widths, at=at, closed=closed, center=center, length=n, _func=func,
        _guided=x.shape[0] >= GUIDED_EAGER, _checked=True,
    )  # fmt: skip
    start, count = jnp.broadcast_arrays(r.start, r.count)
    return start.reshape(-1), count.reshape(-1)
