"""Time-based exponentially weighted mean, variance and standard deviation (pandas' ``ewm``).

The weight of point ``j`` at point ``i`` is ``0.5 ** ((x[i] - x[j]) / halflife)``, as
``pandas.Series.ewm(halflife=..., times=x)`` with ``adjust=True``. The weighted moments of every
prefix come from ONE scan of partials under an associative merge (:func:`combine`), in blocks
(``_core.blocked_scan``: O(N) work, ``log_64(N)`` levels of a 64-step ``lax.scan`` over every
row at once; no serial loop over the data). The program holds a few copies of the merge
where a ``lax.associative_scan`` holds two per level of its tree, so it, and its derivative
above all, compile in a fraction of the time (BENCHMARKS.md, session 23). A partial holds
the time of its last finite reading, ``W`` (the sum of its weights relative to that time,
the last reading weighing 1), its mean as a shift ``k`` (the value of its last finite
reading) plus ``m``, its biased variance ``V`` and ``E = 1 - sum(w**2) / W**2`` (so the
unbiased variance, pandas' ``bias=False``, is ``V / E``), the count of its finite readings
and of its ``+inf``/``-inf`` ones.

Numerics (what is guaranteed, and why):

- **Shifted moments.** Means are merged as differences of shifts and offsets,
  ``d = (k_b - k_a) + (m_b - m_a)``: for float32 values far from zero (``1e4 + 1e-3 * noise``)
  the shifts are readings, their difference exact, so ``var``/``std`` keep the accuracy of
  the rolling moments instead of losing every digit to the mean's rounding.
- **No cancellation, no underflow to NaN.** ``V`` and ``E`` merge as sums of non-negative
  terms (``E = 2 s u + u**2 E_a + s**2 E_b`` for the shares ``u``/``s`` of the earlier/later
  partial), never as the difference ``W**2 - sum(w**2)``. After a long gap the earlier
  partial's share ``u`` underflows (0.5 ** 150 in float32): ``V`` and ``E`` then carry a
  common scale ``exp(l)`` (``l`` from ``log u``, which does not underflow), so their ratio,
  the unbiased variance ``(V_a + d**2) / 2`` of the limit, stays a number, as in exact
  arithmetic; the mean is the newest reading's.
- **Infinities are values, as in NumPy** (the library's rule for every statistic): from the
  first ``+inf`` (``-inf``) on, the mean is ``+inf`` (``-inf``; NaN once both were read),
  ``var``/``std`` NaN; a weight ``0.5 ** (dt / halflife)`` is never 0, so they never leave.
  pandas' ``ewm`` reads infinities as missing: replace them by NaN first for its numbers.
- NaN readings (``"omit"``) are identity partials; a constant series gives exactly 0.
- **Times** are differences from the first point: of ``x`` itself inside ``jit`` (integers
  exactly, as unsigned), or, for host positions JAX's 32-bit mode cannot hold (float64 far
  from zero, time axes), computed on the host in float64 and carried as two floats
  ``hi + lo`` (:func:`host_times`), so gaps keep their digits in 32-bit mode too.
- **On the CPU** where the native kernels are built (``jaxsubset._native``; not with
  ``JAXSUBSET_NATIVE=off``) the same partials are combined one point at a time by a C++
  kernel (``csrc/ewm.cc``, :mod:`jaxsubset._native._ewm`): :func:`combine`'s formulas with
  the later partial one reading, from the same times, so the results equal the scan's
  within a few ulps (the sums associated serially instead of as a tree); its derivative is
  the scan's, and a program for another platform holds only the scan.
"""

import functools
import math
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from . import _native
from ._core import (
    Array,
    ArrayLike,
    argument_guard,
    as_x,
    blocked_scan,
    bound_array,
    check_nan_policy,
    check_sorted_x,
    concrete_bound,
    datetime_to_ns,
    naive_utc,
    now_or_traced,
    static_int,
    time_kind,
    timedelta_to_ns,
    traced_array,
)
from ._stats import as_y, raise_on_nan
from .reduce import check_statistics, float_dtype, std_statistic
from .resolve import wide


