"""Statistics between channels, "cov" and "corr", and the quantile of binned_statistic.

Against pandas' pairwise ``rolling().cov()/.corr()`` (fixed-count and offset windows, ties,
NaN left out pairwise, min_periods), ``numpy.cov``/``numpy.corrcoef`` per range and per bin,
``numpy.quantile`` and SciPy's ``binned_statistic`` with a callable; exact 0 for constant
channels, results unchanged by huge values outside their windows; eager, jit (no
recompilation), vmap and grad. Few programs: every call asks for several statistics.
"""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsubset
from checks import compile_and_check, vmap_and_check
from references import FLOAT, X64


pd = pytest.importorskip("pandas")
stats = pytest.importorskip("scipy.stats")

CLOSE = dict(rtol=1e-9, atol=1e-11) if X64 else dict(rtol=1e-4, atol=2e-5)


def _data(n: int = 40, c: int = 3, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    y = rng.normal(size=(n, c))
    y[:, 1] += 0.6 * y[:, 0] + 1e3  # correlated, on a large offset
    if c > 2:
        y[:, 2] -= 0.3 * y[:, 0]
    y[5 % n, 0] = y[30 % n, 1] = y[17 % n, c - 1] = np.nan
    return y.astype(FLOAT)


def _pandas_pairs(frame, stat: str) -> np.ndarray:
    n, c = frame.obj.shape
    return getattr(frame, stat)().to_numpy().reshape(n, c, c)


def _assert_close(got, want, err_msg=""):
    got = np.asarray(got)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=f"{err_msg}: NaN")
    np.testing.assert_allclose(got, want, err_msg=err_msg, **CLOSE)


def _fixed(y, method="auto"):
    """The fixed-count call every test shares (one program per road)."""
    return jaxsubset.rolling_statistic(None, y, statistic=("cov", "corr"), window=6, ddof=1,
                                       min_periods=3, method=method)  # fmt: skip


def _offset(x, y):
    return jaxsubset.rolling_statistic(x, y, 4.0, ("cov", "corr"), ddof=1, min_periods=2)


@pytest.mark.parametrize("method", ["blocks", "tree", "reference"])
def test_fixed_count_windows_equal_pandas(method):
    """``window=w``: pandas' ``DataFrame.rolling(w, min_periods).cov()/.corr()`` (ddof=1,
    NaN left out per pair); every road the same matrices."""
    y = _data()
    out = _fixed(y, method)
    frame = pd.DataFrame(y.astype(np.float64)).rolling(6, min_periods=3)
    _assert_close(out["cov"], _pandas_pairs(frame, "cov"), "cov")
    _assert_close(out["corr"], _pandas_pairs(frame, "corr"), "corr")


def test_offset_windows_with_ties_equal_pandas():
    """x-width windows: pandas' ``rolling("4s").cov()/.corr()`` on a time index with ties
    (the window of row i ends at row i), min_periods counting each pair's points."""
    y = _data()
    rng = np.random.default_rng(1)
    x = np.cumsum(rng.integers(0, 3, y.shape[0])).astype(FLOAT)  # steps of 0: ties
    out = _offset(x, y)
    frame = pd.DataFrame(y.astype(np.float64), index=pd.to_datetime(x.astype(np.int64), unit="s"))
    frame = frame.rolling("4s", min_periods=2)
    _assert_close(out["cov"], _pandas_pairs(frame, "cov"), "cov")
    _assert_close(out["corr"], _pandas_pairs(frame, "corr"), "corr")


