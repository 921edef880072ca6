"""Binned statistics by the native kernel ``jaxsubset_bin_stats`` (csrc/bins.cc).

:func:`native_bins` computes every requested statistic of ``y`` per bin in one call: from
the bin label of every point, or (faster: no label array) from ``x`` and the bin edges, the
bins resolved in the kernel with exactly ``_bin_numbers.binnumber``'s rule. As the other native
calls: batched in the kernel (``vmap_method="expand_dims"``), ``_api.branch`` (the pure-JAX
road traced only where a non-CPU backend is present: a non-CPU lowering holds no custom
call), ``jax.custom_jvp`` with the pure-JAX road's tangent; integer ``y`` in the default
float dtype, float16/bfloat16 in float32.
"""

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

from .._core import Array
from . import _api
from ._api import branch, computing, differentiable, rounded, stats_call


BINS_TARGET = "jaxsubset_bin_stats"
BINNUMBER_TARGET = "jaxsubset_binnumber"
# the kernel's ``mode``: labels given; x resolved against the edges, any order or ascending
LABELS, X_ANY, X_SORTED = 0, 1, 2


def x_resolvable(x: Array, edges: Array) -> bool:
    """Whether the kernel resolves the bins of ``x`` itself: float32/float64 ``x`` compared
    with edges of its own dtype (``_bin_numbers.binnumber``'s float road); integer and time axes
    keep their exact integer rules in XLA."""
    return (
        jnp.issubdtype(x.dtype, jnp.floating)
        and x.dtype == edges.dtype
        and x.dtype in (jnp.float32, jnp.float64)
    )


def native_bins(
    y: Array,
    label: Array,
    nbins: int,
    stats: tuple[str, ...],
    *,
    omit: bool,
    ddof: int,
    fallback: Callable[[Array, Array], dict[str, Array]],
    x: Array | None = None,
    edges: Array | None = None,
    dec: Array | None = None,
    x_sorted: bool = False,
    nan_last: bool = False,
) -> dict[str, Array]:
    """Statistics of ``y`` per bin by the native kernel.

    Args:
        y: ``(N, C)`` values, any real dtype.
        label: ``(N,)`` int, the bin of each point in ``0..nbins-1`` (any other value: in no
            bin); what the pure-JAX road (``fallback``) reads, and the kernel where ``x`` is
            None.
        nbins: static number of bins.
        stats: dispatcher names (``"quantile(0.9)"``), of ``_api.STATISTICS``.
        omit: leave NaN readings out.
        ddof: delta degrees of freedom of var/std/sem.
        fallback: the pure-JAX road ``(y, label) -> dict``: the branch for other platforms
            and the derivative.
        x, edges, dec: ``(N,)`` float positions, ``(nbins + 1,)`` strictly increasing edges
            of x's dtype and ``()`` int32 decimals of SciPy's last-edge rule (see
            :func:`x_resolvable`): the kernel resolves the bins itself (``label`` is then
            read only by the pure-JAX road; XLA drops it from a CPU program). ``dec`` may
            be ``(2,)``: the decimals, then the real number of bins ``nr`` of edges padded
            past the last real one (eager buckets; the rule at edge ``nr``, bins from ``nr``
            on empty).
        x_sorted: ``x`` ascends: every bin's index range by a binary search per edge.
        nan_last: with ``omit=False``, the median and quantiles rank NaN above every value
            (SciPy's ``binned_statistic`` median): NaN where a rank read is a NaN's, else the
            values' order statistic at those ranks.

    Returns:
        dict of ``(nbins, C)`` arrays by name: floats in ``y``'s float dtype, ``"count"`` in
        the index dtype.
    """
    from .._core import index_dtype

    y, in_dtype, half = computing(y)
    idt = index_dtype()
    if x is None:
        mode = LABELS
        src = label
        edges = jnp.zeros((1,), jnp.float32)
        dec = jnp.zeros((1,), jnp.int32)
    else:
        assert edges is not None and dec is not None  # for mypy
        mode = X_SORTED if x_sorted else X_ANY
        src, dec = x, jnp.asarray(dec, jnp.int32).reshape(-1)
    if nan_last:
        mode += 4

    def pure(v: Array, lab: Array) -> dict[str, Array]:
        with _api.bypass():
            out = fallback(v, lab)
        return {s: out[s].astype(idt if s == "count" else v.dtype) for s in stats}

    def native(v: Array, s: Array, e: Array, d: Array, lab: Array) -> dict[str, Array]:
        del lab  # the pure-JAX road's
        return stats_call(
            BINS_TARGET, stats, (v, s, e, d), (nbins, v.shape[1]), v.dtype, idt,
            omit=omit, ddof=ddof, mode=mode,
        )  # fmt: skip

    def other(v: Array, s: Array, e: Array, d: Array, lab: Array) -> dict[str, Array]:
        return pure(v, lab)

    return rounded(differentiable(native, other, 0)(y, src, edges, dec, label), in_dtype, half)


def native_binnumber(
    x: Array, edges: Array, dec: Array, fallback: Callable[[], Array], dtype: Any = jnp.int32
) -> Array:
    """``_bin_numbers.binnumber`` of float ``x`` by the kernel ``jaxsubset_binnumber``, exactly.

    A call of its own: where the bin numbers are not read (``binned_statistic(...).statistic``
    under ``jit``) XLA drops it, so a first call neither traces nor compiles the XLA
    resolution. ``x`` and ``edges`` as :func:`x_resolvable` (``x`` in the edges' dtype),
    ``dec`` the ``()`` decimals of SciPy's last-edge rule (or ``(2,)``, the real number of
    bins following, as :func:`native_bins`'); ``fallback()`` the pure-JAX
    ``binnumber`` (the other platforms' branch, see ``_api.branch``). Piecewise constant:
    no derivative flows through ``x``.

    ``dtype``: int32 or int64, the result's (written by the kernel: no conversion pass).

    Returns:
        ``(N,)`` bin numbers in ``dtype`` (0 below, ``nbins + 1`` above or NaN), as
        ``binnumber``'s.
    """
    idt = dtype

    def native(p: Array, e: Array, d: Array) -> Array:
        out = jax.ShapeDtypeStruct(p.shape, idt)
        return jax.ffi.ffi_call(BINNUMBER_TARGET, out, vmap_method="expand_dims")(p, e, d)

    def pure(p: Array, e: Array, d: Array) -> Array:
        with _api.bypass():
            return fallback().astype(idt)

    p = jax.lax.stop_gradient(x)
    return branch(native, pure, p, edges, jnp.asarray(dec, jnp.int32).reshape(-1))