EWM_STATISTICS = ("mean", "var", "std")


def combine(a: tuple, b: tuple, lam: Array) -> tuple:
    """The partial of ``a`` followed by ``b`` (``a``'s points all before ``b``'s).

    A partial is ``(times, moments, counts)``: ``times`` ``(P, ...)`` the parts of the time of
    its last finite reading, ``moments`` ``(6, ...)`` ``W, k, m, V, E, l`` (``V``/``E`` scaled
    by ``exp(l)``), ``counts`` ``(3, ...)`` its finite, ``+inf`` and ``-inf`` readings (three
    stacked leaves: the scan reshapes three arrays, not ten). A partial without finite
    readings (NaN and infinite rows) is the identity for the moments (its infinities are
    counted), so a partial's time is that of its last finite reading and its weights stay
    relative to it. It holds ``W = 1`` and zeros, so the merge below stays finite (also in
    gradients) where it is not taken.
    """
    (ta, ma_, ca), (tb, mb_, cb) = a, b
    wa, ka, ma, va, ea, la = ma_
    wb, kb, mb, vb, eb, lb = mb_
    calc = wa.dtype
    gap = jnp.sum((tb - ta).astype(calc), axis=0)
    decay = lam * gap
    waf = wa * jnp.exp(-decay)
    w = waf + wb  # W >= 1: the last reading weighs 1
    u, s = waf / w, wb / w  # the shares of the earlier and the later partial
    # the scale of V and E: log u, which does not underflow where u does (see the docstring)
    log_u = jnp.log(wa) - decay - jnp.log(w)
    big = jnp.where(eb != 0, jnp.maximum(lb, log_u), log_u)  # b without pairs: no scale
    ell = jnp.where(big > SAFE[np.dtype(calc).name], 0, big)
    eu = jnp.where(ell == 0, u, jnp.exp(jnp.minimum(log_u - ell, 0)))  # u, unless rescaled
    fa = eu * jnp.exp(la)  # u * exp(la - ell)
    fb = jnp.exp(jnp.minimum(lb - ell, 0))
    d = (kb - ka) + (mb - ma)  # the later mean minus the earlier, from exact shifts
    v = va * fa + s * (vb * fb + (d * d) * eu)
    e = 2 * s * eu + ea * fa * u + s * s * eb * fb
    m = mb - jnp.where(u > 0, u * d, 0)
    merged = jnp.stack([w, kb, m, v, e, ell])
    keep_a, keep_b = cb[0] == 0, ca[0] == 0  # a side without finite readings: the other's
    moments = jnp.where(keep_a, ma_, jnp.where(keep_b, mb_, merged))
    return jnp.where(keep_a, ta, tb), moments, ca + cb


# log u above this: no term of V and E underflows, so they are kept unscaled (exact u)
SAFE = {n: float(np.log(np.finfo(n).tiny)) / 2 for n in ("float32", "float64")}


