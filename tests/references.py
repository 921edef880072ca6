"""Independent NumPy references and mode helpers shared by the tests."""

import os
import warnings

import jax
import numpy as np
import pytest


# The JAX mode this run tests (tests/conftest.py sets it from JAX_ENABLE_X64, default on).
X64 = bool(jax.config.jax_enable_x64)

#: skip marker for tests that need JAX's 64-bit mode (time axes, int64 data, float64 results)
needs_x64 = pytest.mark.skipif(
    not X64, reason="needs JAX's 64-bit mode (int64 nanoseconds, float64); JAX_ENABLE_X64=1"
)

#: the default float of this mode: what a float64 NumPy input becomes in JAX
FLOAT = np.float64 if X64 else np.float32


def tol(dtype=None) -> dict:
    """``rtol``/``atol`` for ``np.testing.assert_allclose`` of results computed in ``dtype``.

    ``dtype`` None means the default float of this mode (float64 with x64, else float32). The
    float32 tolerance allows a few ulps per term of the sums behind means and variances.
    """
    dt = np.dtype(dtype) if dtype is not None else np.dtype(FLOAT)
    if dt == np.float64:
        return dict(rtol=1e-10, atol=1e-12)
    if dt == np.float16:
        return dict(rtol=1e-2, atol=1e-3)
    return dict(rtol=2e-5, atol=1e-6)


# What nan_policy="omit" must equal: NumPy's NaN-skipping reductions.
NAN_FUNCS = {
    "sum": np.nansum,
    "mean": np.nanmean,
    "var": np.nanvar,
    "std": np.nanstd,
    "min": np.nanmin,
    "max": np.nanmax,
    "median": np.nanmedian,
}


def pandas_rows(x_int, width_int, closed):
    """pandas' offset-window bounds ``(start, count)`` for one window per row of int64 ``x``.

    The row rule for ties (the window of row ``i`` ends AT row ``i``), straight from
    ``pandas._libs.window.indexers.calculate_variable_window_bounds``.
    """
    from pandas._libs.window.indexers import calculate_variable_window_bounds

    x_int = np.asarray(x_int, np.int64)
    start, end = calculate_variable_window_bounds(
        x_int.size, int(width_int), None, False, closed, x_int
    )
    start = np.minimum(start, end)
    return start.astype(np.int64), (end - start).astype(np.int64)


def fitted_capacity(counts) -> int:
    """The smallest power of two holding every count (at least 1): a reference road's capacity.

    The reference road reduces ``capacity`` padded slots per range, and under the suite's quick
    build (conftest.py) those slots are most of a comparison test's time; a capacity fitted to
    the data keeps the comparison exact (every range fits, none is NaN for overflowing) and
    pads each range to at most twice its length.
    """
    m = int(np.max(np.asarray(counts), initial=1))
    return 1 << max(m - 1, 0).bit_length()


def bin_capacity(x, edges) -> int:
    """:func:`fitted_capacity` of the bins of ``edges`` (``numpy.histogram``'s counts): what an
    eager ``binned_statistic`` derives (the largest bin, rounded up to a power of two)."""
    return fitted_capacity(np.histogram(np.asarray(x), np.asarray(edges))[0])


def window_capacity(x, width) -> int:
    """:func:`fitted_capacity` of the x-width windows of ``width`` on sorted ``x``, whatever
    ``closed`` rule and rounding of the bounds: each window taken one unit of x wider."""
    x = np.asarray(x, np.float64)
    lo = np.searchsorted(x, x - (float(width) + 1.0), side="left")
    return fitted_capacity(np.searchsorted(x, x, side="right") - lo)


# XLA's CPU backend as users have it (the suite compiles for compile speed, conftest.py): for the
# claims of bit-for-bit equality between two roads, which hold as users compile them
FULLY_OPTIMISED = {
    "xla_backend_optimization_level": 3,
    "xla_llvm_disable_expensive_passes": False,
    "xla_cpu_use_fusion_emitters": True,
}


# whether this run compiles with the suite's quick settings (conftest.py): there, two programs
# of different shapes may round the higher moments (skew, kurt) differently in the last bits
QUICK_BUILD = "xla_cpu_use_fusion_emitters=false" in os.environ.get("XLA_FLAGS", "")


