"""The ONE order-preserving key codec and the exact bound arithmetic on it.

Every x-bound becomes a key in x's own order-preserving integer key space (:func:`keys`), so
every comparison the resolver makes is an integer comparison: exact for int64/uint64 beyond
2**53, for subnormal floats (which XLA on CPU flushes in float comparisons) and for -0.0 == 0.0.
Each bound comes with two flags, ``(key, below, above)`` (:data:`Key`). ``host_*`` functions
are the NumPy forms of the traced ones, for concrete values (and for ``stream``'s planner).
"""

from collections.abc import Callable
from typing import Any, cast

import jax
import jax.numpy as jnp
import numpy as np

from .._core import (
    Array,
    concrete_bound as _concrete_bound,
    exact_array as _exact_array,
    int_limits as _int_limits,
    is_traced,
    traced_array,
)


# A bound in x's key space (see "the ONE resolver"): ``(key, below, above)``, each flag an
# array or None where it cannot be set.
Key = tuple[Array, Any, Any]


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


def unkeys(k: Array, dtype: Any) -> Array:
    """The values whose :func:`keys` are ``k`` (``-0.0`` comes back as ``+0.0``)."""
    dtype = np.dtype(dtype)
    if dtype.kind != "f":
        return k
    info = np.iinfo(k.dtype)
    bits = jnp.where(k < 0, k ^ k.dtype.type(info.max), k)
    return jax.lax.bitcast_convert_type(bits, dtype)


def host_key(
    v: np.ndarray, xdt: np.dtype, side: str, err: Any = None
) -> tuple[np.ndarray, Any, Any]:
    """Concrete bound values (any numeric dtype, Python ints) -> ``(key, below, above)``, exact.

    ``err``: float ``v`` stands for ``v + err`` (the exact error of a rounded sum, see
    :func:`sum_key`), which decides where ``v`` itself is a value of x's dtype.
    """
    up = side == "left"
    if xdt.kind in "iu":
        lo, hi = _int_limits(xdt)
        if v.dtype.kind == "f":
            f = np.ceil(v) if up else np.floor(v)
            if err is not None:  # an integer sum whose true value lies past it
                f = f + ((f == v) & (err > 0)) if up else f - ((f == v) & (err < 0))
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
        if err is not None:  # r == v: the error's sign says on which side the truth lies
            same = r.astype(v.dtype) == v
            lt, gt = lt | (same & (err > 0)), gt | (same & (err < 0))
    key = keys(r, np)
    key = key + lt.astype(key.dtype) if up else key - gt.astype(key.dtype)
    return key, None, None


def sum_key(a: Any, b: Any, xdt: np.dtype, side: str, xp: Any = jnp) -> Key:
    """The key of ``a + b`` (one float dtype; ``xp``: ``jnp``, or ``np`` on the host).

    A sum in a dtype narrower than float64 (float32 in JAX's 32-bit mode) is resolved as the
    exact sum: its rounding error (TwoSum, exact) decides the bound where the rounded sum is
    itself a value of x's dtype, so ``x - width`` keeps the digits 64-bit mode (and pandas,
    in float64) gives float32 operands, eagerly and under ``jit`` alike. float64 sums are
    rounded, as pandas rounds them.
    """
    s = a + b
    key_of: Callable[..., Any] = traced_key if xp is jnp else host_key
    if np.dtype(s.dtype).kind != "f" or np.dtype(s.dtype).itemsize >= 8:
        return key_of(s, xdt, side)
    z = s - a
    err = (a - (s - z)) + (b - z)  # a + b == s + err exactly (no overflow)
    return key_of(s, xdt, side, err)


def as_float(e: Any) -> float:
    """``float(e)``, and +-inf for an int beyond float64's range (``10**400``), as NumPy casts."""
    try:
        return float(e)
    except OverflowError:
        return float("inf") if e > 0 else float("-inf")


def traced_key(v: Array, xdt: np.dtype, side: str, err: Any = None) -> Key:
    """A traced bound -> ``(key, below, above)`` with the rules of :func:`host_key` (``err``
    as there).

    Exact except that a float bound of another width than a float ``x`` is converted by XLA,
    which on CPU flushes subnormal inputs to zero.
    """
    up = side == "left"
    vdt = np.dtype(v.dtype)
    if xdt.kind in "iu":
        lo, hi = _int_limits(xdt)
        if vdt.kind == "f":
            f = jnp.ceil(v) if up else jnp.floor(v)
            if err is not None:  # as host_key
                f = f + ((f == v) & (err > 0)) if up else f - ((f == v) & (err < 0))
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
    if vdt == xdt and err is None:
        return keys(v), None, None
    r = v.astype(xdt)
    if vdt.kind == "f":
        if vdt.itemsize <= xdt.itemsize and err is None:
            return keys(r), None, None
        kb, kv = keys(r.astype(vdt)), keys(v)
        lt, gt = kb < kv, kb > kv
        if err is not None:  # as host_key
            lt, gt = lt | ((kb == kv) & (err > 0)), gt | ((kb == kv) & (err < 0))
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