def ewm_statistic(
    x: ArrayLike,
    y: ArrayLike,
    halflife: ArrayLike,
    statistic: str | Sequence[str] = "mean",
    *,
    min_periods: int = 0,
    bias: bool = False,
    nan_policy: str = "omit",
) -> Array | dict[str, Array]:
    """Time-based exponentially weighted mean/var/std at every point, as pandas' ``ewm``.

    Equals ``pandas.Series(y).ewm(halflife=halflife, times=x).mean()`` (``adjust=True``,
    ``ignore_na=False``): point ``j`` weighs ``0.5 ** ((x[i] - x[j]) / halflife)`` in the
    result at point ``i`` (``j <= i``; tied ``x`` weigh alike). ``"var"`` is the weighted
    variance with pandas' ``bias=False`` correction ``W**2 / (W**2 - sum(w**2))`` (on evenly
    spaced ``x`` it equals ``Series.ewm(halflife=h).var()``, where pandas cannot take
    ``times``); ``bias=True`` gives the plain weighted variance. Computed by one scan in blocks,
    with shifted moments (float32 values far from zero keep the rolling moments' accuracy) and
    no NaN from weights that underflow after long gaps (the module docstring says how).
    ``+-inf`` readings are values, as in NumPy and the library's other statistics: from the
    first one on the mean is that infinity (NaN once both signs were read) and ``var``/
    ``std`` are NaN (pandas reads infinities as missing: replace them by NaN first for its
    numbers).

    Args:
        x: ``(N,)`` sorted, finite times: numbers, or ``numpy.datetime64`` (int64
            nanoseconds). Positions JAX's 32-bit mode cannot hold (float64 far from zero,
            int64, dates) are differenced on the host first, so gaps keep their digits.
        y: ``(N, *channels)`` values.
        halflife: the time over which a weight halves, > 0 (scalar, may be traced: a traced
            one that is not > 0 raises at run time, see :func:`jaxsubset.checked`); on a
            datetime64 axis a duration (``"4D"``, ``numpy.timedelta64``).
        statistic: ``"mean"``, ``"var"``, ``"std"``, or a tuple/list of them (a dict is
            returned).
        min_periods: static int >= 0; fewer non-NaN points so far give NaN (at least one is
            always needed, as pandas).
        bias: static; ``False`` (pandas' default) for the unbiased weighted variance.
        nan_policy: ``"omit"`` (default, pandas): a NaN reading is skipped (later weights
            still decay with time, and the result at its row is the previous one).
            ``"propagate"``: every result from the first NaN on is NaN. ``"raise"``:
            ValueError if ``y`` holds NaN.

    Returns:
        ``(N, *channels)`` float, or a dict of them by statistic.

    Example:
        >>> import jax.numpy as jnp, jaxsubset
        >>> x = jnp.array([0.0, 1.0, 3.0])
        >>> y = jnp.array([1.0, 2.0, 4.0])
        >>> jaxsubset.ewm_statistic(x, y, 1.0, "mean").tolist()
        [1.0, 1.666..., 3.363...]
    """
    func = "ewm_statistic"
    stats, single = check_statistics(statistic, func, EWM_STATISTICS)
    min_periods = static_int(min_periods, "min_periods", func, minimum=0)
    nan_policy = check_nan_policy(nan_policy, func)
    if not isinstance(bias, bool | np.bool_):
        raise TypeError(f"{func}: `bias` must be a bool, got {bias!r}")
    tk = time_kind(x)
    if not isinstance(halflife, str):
        now_or_traced(halflife, lambda h: check_halflife(h, tk, func))
    host = wide(func, x, {}, computes=True, others={"halflife": halflife}, traced_ok=True)
    times: Any
    if host:  # positions JAX's 32-bit mode cannot hold: the times computed on the host
        times, n_x = host_times(x, tk, func)
        h: Any = now_or_traced(
            halflife,
            lambda v: np.asarray(concrete_bound(v, "halflife", None, func, tk, width=True)).astype(
                np.float64
            ),
            traced_array,  # a scale: as JAX holds it
        )
    else:
        x = as_x(x, func)
        check_sorted_x(x, func)
        check_finite_x(x, func)
        times, n_x = x, x.shape[0]
        h = bound_array(halflife, "halflife", x, func, tk, width=True)
    y = as_y(y, func)
    if y.shape[0] != n_x:
        raise ValueError(
            f"{func}: `x` and `y` must have the same length along the first axis, "
            f"got len(x)={n_x} and y.shape={tuple(y.shape)}"
        )

    def positive(v: Any) -> Any:
        if not float(np.asarray(v)) > 0:
            raise ValueError(f"{func}: `halflife` must be > 0, got {halflife!r}")
        return v

    h = now_or_traced(  # traced: checked at run time with the host's rule, as traced widths are
        h,
        positive,
        lambda v: argument_guard(traced_array(v), ~(traced_array(v) > 0), func, "halflife", "> 0"),
    )
    if nan_policy == "raise":
        y = raise_on_nan(y, func, "y")
    if host:  # a scale only (its rounding is relative)
        h = now_or_traced(h, lambda v: jax.device_put(np.float32(v)))
    native = _native.usable()  # the CPU kernel where built (JAXSUBSET_NATIVE=off: not)
    return ewm(times, y, h, stats, single, min_periods, bias, nan_policy == "omit", native)


