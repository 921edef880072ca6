"""The padded (reference) road in batches: many windows reduced with bounded memory, equal to
one batch and to pandas."""

import jax
import numpy as np
import pandas as pd

import jaxsubset
from jaxsubset._statistics import _reference
from references import FLOAT, tol


def test_rolling_median_in_batches_equals_pandas_and_one_batch(monkeypatch):
    rng = np.random.default_rng(5)
    x = np.cumsum(rng.exponential(1.0, 700)).astype(FLOAT)
    y = rng.normal(size=700).astype(FLOAT)
    y[[3, 300]] = np.nan
    stats = ("median", "mean", "count")
    whole = jaxsubset.rolling_statistic(x, y, 9.0, stats, capacity=32, method="reference")
    # 32 slots x 1 channel x 5 ranges per batch: 140 batches, the last one padded
    monkeypatch.setattr(_reference, "MAX_SLOTS", 32 * 5)
    jax.clear_caches()  # programs compiled with the old batch size must not be reused
    parts = jaxsubset.rolling_statistic(x, y, 9.0, stats, capacity=32, method="reference")
    t = pd.to_datetime(np.round(x.astype(np.float64) * 1e9).astype(np.int64))
    want = pd.Series(y.astype(np.float64), index=t).rolling("9s").median().to_numpy()
    np.testing.assert_allclose(np.asarray(parts["median"]), want, **tol())
    for s in stats:
        np.testing.assert_allclose(np.asarray(parts[s]), np.asarray(whole[s]), **tol())
    jax.clear_caches()
