"""The bin edges of :func:`jaxsubset.binned_statistic`: SciPy's ``numpy.histogram`` edges of a
number of bins over a range, given edges, run-time guards for traced ones, and on a time axis
exact integer nanosecond edges and calendar periods (pandas ``resample``'s bins).
"""

import builtins
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ._bin_numbers import host_proven
from ._core import (
    Array,
    bound_array,
    concrete_only,
    error_if,
    now_or_traced,
    period_edges,
    static_int,
    to_datetime64,
    traced_array,
    x_to_ns,
)


def edges_dtype(x: Array) -> Any:
    return x.dtype if jnp.issubdtype(x.dtype, jnp.floating) else jnp.result_type(float)


def bin_count(bins: Any, func: str) -> int | None:
    """The static number of bins when ``bins`` is an int, None when it holds the edges."""

    def traced(b: Any) -> None:
        if traced_array(b).ndim == 0:
            static_int(b, "bins", func)  # raises: the number of bins sets a shape

    now_or_traced(bins, traced=traced)
    if isinstance(bins, int | np.integer) and not isinstance(bins, bool | np.bool_):
        return static_int(bins, "bins", func)
    return None


def binned_edges(
    x: Array, bins: Any, range: Any, func: str
) -> tuple[Array, Array, bool, bool | None]:
    """``(edges, dec, uniform, proven)``: SciPy's edges of ``bins`` (a number of equal bins
    over ``range`` or the extremes of ``x``, or the edges themselves), checked (a run-time
    guard for traced ones), the decimals SciPy rounds ``x`` to near an edge, and, for edges
    known on the host (concrete ``bins``/``range``/``x``, also under ``jit``),
    ``_bin_numbers.host_proven`` of them (else None: decided at run time)."""
    edt = edges_dtype(x)
    nbins = bin_count(bins, func)
    uniform = nbins is not None
    edges: Any  # NumPy's where concrete, else traced
    if nbins is not None:  # `uniform`
        k = nbins  # (an int in the lambdas below, for mypy)
        if range is not None:  # a pair, or an array of shape (2,) (also traced)
            lo, hi = now_or_traced(
                range, lambda r: host_pair(r, func), lambda r: stacked_pair(r, func)
            )
        else:
            if x.shape[0] == 0:
                raise ValueError(f"{func}: `x` is empty; pass `range` to define the bins")
            lo, hi = extremes(x)
        edges = now_or_traced(
            (lo, hi),
            lambda p: host_linspace(p[0], p[1], k, edt, func),
            lambda p: traced_linspace(p[0], p[1], k, edt),
        )
    else:
        # concrete edges stay NumPy's until checked (under jit a device array is a tracer)
        edges = now_or_traced(bins, lambda b: np.asarray(b, float), traced_array)
        if edges.ndim != 1 or edges.shape[0] < 2:
            raise ValueError(
                f"{func}: `bins` must be an int or a 1-D array of at least 2 edges, got shape "
                f"{tuple(edges.shape)}"
            )
        edges = edges.astype(edt)
        nbins = edges.shape[0] - 1
    if isinstance(edges, np.ndarray):
        dec = host_decimals(edges, func)
        proven = host_proven(edges)
        return jax.device_put(edges), dec, uniform, proven  # edt already: no program
    edges, dec = traced_decimals(edges, func, uniform)
    return edges, dec, uniform, None


def host_pair(rg: Any, func: str) -> tuple[Any, Any]:
    """A concrete ``range``: ``(lo, hi)``, ``[(lo, hi)]`` or an array of shape (2,)."""
    if len(rg) == 1:
        rg = rg[0]
    if isinstance(rg, tuple | list) and len(rg) == 2:
        return rg[0], rg[1]
    return stacked_pair(rg, func)


def stacked_pair(rg: Any, func: str) -> tuple[Any, Any]:
    """``range`` as one array of shape (2,) (a traced one, or an array), split."""
    rg = jnp.asarray(rg).reshape(-1)
    if rg.shape != (2,):
        raise ValueError(f"{func}: `range` must be (lo, hi), got shape {rg.shape}")
    return rg[0], rg[1]


def host_linspace(lo: Any, hi: Any, nbins: int, edt: Any, func: str) -> np.ndarray:
    """numpy.histogram's equal edges over a concrete range, checked (finite, ordered)."""
    flo, fhi = float(lo), float(hi)
    if not (np.isfinite(flo) and np.isfinite(fhi)):
        raise ValueError(f"{func}: `range` must be finite, got ({flo}, {fhi})")
    if fhi < flo:
        raise ValueError(f"{func}: in `range`, start must be <= stop, got ({flo}, {fhi})")
    if flo == fhi:
        flo, fhi = flo - 0.5, fhi + 0.5
    return np.linspace(flo, fhi, nbins + 1, dtype=np.dtype(edt))