def width_operand(raw: Any, xdt: np.dtype, side: str) -> Array:
    """The x-width kernel's width operand of a checked width ``raw`` (traced, or concrete
    NumPy): on integer x ``(wrap, t, big)`` of :func:`int_width` in x's dtype, shape (3,);
    on float x the width in the promoted float dtype, as :func:`lower_bounds`, shape (1,)."""
    traced = is_traced(raw)
    if xdt.kind in "iu":  # (wrap, t, big) of the exact saturating difference
        wrap, t, big = int_width(raw, xdt, side, traced)
        parts = [wrap, t, jnp.zeros((), xdt) if big is None else big]
        return jnp.stack([jnp.asarray(v).reshape(()).astype(xdt) for v in parts])
    d = jnp.promote_types(xdt, np.dtype(jax.dtypes.canonicalize_dtype(raw.dtype)))
    return (raw.astype(d) if traced else jnp.asarray(np.asarray(raw).astype(d))).reshape(1)


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
    key, _, _ = sum_key(a.astype(d), -width.astype(d), xdt, side, np)
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
    return sum_key(a.astype(d), -w, xdt, side)


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
    return sum_key(a.astype(d), w, xdt, side)


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
    key, _, _ = sum_key(a.astype(d), width.astype(d), xdt, side, np)
    return key, None


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
    return sum_key(a.astype(d), -wj.astype(d), xdt, side)


def host_anchored_lower(
    a: np.ndarray, w: np.ndarray, xdt: np.dtype, side: str
) -> tuple[np.ndarray, Any, Any]:
    """Concrete ``at - width`` as ``(key, below, above)``: Python-int exact when both are
    integers, else in the promoted float dtype (``stream`` resolves with this too)."""
    if a.dtype.kind in "iuO" and w.dtype.kind in "iuO":
        return host_key(np.asarray(a.astype(object) - w.astype(object), object), xdt, side)
    ah, wh, _ = host_operands(a, w, xdt)
    return cast(tuple[np.ndarray, Any, Any], sum_key(ah, -wh, xdt, side, np))  # NumPy: xp


def host_operands(a: np.ndarray, w: np.ndarray, xdt: np.dtype) -> tuple[Any, Any, np.dtype]:
    """Concrete anchors and a width in one float dtype for :func:`sum_key`: the width as JAX
    holds it (float32 in 32-bit mode, as the traced road reads it), the anchors as given (a
    float64 anchor float32 cannot hold is a position, never rounded: float64 arithmetic)."""
    wv = w.astype(canon_np(w))
    d = np.dtype(
        jnp.promote_types(
            xdt, jnp.promote_types(a.dtype if a.dtype.kind == "f" else canon_np(a), wv.dtype)
        )
    )
    if d.kind != "f":
        d = np.dtype(jax.dtypes.canonicalize_dtype(np.float64))
    return a.astype(d), wv.astype(d), d


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
    return sum_key(a.astype(d), after.astype(d), xdt, side)


def host_anchored_upper(
    a: np.ndarray, w: np.ndarray, xdt: np.dtype, side: str
) -> tuple[np.ndarray, Any, Any]:
    """Concrete ``at + after`` as ``(key, below, above)``: Python-int exact when both are
    integers, else in the promoted float dtype (``stream`` resolves with this too)."""
    if a.dtype.kind in "iuO" and w.dtype.kind in "iuO":
        return host_key(np.asarray(a.astype(object) + w.astype(object), object), xdt, side)
    ah, wh, _ = host_operands(a, w, xdt)
    return cast(tuple[np.ndarray, Any, Any], sum_key(ah, wh, xdt, side, np))  # NumPy: xp


def canon_np(v: np.ndarray) -> np.dtype:
    if v.dtype == object:
        return np.dtype(jax.dtypes.canonicalize_dtype(np.int64))
    return np.dtype(jax.dtypes.canonicalize_dtype(v.dtype))