def check_finite_x(x: Any, func: str) -> None:
    """Concrete float ``x`` must be finite: a time of ``+-inf`` has no distance to others."""
    now_or_traced(x, lambda v: host_finite_x(np.asarray(v), func))


def check_halflife(halflife: Any, tk: str | None, func: str) -> None:
    """A concrete ``halflife``: a scalar, on a time axis a duration."""
    if np.ndim(halflife) != 0:
        raise ValueError(f"{func}: `halflife` must be a scalar, got shape {np.shape(halflife)}")
    if tk is not None and time_kind(halflife) is None:
        raise TypeError(
            f"{func}: `halflife` must be a duration on a time axis (numpy.timedelta64 or "
            f"a string such as '4D'), got {halflife!r}"
        )


def host_finite_x(x: np.ndarray, func: str) -> None:
    """:func:`check_finite_x` of host ``x``."""
    if x.dtype.kind != "f":
        return
    bad = ~np.isfinite(np.asarray(x))
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(
            f"{func}: `x` holds {np.asarray(x)[i].item()!r} at index {i}; times must be finite"
        )


def host_times(x: Any, tk: str | None, func: str) -> tuple[tuple[np.ndarray, ...], int]:
    """Concrete times JAX's 32-bit mode cannot hold, as differences from the first time in
    two float32 parts ``hi + lo`` (computed in int64/float64 on the host, exact to about
    ``2**-48`` of the span), and their number; checked as :func:`check_sorted_x` checks."""
    arr = np.asarray(naive_utc(x))
    if arr.ndim != 1:
        raise ValueError(f"{func}: `x` must be 1-D, got shape {arr.shape}")
    if tk is not None:
        if np.isnat(arr).any():
            i = int(np.argmax(np.isnat(arr)))
            raise ValueError(f"{func}: `x` holds NaT at index {i}; a time must be known")
        arr = (timedelta_to_ns if tk == "m" else datetime_to_ns)(arr, "x", func)
    check_sorted_x(arr, func)  # type: ignore[arg-type]  # (it reads NumPy arrays too)
    check_finite_x(arr, func)
    if arr.size == 0:
        rel = np.zeros(0)
    elif arr.dtype.kind in "iu":  # sorted: the unsigned difference is exact, whatever the span
        u = arr.astype(np.int64).view(np.uint64) if arr.dtype.kind == "i" else arr
        rel = (u - u[0]).astype(np.float64)
    else:
        rel = arr.astype(np.float64) - np.float64(arr[0])
    hi = rel.astype(np.float32)
    lo = (rel - hi.astype(np.float64)).astype(np.float32)
    return (jax.device_put(hi), jax.device_put(lo)), int(arr.shape[0])


