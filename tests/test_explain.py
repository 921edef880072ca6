"""``jaxsubset.explain``: the ONE chooser's decisions, printable, overridden by ``method=``,
and what actually runs (the roads are spied on where it matters)."""

import jax
import numpy as np
import pandas as pd
import pytest

import jaxsubset
from jaxsubset._statistics import _dispatch
from references import FLOAT, tol


RNG = np.random.default_rng(28)
N = 200
X = np.arange(N, dtype=FLOAT)
Y = RNG.normal(size=N).astype(FLOAT)


@pytest.fixture(autouse=True)
def _pure_jax_roads(monkeypatch):
    """The pure-JAX roads' choices (on the CPU the native road, where built, takes every range
    and window statistic: test_native_reports_the_native_road)."""
    monkeypatch.setenv("JAXSUBSET_NATIVE", "off")


def test_a_few_long_ranges_take_the_padded_road_many_take_the_tree():
    few = jaxsubset.explain(jaxsubset.range_statistic, Y, jaxsubset.ranges.chunks(X, 4), "mean")
    (choice,) = few.choices
    assert choice.layout == "ranges" and choice.roads == (("mean", "reference"),)
    assert str(few) == (
        "range_statistic: ranges: mean -> reference "
        "(4 ranges over 200 points, padded road fits (folded=True, order=False))"
    )
    np.testing.assert_allclose(few.result, Y.reshape(4, -1).mean(axis=1), **tol())
    many = jaxsubset.explain(
        jaxsubset.range_statistic, Y, jaxsubset.ranges.rolling(X, 5.0), ("std", "median")
    )
    assert many.choices[0].roads == (("std", "tree"), ("median", "wavelet"))
    want = pd.Series(Y.astype(np.float64)).rolling(5, min_periods=1).std(ddof=0)
    np.testing.assert_allclose(many.result["std"], want, **tol())


def test_method_overrides_the_choice():
    r = jaxsubset.ranges.chunks(X, 4)
    e = jaxsubset.explain(jaxsubset.range_statistic, Y, r, "mean", method="tree")
    assert e.choices[0].roads == (("mean", "tree"),)
    assert str(e).startswith("range_statistic (method='tree'): ranges: mean -> tree")
    with pytest.raises(ValueError, match="method='tree' cannot compute 'median'"):
        jaxsubset.explain(jaxsubset.range_statistic, Y, r, "median", method="tree")


def test_windows_report_the_layout_that_runs(monkeypatch):
    """Evenly spaced x: x-width windows are fixed-count ones on the block road; irregular x
    keeps the ranges on the tree. The block road is spied on: the report is what ran."""
    ran = []
    real = _dispatch.sliding_statistics
    monkeypatch.setattr(
        _dispatch, "sliding_statistics", lambda *a, **k: ran.append(1) or real(*a, **k)
    )
    e = jaxsubset.explain(jaxsubset.rolling_statistic, X, Y, 4.0, "mean")
    assert e.choices[0].layout == "sliding" and e.choices[0].fixed == (4, 0)
    assert e.choices[0].roads == (("mean", "blocks"),)
    assert ran
    want = pd.Series(Y.astype(np.float64)).rolling(4, min_periods=1).mean()
    np.testing.assert_allclose(e.result, want, **tol())
    ran.clear()
    irregular = np.cumsum(RNG.choice([0.5, 1.0, 3.0], N)).astype(FLOAT)
    e = jaxsubset.explain(jaxsubset.rolling_statistic, irregular, Y, 4.0, "mean")
    assert (e.choices[0].layout, e.choices[0].roads) == ("ranges", (("mean", "tree"),))
    assert not ran
    forced = jaxsubset.explain(jaxsubset.rolling_statistic, X, Y, 4.0, "mean", method="tree")
    assert forced.choices[0].layout == "ranges"
    e = jaxsubset.explain(jaxsubset.rolling_statistic, None, Y, statistic="max", window=3)
    assert (e.choices[0].layout, e.choices[0].roads) == ("sliding", (("max", "blocks"),))


def test_bins_and_jit():
    e = jaxsubset.explain(jaxsubset.binned_statistic, X, Y, "mean", bins=5)
    (choice,) = e.choices
    assert choice.request.kind == "bins"
    # sorted x, 40 points a bin: whole blocks on every backend (the native road is off here)
    assert choice.layout == "blocks" and choice.roads == (("mean", "blocks"),)
    few = jaxsubset.explain(jaxsubset.binned_statistic, X, Y, "mean", bins=50).choices[0]
    assert few.layout == ("labels" if jax.default_backend() == "cpu" else "ranges")
    # under jit the choice is made while tracing: a cached program records nothing
    f = jax.jit(lambda y: jaxsubset.range_statistic(y, jaxsubset.ranges.chunks(X, 4), "sum"))
    assert len(jaxsubset.explain(f, Y).choices) == 1
    cached = jaxsubset.explain(f, Y)
    assert cached.choices == () and "no road chosen" in str(cached)
    np.testing.assert_allclose(cached.result, Y.reshape(4, -1).sum(axis=1), **tol())


def test_native_reports_the_native_road(monkeypatch):
    from jaxsubset import _native

    monkeypatch.delenv("JAXSUBSET_NATIVE", raising=False)
    if not _native.usable():
        pytest.skip(f"the native road is {_native.status()}")
    e = jaxsubset.explain(jaxsubset.range_statistic, Y, jaxsubset.ranges.rolling(X, 5.0), "std")
    assert e.choices[0].roads == (("std", "native"),)
    want = pd.Series(Y.astype(np.float64)).rolling(5, min_periods=1).std(ddof=0)
    np.testing.assert_allclose(e.result, want, **tol())


def test_native_bins_of_an_integer_axis_take_whole_blocks(monkeypatch):
    """The kernel finds the bins of float x itself; those of an integer (time) axis would
    come from XLA first, every point's, so sorted integer x takes whole blocks (the bins of
    a few points) and float x the native pass. Both equal NumPy's."""
    from jaxsubset import _native

    monkeypatch.delenv("JAXSUBSET_NATIVE", raising=False)
    if not _native.usable():
        pytest.skip(f"the native road is {_native.status()}")
    xi = np.arange(Y.shape[0], dtype=np.int32) * 3
    want = Y.astype(np.float64).reshape(5, -1).mean(axis=1)
    for x, layout in ((xi, "blocks"), (xi.astype(FLOAT), "labels")):
        e = jaxsubset.explain(jaxsubset.binned_statistic, x, Y, "mean", bins=5)
        assert e.choices[0].layout == layout, x.dtype
        np.testing.assert_allclose(e.result.statistic, want, **tol())
