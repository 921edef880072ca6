"""Time-based exponentially weighted mean, variance and standard deviation (pandas' ``ewm``).

The weight of point ``j`` at point ``i`` is ``0.5 ** ((x[i] - x[j]) / halflife)``, as
``pandas.Series.ewm(halflife=..., times=x)`` with ``adjust=True``. The weighted moments of every
prefix come from ONE parallel scan (``lax.associative_scan``, O(N) work, O(log N) depth; no
serial loop over the data) of partials ``(t, W, mean, M2, D, n)``: the time of the partial's
last reading, the sum of its weights (relative to that time), their weighted mean and squared
deviations, ``D = W**2 - sum(w**2)`` (the sum of ``w_i * w_j`` over pairs ``i != j``) and the
count. Combining an earlier partial ``a`` with a later ``b`` first decays ``a`` to ``b``'s time
(``W``, ``M2`` by ``f``, ``D`` by ``f**2``, ``f = 0.5 ** ((t_b - t_a) / halflife) <= 1``:
nothing grows, so nothing overflows), then merges them as Chan's weighted pairwise update, and
``D = D_a + D_b + 2 W_a W_b``: a sum of non-negative terms, never the difference
``W**2 - sum(w**2)``, which cancels to 0 (a NaN variance) in float32 after a gap of some 25
halflives. NaN readings (``"omit"``) are identity partials, so the time of a partial is that
of its last reading. A constant series gives exactly 0 variance.
"""

import functools
import math
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ._axis import bound_array, time_kind
from ._statistics._registry import check_statistics, float_dtype
from ._stats import as_y, raise_on_nan
from ._typing import Array, ArrayLike
from ._validate import as_x, check_nan_policy, check_sorted_x, is_traced, static_int


EWM_STATISTICS = ("mean", "var", "std")


def combine(a: tuple, b: tuple, lam: Array) -> tuple:
    """The partial of ``a`` followed by ``b`` (``a``'s points all before ``b``'s).

    A partial without readings (``n == 0``: NaN rows) is the identity, so a partial's time is
    that of its last reading and its weights stay relative to it (the last reading weighs 1):
    NaN rows never decay the moments, which a long gap would otherwise underflow to 0 (a mean
    of 0, a NaN variance, where pandas repeats the previous result).
    """
    ta, wa, ma, qa, da, na = a
    tb, wb, mb, qb, db, nb = b
    f = jnp.exp(-lam * (tb - ta).astype(wa.dtype))
    fa = (wa * f, qa * f, da * f * f)
    w = fa[0] + wb
    both = (fa[0] > 0) & (wb > 0)
    share = jnp.where(both, wb / jnp.where(both, w, 1), 0)
    d = jnp.where(both, mb - ma, 0)
    m = jnp.where(fa[0] > 0, ma + d * share, mb)
    q = fa[1] + qb + d * d * fa[0] * share
    merged = (tb, w, m, q, fa[2] + db + 2 * fa[0] * wb, na + nb)
    first = tuple(jnp.where(na == 0, vb, v) for vb, v in zip(b, merged, strict=True))
    return tuple(jnp.where(nb == 0, va, v) for va, v in zip(a, first, strict=True))


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
    ``times``); ``bias=True`` gives the plain weighted variance. Computed by one parallel scan.

    Args:
        x: ``(N,)`` sorted times: numbers, or ``numpy.datetime64`` (int64 nanoseconds; needs
            JAX's 64-bit mode).
        y: ``(N, *channels)`` values.
        halflife: the time over which a weight halves, > 0 (scalar, may be traced); on a
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
    x = as_x(x, func)
    check_sorted_x(x, func)
    y = as_y(y, func)
    if y.shape[0] != x.shape[0]:
        raise ValueError(
            f"{func}: `x` and `y` must have the same length along the first axis, "
            f"got len(x)={x.shape[0]} and y.shape={tuple(y.shape)}"
        )
    if not is_traced(halflife) and not isinstance(halflife, str):
        if np.ndim(halflife) != 0:
            raise ValueError(f"{func}: `halflife` must be a scalar, got shape {np.shape(halflife)}")
        if tk is not None and time_kind(halflife) is None:
            raise TypeError(
                f"{func}: `halflife` must be a duration on a time axis (numpy.timedelta64 or "
                f"a string such as '4D'), got {halflife!r}"
            )
    h = bound_array(halflife, "halflife", x, func, tk, width=True)
    if not is_traced(h) and not float(np.asarray(h)) > 0:
        raise ValueError(f"{func}: `halflife` must be > 0, got {halflife!r}")
    if nan_policy == "raise":
        y = raise_on_nan(y, func, "y")
    return ewm(x, y, h, stats, single, min_periods, bias, nan_policy == "omit")


@functools.partial(jax.jit, static_argnames=("stats", "single", "min_periods", "bias", "omit"))
def ewm(
    x: Array,
    y: Array,
    h: Array,
    stats: tuple[str, ...],
    single: bool,
    min_periods: int,
    bias: bool,
    omit: bool,
) -> Any:
    fdt = float_dtype(y.dtype)
    calc = jnp.float32 if jnp.finfo(fdt).bits < 32 else fdt
    n = y.shape[0]
    ch = tuple(y.shape[1:])
    y2 = y.reshape(n, math.prod(ch)).astype(calc)  # (not -1: ambiguous for N = 0)
    ok = ~jnp.isnan(y2)
    one = ok.astype(calc)
    lam = jnp.log(jnp.asarray(2.0, calc)) / h.astype(calc)
    # times relative to the first point: differences of x are exact for integer (ns) axes
    rel = x - x[:1] if n else x
    if np.issubdtype(x.dtype, np.signedinteger):  # sorted: 0 <= rel < 2**bits, read unsigned
        rel = lax.bitcast_convert_type(rel, np.dtype(f"uint{8 * x.dtype.itemsize}"))
    t = jnp.broadcast_to(rel[:, None], y2.shape)
    zero = jnp.zeros_like(y2)
    leaves = (t, one, jnp.where(ok, y2, 0), zero, zero, ok.astype(jnp.int32))
    if n:
        _, w, m, q, d, cnt = lax.associative_scan(lambda a, b: combine(a, b, lam), leaves, axis=0)
    else:
        _, w, m, q, d, cnt = leaves
    good = cnt >= max(min_periods, 1)
    if not omit:
        good = good & (jnp.cumsum(~ok, axis=0) == 0)
    nan = jnp.asarray(jnp.nan, calc)
    out = {}
    if "mean" in stats:
        out["mean"] = jnp.where(good, m, nan)
    if {"var", "std"} & set(stats):
        if bias:
            den = w
            var = q / jnp.where(den > 0, den, 1)
        else:
            den = d  # W**2 - sum(w**2), carried without cancellation
            var = q * w / jnp.where(den > 0, den, 1)
        var = jnp.where(good & (den > 0), jnp.maximum(var, 0), nan)
        out["var"] = var
        pos = var > 0
        out["std"] = jnp.where(pos, jnp.sqrt(jnp.where(pos, var, 1)), var)
    res = {s: out[s].astype(fdt).reshape((n, *ch)) for s in stats}
    return res[stats[0]] if single else res


__all__ = ["EWM_STATISTICS", "ewm_statistic"]