@functools.partial(
    jax.jit, static_argnames=("stats", "single", "min_periods", "bias", "omit", "native")
)
def ewm(
    x: Any,
    y: Array,
    h: Array,
    stats: tuple[str, ...],
    single: bool,
    min_periods: int,
    bias: bool,
    omit: bool,
    native: bool = False,
) -> Any:
    """The scan (or, with ``native``, the CPU kernel's one pass: ``_native._ewm``); ``x`` is
    the sorted times, or their ``(hi, lo)`` parts from the host."""
    fdt = float_dtype(y.dtype)
    calc = jnp.float32 if jnp.finfo(fdt).bits < 32 else fdt
    n = y.shape[0]
    ch = tuple(y.shape[1:])
    y2 = y.reshape(n, math.prod(ch)).astype(calc)  # (not -1: ambiguous for N = 0)
    lam = jnp.log(jnp.asarray(2.0, calc)) / h.astype(calc)
    if isinstance(x, tuple):
        parts = x
    else:  # times relative to the first point: exact differences for integer (ns) axes
        rel = x - x[:1] if n else x
        if np.issubdtype(x.dtype, np.signedinteger):  # sorted: 0 <= rel < 2**bits, unsigned
            rel = lax.bitcast_convert_type(rel, np.dtype(f"uint{8 * x.dtype.itemsize}"))
        parts = (rel,)

    def pure(t: Array, v: Array, la: Array) -> dict[str, Array]:
        return scan_statistics(t, v, la, stats, min_periods, bias, omit)

    t = _native.ewm_time_parts(parts) if native and n else None
    if t is not None:
        safe = SAFE[np.dtype(calc).name]
        out = _native.native_ewm(
            t, y2, lam, stats, min_periods=max(min_periods, 1), bias=bias, omit=omit,
            safe=safe, fallback=pure,
        )  # fmt: skip
    else:
        out = scan_statistics(jnp.stack(parts), y2, lam, stats, min_periods, bias, omit)
    res = {s: out[s].astype(fdt).reshape((n, *ch)) for s in stats}
    return res[stats[0]] if single else res


def scan_statistics(
    parts: Array,
    y2: Array,
    lam: Array,
    stats: tuple[str, ...],
    min_periods: int,
    bias: bool,
    omit: bool,
) -> dict[str, Array]:
    """The pure-JAX road: the statistics of ``y2`` ``(N, C)`` (the computing dtype) at times
    ``parts`` ``(P, N)`` by one scan of :func:`combine` in blocks."""
    calc = y2.dtype
    n = y2.shape[0]
    t = jnp.broadcast_to(parts[:, :, None], (parts.shape[0], *y2.shape))
    finite = jnp.isfinite(y2)
    zero = jnp.zeros_like(y2)
    moments = jnp.stack([jnp.ones_like(y2), jnp.where(finite, y2, 0), zero, zero, zero, zero])
    counts = jnp.stack([finite, y2 == jnp.inf, y2 == -jnp.inf]).astype(jnp.int32)
    leaves = (t, moments, counts)
    if n:  # pad: the identity (no finite reading), filling the last row of the blocks
        pad = (t[:, 0], jnp.zeros_like(moments[:, 0]).at[0].set(1), jnp.zeros_like(counts[:, 0]))
        leaves = blocked_scan(lambda a, b: combine(a, b, lam), leaves, pad, axis=1)
    (_, k, m, v, e, ell), (cnt, pos, neg) = leaves[1], leaves[2]
    good = cnt + pos + neg >= max(min_periods, 1)
    if not omit:
        good = good & (jnp.cumsum(jnp.isnan(y2), axis=0) == 0)
    nan = jnp.asarray(jnp.nan, calc)
    out = {}
    if "mean" in stats:
        inf = jnp.where(neg > 0, jnp.where(pos > 0, nan, -jnp.inf), jnp.inf)
        out["mean"] = jnp.where(good, jnp.where(pos + neg > 0, inf, k + m), nan)
    if {"var", "std"} & set(stats):
        if bias:  # V, the weighted mean of squared deviations (its scale exp(ell) <= 1)
            var, ok = v * jnp.exp(ell), cnt > 0
        else:  # V / E: pandas' bias=False correction, the common scale cancelling
            var, ok = v / jnp.where(e > 0, e, 1), e > 0
        var = jnp.where(good & ok & (pos + neg == 0), jnp.maximum(var, 0), nan)
        out["var"] = var
        out["std"] = std_statistic(var)
    return {s: out[s] for s in stats}


__all__ = ["EWM_STATISTICS", "ewm_statistic"]
