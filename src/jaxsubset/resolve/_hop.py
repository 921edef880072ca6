"""The bounds of hopping/tumbling windows (``dynamic``): one arithmetic, eager and traced.

Window ``k`` spans ``[s0 + k * every, s0 + k * every + period)`` (polars' ``group_by_dynamic``
start rule, see :func:`jaxsubset.dynamic`). What this module guarantees:

- **Eager equals traced.** Float bounds are computed by :func:`float_windows`, the same
  operations in the same dtype (:func:`bound_dtype`: x's and the steps' as JAX holds them)
  whether ``xp`` is NumPy (concrete ``x``, on the host) or ``jax.numpy`` (traced ``x``), so a
  step that is not a binary fraction (``every=0.1``) cuts the same windows under ``jit``,
  also for points sitting on an edge. Products are rounded on their own (behind a
  value-preserving select), so no compiler contracts them into a fused multiply-add that
  NumPy would not compute.
- **Integers never wrap.** Traced integer bounds (:func:`int_window_keys`) are computed in
  the unsigned order of x's dtype, with the resolver's flags for bounds past either end of
  it, so windows near the int32 maximum in 32-bit mode are the eager (exact) ones.
"""

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .._core import Array, now_or_traced
from ..reduce import rounded


def bound_dtype(xdt: Any, *steps: Any) -> np.dtype:
    """The dtype of the bounds: x's and the steps' promoted, as JAX holds them; on 64-bit x
    (64-bit mode, or 64-bit positions resolved as in 64-bit mode) the steps as given."""
    xdt = np.dtype(xdt)
    wide = xdt.itemsize >= 8

    def held(v: Any) -> np.dtype:
        d = np.dtype(v.dtype) if hasattr(v, "dtype") else np.asarray(v).dtype
        if d == np.dtype(object):
            d = np.dtype(np.int64)
        return d if wide else np.dtype(jax.dtypes.canonicalize_dtype(d))

    dt = xdt
    for v in steps:
        dt = np.dtype(jnp.promote_types(dt, held(v)))
    return dt


def check_step(every: Any, dt: np.dtype, func: str) -> None:
    """A concrete ``every`` must stay > 0 in the windows' dtype (``1e-300`` is 0 in float32);
    a traced one is checked at run time (dynamic's guard)."""

    def now(every: Any) -> None:
        if np.dtype(dt).kind == "f" and not np.asarray(every).astype(dt) > 0:
            raise ValueError(
                f"{func}: `every` must be > 0 in {np.dtype(dt)}, the dtype of the windows' "
                f"bounds (x's), got {np.asarray(every).item()!r}, which is 0 there"
            )

    now_or_traced(every, now)


def float_windows(
    first: Any, every: Any, offset: Any, open_lo: bool, k: int, dt: np.dtype, xp: Any
) -> tuple[Any, Any]:
    """``(s0, lo)``: the first start (polars' rule: ``first`` truncated to a multiple of
    ``every``, plus ``offset``, moved back by whole ``every`` while past ``first``, or on it
    for windows open at their start) and the ``k`` starts ``s0 + i * every``, in ``dt``."""
    t = np.dtype(dt).type
    keep = (lambda a: a) if xp is np else rounded
    f, e, o = (xp.asarray(v).astype(dt) for v in (first, every, offset))
    s0 = keep(xp.floor(f / e) * e) + o
    q = (s0 - f) / e
    back = xp.floor(q) + t(1) if open_lo else xp.ceil(q)
    s0 = xp.where((s0 > f) | (open_lo & (s0 == f)), s0 - keep(back * e), s0)
    s0 = xp.where((s0 > f) | (open_lo & (s0 == f)), s0 - e, s0)  # a quotient rounded down
    return s0, s0 + keep(xp.arange(k).astype(dt) * e)


def float_count(s0: Any, last: Any, every: Any, dt: np.dtype) -> int:
    """The number of windows starting at or before ``last`` (host, in ``dt``)."""
    t = np.dtype(dt).type
    return int(np.floor((t(last) - t(s0)) / t(every))) + 1


def int_window_keys(
    first: Array, every: Array, offset: Array, period: Array, open_lo: bool, k: int, dt: Any
) -> tuple[tuple[Array, Array, Array], tuple[Array, Array, Array]]:
    """Traced integer windows as the resolver's ``(value, below, above)`` in ``dt``.

    With ``t = first - s0 >= 0`` (polars' rule: ``(first - offset) mod every`` when the
    truncated start moved back, ``(first mod every) - offset`` for a negative offset), every
    bound is ``first - t + i * every (+ period)``, computed in the unsigned order of ``dt``
    (``MIN`` maps to 0): ``lo_i = (i - c) * every + r`` with ``c`` the windows starting below
    ``MIN`` and ``r`` in ``[0, every)``, each product and sum checked before it is taken. A
    bound past the largest value is ``above`` every x, one below the smallest ``below`` it:
    flags for the resolver, never a wrapped value.
    """
    dt = np.dtype(dt)
    bits = 8 * dt.itemsize
    ut = np.dtype(f"uint{bits}")
    umax = ut.type(np.iinfo(ut).max)
    flip = ut.type(1 << (bits - 1)) if dt.kind == "i" else ut.type(0)

    def order(v: Array) -> Array:  # dt -> unsigned, order-preserving
        return lax.bitcast_convert_type(v.astype(dt), ut) ^ flip

    def sat_add(a: Array, b: Array) -> tuple[Array, Array]:
        over = a > umax - b
        return jnp.where(over, umax, a + b), over

    e, off, first = every.astype(dt), offset.astype(dt), first.astype(dt)
    eu = e.astype(ut)
    fm = (first % e).astype(ut)  # in [0, every): floor mod, for signed dt too
    m = ((first % e - off % e) % e).astype(ut)  # (first - offset) mod every
    moved = jnp.where(m == 0, eu, m) if open_lo else m
    neg = off < 0
    minus_off = (-(jnp.where(neg, off, -1) + 1)).astype(ut) + ut.type(1)  # |offset| if < 0
    t = jnp.where(neg, fm + minus_off, moved)  # < 2**bits: no wrap (a start below x[0] stays)
    fu = order(first)
    ahead = fu >= t  # the first start is not below MIN
    nb = jnp.where(ahead, 0, t - fu)
    c = jnp.where(ahead, 0, nb // eu + (nb % eu != 0))  # windows starting below MIN
    r = jnp.where(ahead, fu - t, (eu - nb % eu) % eu)
    i = jnp.arange(k, dtype=ut)
    lo_below = i < c
    j = jnp.where(lo_below, 0, i - c)
    prod_over = j > umax // eu
    lo_u, sum_over = sat_add(jnp.where(prod_over, 0, j * eu), r)
    lo_above = ~lo_below & (prod_over | sum_over)
    pu = period.astype(dt).astype(ut)
    deficit = jnp.where(lo_below, nb - i * eu, 0)  # how far below MIN a start lies
    hi_below = lo_below & (pu < deficit)
    hi_sum, hi_over = sat_add(lo_u, pu)
    hi_above = lo_above | (~lo_below & hi_over)
    hi_u = jnp.where(lo_below, pu - deficit, hi_sum)

    def value(u: Array, below: Array, above: Array) -> Array:
        return lax.bitcast_convert_type(jnp.where(below | above, flip, u) ^ flip, dt)

    return (
        (value(lo_u, lo_below, lo_above), lo_below, lo_above),
        (value(hi_u, hi_below, hi_above), hi_below, hi_above),
    )