def test_ranges_and_bins_equal_numpy():
    """``range_statistic`` per chunk: ``numpy.cov(ddof=)``/``numpy.corrcoef`` with NaN
    propagated (NumPy's rule: the entries of a channel holding a NaN are NaN); the padded
    road too; ``binned_statistic``: channels leading, ``(C, C, nbins)``, ddof 0."""
    y = _data()
    x = np.arange(y.shape[0], dtype=FLOAT)
    r = jaxsubset.ranges.chunks(x, 6)
    start, count = np.asarray(r.start), np.asarray(r.count)
    y64 = y.astype(np.float64)
    want_cov = np.stack(
        [np.cov(y64[a : a + c], rowvar=False, ddof=2) for a, c in zip(start, count, strict=True)]
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        want_corr = np.stack([np.corrcoef(y64[a : a + c], rowvar=False)
                              for a, c in zip(start, count, strict=True)])  # fmt: skip
    # NumPy's corrcoef puts NaN on the diagonal of a channel holding a NaN, as here
    for method in ("auto", "reference"):
        out = jaxsubset.range_statistic(y, r, ("cov", "corr"), ddof=2, method=method)
        _assert_close(out["cov"], want_cov, f"cov {method}")
        _assert_close(out["corr"], want_corr, f"corr {method}")
    # bins: SciPy's layout, channels first; unsorted x takes the label roads
    clean = np.nan_to_num(y64, nan=0.0).astype(FLOAT)
    perm = np.random.default_rng(2).permutation(x.shape[0])
    xs, vs = x[perm], clean[perm].T
    res = jaxsubset.binned_statistic(xs, vs, "cov", bins=4)
    d = np.asarray(res.binnumber)
    want = np.stack([np.cov(vs[:, d == k].astype(np.float64), ddof=0) for k in range(1, 5)], -1)
    _assert_close(res.statistic, want, "binned cov")


def test_exact_and_local():
    """A constant channel: covariance exactly 0, correlation NaN (pandas); a result never
    changes with a huge value outside its window (blocks, tree and x-width, bit for bit); an
    inf makes its entries NaN; the diagonal of corr is exactly 1, every entry in [-1, 1]."""
    rng = np.random.default_rng(3)
    n = 48
    y = (rng.normal(size=(n, 3)) + 1e4).astype(FLOAT)
    y[20:32, 0] = 3.25
    polluted = y.copy()
    polluted[2] = 1e30
    polluted[45, 1] = -1e30
    with_inf = y.copy()
    with_inf[10, 0] = np.inf
    far = np.r_[0:2, 8:45]  # windows holding neither polluted row
    x = np.arange(n, dtype=FLOAT)
    calls = (_fixed, lambda v: _fixed(v, "tree"), lambda v: _offset(x, v))
    for call in calls:  # the offset windows of 4.0 on this x: the last 4 points
        a, b, c = call(y), call(polluted), call(with_inf)
        for s in ("cov", "corr"):
            np.testing.assert_array_equal(np.asarray(a[s])[far], np.asarray(b[s])[far], err_msg=s)
        cov, corr = np.asarray(a["cov"]), np.asarray(a["corr"])
        assert (cov[25:32, 0, :] == 0).all() and (cov[25:32, :, 0] == 0).all()
        assert np.isnan(corr[25:32, 0, :]).all() and np.isnan(corr[25:32, :, 0]).all()
        assert (corr[3:20, 1, 1] == 1).all() and (np.abs(corr[3:20]) <= 1).all()
        assert np.isfinite(cov[3:20]).all()
        inf_cov = np.asarray(c["cov"])
        assert np.isnan(inf_cov[10:13, 0, :]).all() and np.isnan(inf_cov[10:13, :, 0]).all()
        assert np.isfinite(inf_cov[10:13, 1:, 1:]).all() and np.isfinite(inf_cov[9]).all()


def test_jit_vmap_grad_one_program():
    """Under jit: one compilation for new values; vmap over series; the gradient of the
    block road equals the padded road's and is finite (a constant window included)."""
    y = np.nan_to_num(_data(n=24), nan=1.0)
    y[8:14, 0] = 2.0

    compile_and_check(_fixed, [(y,), (y * 2 + 1,), (y[::-1].copy(),)])
    vmap_and_check(_fixed, (np.stack([y, -y]),))

    def loss(v, method):
        out = _fixed(v, method)
        return jnp.nansum(out["cov"]) + jnp.nansum(out["corr"])

    g = jax.jit(jax.grad(loss), static_argnums=1)
    got, want = g(jnp.asarray(y), "blocks"), g(jnp.asarray(y), "reference")
    assert np.isfinite(np.asarray(got)).all()
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6 if X64 else 2e-3,
                               atol=1e-8 if X64 else 1e-3)  # fmt: skip


