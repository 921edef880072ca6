"""The native CPU road: C++ kernels (csrc/) registered through XLA's FFI.

The statistics dispatcher takes this road on the CPU by itself (``method="auto"``) where the
kernels are available, and ``method="native"`` forces it; this module is the small API around
it:

- :func:`available` / :func:`status`: whether the kernels are built, safe for the running
  jaxlib (the import guard, ``_load``) and not switched off (``JAXSUBSET_NATIVE=off``);
- :func:`range_statistics`: statistics over index ranges straight from the kernels.

Results follow the library's conventions (``jaxsubset._statistics._registry``) and its
exactness contract: every result combines only partials of its own range's points.
"""

from typing import Any

import jax.numpy as jnp

from .._typing import Array
from ._api import STATISTICS, bypass, native_ranges, native_sliding, usable
from ._load import NativeUnavailableWarning, available, status


def range_statistics(
    y: Any,
    start: Any,
    count: Any,
    statistic: str | tuple[str, ...],
    *,
    q: float | None = None,
    nan_policy: str = "propagate",
    ddof: int = 0,
    capacity: int | None = None,
) -> Any:
    """Statistics of ``y`` over index ranges ``[start, start + count)`` on the native road.

    What ``jaxsubset.range_statistic(..., method="native")`` computes, without building a
    :class:`jaxsubset.Ranges`; under ``jit``, ``vmap`` (one kernel call) and ``grad`` (the
    pure-JAX road's derivative). Ranges are clipped to the data.

    Args:
        y: ``(N,)`` or ``(N, C)`` values.
        start: ``(K,)`` first index of each range.
        count: ``(K,)`` points per range.
        statistic: a name of :data:`STATISTICS` or a tuple of them.
        q: the quantile's ``q`` (a static float in ``[0, 1]``) with ``"quantile"``.
        nan_policy: ``"propagate"`` or ``"omit"``.
        ddof: delta degrees of freedom of var/std/sem.
        capacity: a bound on the ranges' counts for the derivative and the non-CPU branch of
            the median and quantiles (found from concrete counts where not given).

    Returns:
        ``(K,)`` or ``(K, C)`` per statistic: one array for one name, else a dict.

    Raises:
        RuntimeError: where :func:`available` is False (:func:`status` says why).

    Example:
        >>> import jax.numpy as jnp
        >>> from jaxsubset import _native
        >>> if _native.available():
        ...     out = _native.range_statistics(
        ...         jnp.arange(10.0), jnp.array([0, 4]), jnp.array([4, 6]), ("mean", "max"))
        ...     print(out["mean"].tolist(), out["max"].tolist())
        ... else:
        ...     print([1.5, 6.5], [3.0, 9.0])
        [1.5, 6.5] [3.0, 9.0]
    """
    from .._statistics._dispatch import clip_ranges, median_capacity, reduce_ranges
    from .._statistics._registry import ORDER, base_name, check_statistics, with_quantile
    from .._validate import check_nan_policy, static_int

    func = "jaxsubset._native.range_statistics"
    if not available():
        raise RuntimeError(f"{func}: the native road is not available: {status()}")
    names, single = check_statistics(statistic, func, STATISTICS)
    stats = with_quantile(names, q, func)
    nan_policy = check_nan_policy(nan_policy, func)
    if nan_policy == "raise":
        raise ValueError(f"{func}: `nan_policy` must be 'propagate' or 'omit', got 'raise'")
    ddof = static_int(ddof, "ddof", func, minimum=0)
    y = jnp.asarray(y)
    flat = y.ndim == 1
    y2 = y[:, None] if flat else y.reshape(y.shape[0], -1)
    start, count = clip_ranges(jnp.ravel(start), jnp.ravel(count), y2.shape[0])
    cap = None
    if any(base_name(s) in ORDER for s in stats):
        cap = median_capacity(count, capacity, None, func)
    omit = nan_policy == "omit"

    def fallback(v: Array, s: Array, c: Array) -> dict[str, Array]:
        return reduce_ranges(v, s, c, stats, ddof=ddof, omit=omit, capacity=cap, func=func)

    out = native_ranges(y2, start, count, stats, omit=omit, ddof=ddof, fallback=fallback)
    res = {n: out[s][:, 0] if flat else out[s] for n, s in zip(names, stats, strict=True)}
    return res[names[0]] if single else res


__all__ = [
    "STATISTICS",
    "NativeUnavailableWarning",
    "available",
    "bypass",
    "native_ranges",
    "native_sliding",
    "range_statistics",
    "status",
    "usable",
]
