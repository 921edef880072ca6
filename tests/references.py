"""Independent NumPy references and mode helpers shared by the tests."""

import os

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
