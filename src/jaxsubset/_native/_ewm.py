"""``ewm_statistic`` on the native CPU road: one serial pass (``csrc/ewm.cc``).

The kernel combines each point into the running partial with the formulas of
:func:`jaxsubset._ewm.combine` (the same conventions: shifted moments, the long-gap scale,
NaN readings skipped, infinities as values, exact zeros for a constant series), reading the
times as the pure-JAX road holds them (differences from the first point, one part or the
host's float32 ``hi + lo``). As the other native calls: one ``jax.ffi.ffi_call`` for every
statistic, batch dimensions looped in the kernel (``vmap`` is one call),
``_api.branch`` (the pure-JAX road traced only where a non-CPU backend is present: a non-CPU
lowering holds no custom call), and ``custom_jvp``
with the pure-JAX road's tangent.
"""

from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

from .._core import Array
from . import _api
from ._api import differentiable


TARGET = "jaxsubset_ewm_stats"
CODES = {"mean": 0, "var": 1, "std": 2}  # csrc/ewm.cc's `stats` attribute
TIME_DTYPES = ("float32", "float64", "uint32", "uint64")  # what the kernel reads as times


def time_parts(parts: tuple[Array, ...]) -> Array | None:
    """The times' parts stacked ``(P, N)`` in a dtype the kernel reads, or None (the
    pure-JAX road then runs). Narrow unsigned times are widened (their differences exact)."""
    dt = {np.dtype(p.dtype) for p in parts}
    if len(dt) != 1:
        return None
    (d,) = dt
    if d.kind == "u" and d.itemsize < 4:
        d = np.dtype("uint32")
    if d.name not in TIME_DTYPES:
        return None
    return jnp.stack([p.astype(d) for p in parts])


def native_ewm(
    t: Array,
    y: Array,
    lam: Array,
    stats: tuple[str, ...],
    *,
    min_periods: int,
    bias: bool,
    omit: bool,
    safe: float,
    fallback: Callable[[Array, Array, Array], dict[str, Array]],
) -> dict[str, Array]:
    """The exponentially weighted statistics by the native kernel.

    Args:
        t: ``(P, N)`` times (:func:`time_parts`).
        y: ``(N, C)`` float32/float64 values (the scan's computing dtype).
        lam: ``()`` ``log(2) / halflife`` in ``y``'s dtype.
        stats: of ``"mean"``, ``"var"``, ``"std"``.
        min_periods: the fewest readings of a result that is not NaN (at least 1).
        bias: the plain weighted variance, else pandas' ``bias=False`` correction.
        omit: NaN readings skipped; else every result from the first NaN on is NaN.
        safe: ``_ewm.SAFE`` of ``y``'s dtype (where the scan starts scaling V and E).
        fallback: the pure-JAX road ``(t, y, lam) -> dict`` with the same results: the
            branch for other platforms and the derivative.

    Returns:
        dict of ``(N, C)`` arrays in ``y``'s dtype by statistic.
    """
    n, c = y.shape

    def native(tt: Array, v: Array, la: Array) -> dict[str, Array]:
        shapes = [jax.ShapeDtypeStruct((n, c), v.dtype) for _ in stats]
        out = jax.ffi.ffi_call(TARGET, shapes, vmap_method="expand_dims")(
            tt,
            v,
            la.reshape(1),
            stats=np.array([CODES[s] for s in stats], np.int64),
            min_periods=np.int64(min_periods),
            bias=np.int64(bias),
            omit=np.int64(omit),
            safe=np.float64(safe),
        )
        return dict(zip(stats, out, strict=True))

    def pure(tt: Array, v: Array, la: Array) -> dict[str, Array]:
        with _api.bypass():
            out = fallback(tt, v, la)
        return {s: out[s] for s in stats}

    return differentiable(native, pure, None)(t, y, lam)