def traced_linspace(lo: Any, hi: Any, nbins: int, edt: Any) -> Array:
    """:func:`host_linspace` of a traced range (checked at run time with the edges)."""
    wdt = jnp.promote_types(edt, jnp.result_type(float))
    lo = jnp.asarray(lo, wdt)
    hi = jnp.asarray(hi, wdt)
    same = lo == hi
    lo, hi = jnp.where(same, lo - 0.5, lo), jnp.where(same, hi + 0.5, hi)
    # a true division, as numpy.linspace's: XLA multiplies by the rounded 1 / nbins
    # where the divisor is a constant or (under vmap) a broadcast scalar, one ulp off
    # (3.8e22 for linspace's 0.0 on a range of +-3e38); `lo - lo` (0 for the finite
    # lo here; XLA does not fold it for floats) makes the divisor data of lo's shape
    step = (hi - lo) / (nbins + (lo - lo))
    return (jnp.arange(nbins + 1, dtype=wdt) * step + lo).at[-1].set(hi).astype(edt)


def host_decimals(edges: Any, func: str) -> Array:
    """The decimals SciPy rounds ``x`` to near concrete edges (which must increase)."""
    # in the edges' dtype, as SciPy (and the traced form): float32 edges 0.1 apart have
    # log10 exactly -1 in float32 but -0.99999999 in float64, one decimal less
    gap = np.min(np.diff(np.asarray(edges)))
    if not gap > 0:
        raise ValueError(
            f"{func}: `bins` edges must increase strictly; the smallest edge difference "
            f"is {float(gap)!r}"
        )
    return jnp.asarray(int(-np.log10(gap)) + 6, jnp.int32)


def traced_decimals(edges: Array, func: str, uniform: bool) -> tuple[Array, Array]:
    """Traced edges guarded at run time (:func:`guard_edges`) and their decimals."""
    edges = guard_edges(edges, func, traced_range=uniform)
    dmin = jnp.min(jnp.diff(edges))
    return edges, (jnp.trunc(-jnp.log10(dmin)) + 6).astype(jnp.int32)


def guard_edges(edges: Array, func: str, *, traced_range: bool) -> Array:
    """Traced bin edges guarded by a run-time check: finite and strictly increasing.

    Concrete edges and ranges are checked on the host; traced ones (edges, a ``range``, or
    the extremes of traced ``x``) cannot be, and descending or NaN edges would put points in
    the wrong bins silently. The check (:func:`error_if`) costs only its predicate until it
    fires, and its message names the first pair of edges that does not increase.
    """
    d = jnp.diff(edges)
    bad = ~(d > 0)
    if jnp.issubdtype(edges.dtype, jnp.inexact):
        bad = bad | ~jnp.isfinite(edges[1:]) | ~jnp.isfinite(edges[:1])
    source = "the bins of `range` (or of the extremes of `x`)" if traced_range else "`bins`"

    def message(e: np.ndarray) -> str:
        e = np.asarray(e)
        fails = ~(e[1:] > e[:-1]) | ~np.isfinite(e[1:]) | ~np.isfinite(e[:-1])
        i = int(np.argmax(fails))
        return (
            f"{func}: {source}: the edges must be finite and increase strictly, but "
            f"edges[{i}]={e[i].item()!r}, edges[{i + 1}]={e[i + 1].item()!r}"
        )

    return error_if(edges, jnp.any(bad), message, edges)


def extremes(x: Array) -> tuple[Any, Any]:
    """``(min(x), max(x))``: on the host for concrete ``x`` (no program per new length)."""
    return now_or_traced(
        x, lambda v: (np.asarray(v).min(), np.asarray(v).max()), lambda v: (jnp.min(v), jnp.max(v))
    )


def period_bins(x: Any, tk: str | None, bins: str, rng: Any, func: str) -> np.ndarray:
    """The ``datetime64[ns]`` edges of a period ``bins`` (``"1M"``, ``"7D"``) over concrete
    dates ``x``: pandas ``resample``'s bins (:func:`jaxsubset.bin_edges`)."""
    if tk != "M":
        concrete_only(
            x,
            f"{func}: `bins`={bins!r} is a period, whose edges are computed on the host "
            "from concrete dates, but `x` is traced (inside jit/vmap): compute the edges "
            f"outside first, `edges = jaxsubset.to_ns(jaxsubset.bin_edges(dates, {bins!r}))`, "
            "and pass `bins=edges`",
        )
        what = "holds durations, not dates" if tk == "m" else "is not a time axis"
        raise TypeError(
            f"{func}: `bins`={bins!r} is a period, but `x` {what}: periods such as '1M', '1Y', "
            "'7D' need numpy.datetime64 x"
        )
    if rng is not None:
        raise ValueError(
            f"{func}: `range` goes with an int `bins`; the bins of a period ({bins!r}) cover "
            "the data"
        )
    ns = x_to_ns(x, func)
    if ns.size == 0:
        raise ValueError(f"{func}: `x` is empty; a period's bins need at least one date")
    edges = period_edges(int(ns.min()), int(ns.max()), bins, f"{func}: `bins`={bins!r}")
    return edges.view("datetime64[ns]")