def test_subsets_methods():
    """``Subsets.cov``/``corr``: ``numpy.cov(rowvar=False)``/``corrcoef`` per subset; NaN
    where ``n - ddof <= 0`` and below 2 points."""
    y = np.nan_to_num(_data(n=12, c=2), nan=0.5)
    s = jaxsubset.chunks(jnp.arange(12.0), jnp.asarray(y), 3)
    want = np.stack([np.cov(y[k : k + 4].astype(np.float64), rowvar=False) for k in (0, 4, 8)])
    _assert_close(s.cov(ddof=1), want, "Subsets.cov")
    want = np.stack([np.corrcoef(y[k : k + 4].astype(np.float64), rowvar=False) for k in (0, 4, 8)])
    _assert_close(s.corr(), want, "Subsets.corr")
    assert np.isnan(np.asarray(s.cov(ddof=4))).all()
    one = jaxsubset.chunks(jnp.arange(12.0), jnp.asarray(y), 12)
    assert np.isnan(np.asarray(one.corr())).all() and (np.asarray(one.cov()) == 0).all()


def test_pair_errors_name_the_statistic():
    y1 = np.arange(10.0)
    with pytest.raises(ValueError, match=re.escape("statistic 'cov' is between channels")):
        jaxsubset.rolling_statistic(None, y1, statistic="cov", window=3)
    with pytest.raises(ValueError, match=re.escape("statistic 'corr' is between channels")):
        jaxsubset.binned_statistic(y1, np.ones((2, 2, 10)), "corr", bins=2)
    y2 = np.ones((10, 2))
    with pytest.raises(ValueError, match=re.escape("statistic 'cov' is between channels")):
        jaxsubset.stream((y1, y2), "chunks", n=3, statistic="cov")
    with pytest.raises(ValueError, match=re.escape("method='scatter' cannot compute 'cov'")):
        jaxsubset.binned_statistic(y1, y2.T, "cov", bins=2, method="scatter")
    from jaxsubset.cli._files import InputError
    from jaxsubset.cli._options import parse_stats

    with pytest.raises(InputError, match=re.escape("'corr' is between channels")):
        parse_stats(["mean,corr"])  # the command: one column per statistic and channel
    assert "cov" not in jaxsubset.STATISTICS  # the stream, shard and command: per channel only


def test_binned_quantile():
    """``statistic="quantile", q=``: ``numpy.quantile`` (linear) per bin, SciPy's
    ``binned_statistic`` with that callable; sorted and unsorted x, the padded road too; NaN
    propagated (as ``numpy.quantile``) or omitted; ties; under jit."""
    rng = np.random.default_rng(4)
    n = 60
    x = np.sort(rng.uniform(0, 10, n)).astype(FLOAT)
    v = np.round(rng.normal(size=(2, n)), 1).astype(FLOAT)  # many ties
    v[0, 3] = np.nan

    def scipy(xs, vs, q, bins=5, nanfunc=np.quantile, **kw):
        return stats.binned_statistic(xs, vs, lambda a: nanfunc(a, q), bins=bins, **kw).statistic

    def check(got, want, msg):
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=msg)
        np.testing.assert_allclose(got, want, **CLOSE, err_msg=msg)

    for q in (0.3, 1.0):
        got = jaxsubset.binned_statistic(x, v, "quantile", bins=5, q=q).statistic
        check(got, scipy(x, v, q), f"q={q}")
    got = jaxsubset.binned_statistic(x, v, "quantile", bins=5, q=0.3, nan_policy="omit")
    check(got.statistic, scipy(x, v, 0.3, nanfunc=np.nanquantile), "omit")
    perm = rng.permutation(n)
    edges = [0, 2, 2.5, 7, 11]
    want = scipy(x, v, 0.3, bins=edges)
    for method in ("auto", "reference"):
        got = jaxsubset.binned_statistic(x[perm], v[:, perm], "quantile", bins=edges, q=0.3,
                                         method=method)  # fmt: skip
        check(got.statistic, want, f"unsorted {method}")
    # under jit: traced x, the label sort road
    jit = jax.jit(lambda a, b: jaxsubset.binned_statistic(a, b, "quantile", bins=5, q=0.3,
                                                          range=(0.0, 10.0)).statistic)  # fmt: skip
    check(np.asarray(jit(x, v)), scipy(x, v, 0.3, range=(0, 10)), "jit")
    with pytest.raises(TypeError, match="needs `q="):
        jaxsubset.binned_statistic(x, v, "quantile", bins=5)
    with pytest.raises(ValueError, match="`q` is given"):
        jaxsubset.binned_statistic(x, v, "mean", bins=5, q=0.5)