def run_fully_optimised(fn, *args):
    """``jax.jit(fn)(*args)`` compiled at XLA's full backend optimisation."""
    import jax

    return jax.jit(fn).lower(*args).compile(FULLY_OPTIMISED)(*args)


def range_oracle(
    y: np.ndarray, start, count, statistic: str, ddof: int = 0, omit: bool = False
) -> np.ndarray:
    """NumPy slicing: the statistic of ``y[start:start + count]`` for every range, in float64.

    The one per-range oracle of the suite: ``y`` is ``(N, C)``; ranges past either end are
    clipped as NumPy slices are; ``omit`` drops NaN first (``nan_policy="omit"``). Returns
    ``(K, C)`` with the library's conventions: count and sum of an empty range 0, every other
    statistic NaN, var/std/sem NaN where ``n - ddof <= 0``, skew/kurt by pandas' rules.
    """
    raw = np.asarray(start)
    start = np.clip(raw, 0, len(y))
    stop = np.clip(raw + np.maximum(np.asarray(count), 0), start, len(y))
    out = []
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for a, b in zip(start.reshape(-1), stop.reshape(-1), strict=True):
            seg = y[a:b].astype(np.float64)
            keep = ~np.isnan(seg) if omit else np.ones(seg.shape, bool)
            row = []
            for c in range(y.shape[1]):
                v = seg[keep[:, c], c]
                n = len(v)
                if statistic == "count":
                    row.append(n)
                elif statistic == "sum":
                    row.append(v.sum())
                elif n == 0 or (statistic in ("var", "std", "sem") and n - ddof <= 0):
                    row.append(np.nan)
                elif statistic in ("var", "std"):
                    row.append(getattr(np, statistic)(v, ddof=ddof))
                elif statistic == "sem":
                    row.append(np.std(v, ddof=ddof) / np.sqrt(n))
                elif statistic in ("first", "last"):  # with propagate: the point, NaN or not
                    row.append(v[0] if statistic == "first" else v[-1])
                elif statistic in ("skew", "kurt"):
                    row.append(shape_oracle(v, statistic, y.dtype))
                elif statistic in ("mean", "min", "max", "median"):
                    row.append(getattr(np, statistic)(v))
                else:  # a new statistic needs its oracle here before the matrix passes
                    raise NotImplementedError(f"no NumPy oracle for statistic {statistic!r}")
            out.append(row)
    return np.asarray(out, float)


def shape_oracle(v: np.ndarray, statistic: str, dtype) -> float:
    """pandas' rules (bias-corrected G1/G2 by SciPy) for one subset's values, in float64."""
    import scipy.stats

    need = 3 if statistic == "skew" else 4
    if len(v) < need or not np.isfinite(v).all() or np.ptp(v) == 0:
        return np.nan
    v = v - v[0]  # exact for nearby values: SciPy's rounded mean of 1e9 + noise would cost
    # ~1e-7 of the skewness (both statistics are shift-invariant)
    # where the moments overflow the data's float dtype the library says NaN
    big = np.finfo(dtype if np.dtype(dtype).kind == "f" else FLOAT).max / 4
    m2 = np.sum((v - v.mean()) ** 2)
    if m2 ** (1.5 if statistic == "skew" else 2.0) > big:  # M3 <= M2**1.5, M4 <= M2**2
        return np.nan
    if statistic == "skew":
        return float(scipy.stats.skew(v, bias=False))
    return float(scipy.stats.kurtosis(v, bias=False))


def quantile_oracle(y, start, count, q, omit):
    """NumPy's ``quantile``/``nanquantile`` (linear) of every range, in float64."""
    raw = np.asarray(start)
    start = np.clip(raw, 0, len(y))
    stop = np.clip(raw + np.maximum(np.asarray(count), 0), start, len(y))
    f = np.nanquantile if omit else np.quantile
    out = np.full((len(start), y.shape[1]), np.nan)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for k, (a, b) in enumerate(zip(start, stop, strict=True)):
            for c in range(y.shape[1]):
                v = y[a:b, c].astype(np.float64)
                if (~np.isnan(v)).sum() if omit else len(v):
                    out[k, c] = f(v, q)
    return out