def time_edges(x: Array, bins: Any, rng: Any, tk: str, func: str) -> Array:
    """The int64 nanosecond edges of ``bins`` on a time axis (``x`` already int64 nanoseconds).

    Int ``bins`` split ``range`` (dates, default the first and last time) in exact integer
    arithmetic, ``lo + floor(k * (hi - lo) / nbins)``: float64 cannot hold nanoseconds near
    1e18. Edges given as dates are converted exactly and checked (a run-time guard for traced
    ones).
    """
    nbins = bin_count(bins, func)
    if nbins is not None:  # uniform bins
        if rng is not None:
            lo, hi = now_or_traced(
                rng, lambda r: host_time_pair(r, x, tk, func), lambda r: stacked_pair(r, func)
            )
        else:
            if x.shape[0] == 0:
                raise ValueError(f"{func}: `x` is empty; pass `range` to define the bins")
            lo, hi = extremes(x)
        return now_or_traced(
            (lo, hi),
            lambda p: host_time_linspace(p[0], p[1], nbins, func),
            lambda p: traced_time_linspace(p[0], p[1], nbins, func),
        )
    edges = now_or_traced(
        bins, lambda b: jnp.asarray(bound_array(b, "bins", x, func, tk)), jnp.asarray
    )
    if edges.ndim != 1 or edges.shape[0] < 2:
        raise ValueError(
            f"{func}: `bins` must be an int or a 1-D array of at least 2 edges, got shape "
            f"{tuple(edges.shape)}"
        )
    return now_or_traced(
        edges.astype(jnp.int64),
        lambda e: host_increasing_ns(e, func),
        lambda e: guard_edges(e, func, traced_range=False),
    )


def host_time_pair(rng: Any, x: Array, tk: str, func: str) -> tuple[Any, Any]:
    """A concrete ``range`` of dates (or durations) as ``(lo, hi)`` int64 nanoseconds."""
    if len(rng) == 1 and not isinstance(rng, str):
        rng = rng[0]
    if not isinstance(rng, tuple | list | np.ndarray) or len(rng) != 2:
        raise ValueError(f"{func}: `range` must be (lo, hi) dates, got {rng!r}")
    lo_v = bound_array(rng[0], "range", x, func, tk)
    hi_v = bound_array(rng[1], "range", x, func, tk)
    pair = jnp.stack([jnp.asarray(lo_v).reshape(()), jnp.asarray(hi_v).reshape(())])
    return stacked_pair(pair, func)


def host_time_linspace(lo: Any, hi: Any, nbins: int, func: str) -> Array:
    """Equal int64 nanosecond edges over a concrete range, in exact Python integers."""
    ilo, ihi = int(lo), int(hi)
    if ihi < ilo:
        raise ValueError(
            f"{func}: in `range`, start must be <= stop, got "
            f"({to_datetime64([ilo])[0]}, {to_datetime64([ihi])[0]})"
        )
    if ilo == ihi:  # scipy widens an empty range by half a unit each side
        ilo, ihi = ilo - nbins, ihi + nbins
    if ihi - ilo < nbins:
        raise ValueError(
            f"{func}: `range` spans {ihi - ilo} ns, fewer than bins={nbins}; the edges "
            "must increase strictly"
        )
    np_edges = np.array([ilo + (k * (ihi - ilo)) // nbins for k in builtins.range(nbins + 1)])
    return jax.device_put(np_edges.astype(np.int64))  # no program per shape


def traced_time_linspace(lo: Any, hi: Any, nbins: int, func: str) -> Array:
    """:func:`host_time_linspace` of a traced range, guarded at run time."""
    lo, hi = jnp.asarray(lo, jnp.int64), jnp.asarray(hi, jnp.int64)
    same = lo == hi
    lo, hi = jnp.where(same, lo - nbins, lo), jnp.where(same, hi + nbins, hi)
    span = hi - lo
    q, r = span // nbins, span % nbins
    k = jnp.arange(nbins + 1, dtype=jnp.int64)
    return guard_edges(lo + k * q + (k * r) // nbins, func, traced_range=True)


def host_increasing_ns(edges: Array, func: str) -> Array:
    """Concrete nanosecond edges, which must increase strictly (named as dates)."""
    e = np.asarray(edges)
    bad = e[1:] <= e[:-1]
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(
            f"{func}: `bins` edges must increase strictly, but bins[{i}]="
            f"{to_datetime64(e[i : i + 1])[0]} >= bins[{i + 1}]="
            f"{to_datetime64(e[i + 1 : i + 2])[0]}"
        )
    return edges
