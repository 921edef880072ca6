"""The wavelet road: medians and quantiles of bounded ranges in O(log capacity) each.

Bit for bit against the padded reference road (NaN, +-inf, -0.0, ties, empty and too long
ranges, both NaN policies, every sort path of the row ranking, chunked rows and queries);
against pandas' rolling median/quantile (offset windows with ties in x, fixed windows,
min_periods); jit/vmap without recompiling; the gradient reaches the middle points.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
import pytest
import scipy.stats

import jaxsubset
from checks import compile_and_check, vmap_and_check
from jaxsubset import Ranges, range_statistic, rolling_statistic
from jaxsubset._statistics import _wavelet
from jaxsubset._statistics._dispatch import reduce_ranges
from jaxsubset.reduce import Request, road as choose
from references import run_fully_optimised


X64 = bool(jax.config.read("jax_enable_x64"))
FLOAT = np.float64 if X64 else np.float32
STATS = ("median", "quantile")
QS = (0.0, 0.25, 0.5, 0.9, 1.0)


@pytest.fixture(autouse=True)
def _wavelet_road(monkeypatch):
    """This module tests the pure-JAX wavelet road and its capacity rule (NaN past it); on the
    CPU "auto" otherwise takes the native road where built (tests/test_native.py)."""
    monkeypatch.setenv("JAXSUBSET_NATIVE", "off")


def _nasty(n: int, seed: int) -> np.ndarray:
    """Two channels: normal values with NaN, +-inf, -0.0/0.0 and runs of exact ties."""
    rng = np.random.default_rng(seed)
    y = rng.normal(size=(n, 2))
    y[rng.random((n, 2)) < 0.08] = np.nan
    y[rng.random((n, 2)) < 0.03] = np.inf
    y[rng.random((n, 2)) < 0.03] = -np.inf
    y[rng.random((n, 2)) < 0.05] = -0.0
    y[rng.random((n, 2)) < 0.05] = 0.0
    y[:, 1] = np.where(rng.random(n) < 0.5, np.round(y[:, 1] * 2), y[:, 1])  # ties
    return y.astype(FLOAT)


def _ranges(n: int, cap: int, k: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    start = rng.integers(0, n + 1, k)
    count = rng.integers(0, cap + 3, k)  # some longer than the capacity (NaN there), some
    return start, count  # past the end (clipped to the data)


NAMES = ("median", *(f"quantile({q!r})" for q in QS))
CAPS = (5, 16, 300)
POLICIES = (False, True)  # omit


def _both_roads(y, starts, counts):
    """Every case in one program: (wavelet, reference) of every statistic, per cap and policy."""
    out = []
    for cap, start, count in zip(CAPS, starts, counts, strict=True):
        for omit in POLICIES:
            req = Request("range_statistic", "ranges", NAMES, omit=omit, capacity=cap)
            a = reduce_ranges(y, start, count, req.replace(method="wavelet"))
            b = reduce_ranges(y, start, count, req.replace(method="reference"))
            out.append((a, b))
    return out


def test_equals_the_padded_road_bit_for_bit(monkeypatch):
    # small chunks: the row and query chunking (with padding) run on small data
    monkeypatch.setattr(_wavelet, "ROW_CHUNK", 256)
    monkeypatch.setattr(_wavelet, "QUERY_CHUNK", 100)
    # leaves of 8 ranks: deeper trees (2, 3 and 7 levels) and leaves shorter than a word
    monkeypatch.setattr(_wavelet, "LEAF", 8)
    n = 700
    y = _nasty(n, 0)
    starts, counts = zip(*(_ranges(n, cap, 300, cap) for cap in CAPS), strict=True)
    # capacity 5 and 16: many overlapping rows; 300: the whole series is one row
    assert _wavelet.geometry(n, 16) == (64, 48, 15)
    assert _wavelet.geometry(n, 300)[2] == 1
    # bit for bit as users compile it (fully optimised: both roads' quantile multiply-adds
    # are then fused alike; the suite's unoptimised build leaves one ulp between them)
    results = run_fully_optimised(_both_roads, jnp.asarray(y), starts, counts)
    cases = [(cap, omit) for cap in CAPS for omit in POLICIES]
    for (cap, omit), (a, b) in zip(cases, results, strict=True):
        for s in NAMES:
            np.testing.assert_array_equal(
                np.asarray(a[s]), np.asarray(b[s]), err_msg=f"{s} cap={cap} omit={omit}"
            )
    # an independent check of one case: NumPy's nanmedian over each clipped range
    start, count = starts[1], counts[1]
    got = np.asarray(
        range_statistic(y, Ranges(start, count), "median", capacity=16, nan_policy="omit")
    )
    for i in range(len(start)):
        part = y[start[i] : min(start[i] + count[i], n)]
        for c in range(2):
            v = part[:, c][~np.isnan(part[:, c])]
            if len(part) > 16 or v.size == 0:
                assert np.isnan(got[i, c])
            else:
                with np.errstate(invalid="ignore"):
                    np.testing.assert_array_equal(got[i, c], np.median(v))


def test_long_rows():
    """One row of 2**16 points: positions past 16 bits (the unpacked descent, int32 tables)."""
    rng = np.random.default_rng(8)
    n, cap = 40_000, 10_000
    y = np.round(rng.normal(size=n) * 50).astype(FLOAT)  # many ties
    y[rng.random(n) < 0.05] = np.nan
    m, _, rows = _wavelet.geometry(n, cap)
    assert (m, rows) == (1 << 16, 1) and _wavelet.leaves(m) == (32, 11)
    start = rng.integers(0, n, 24)
    r = Ranges(start, rng.integers(0, cap + 1, 24))

    @jax.jit
    def both(y):
        kw = dict(q=0.7, capacity=cap, nan_policy="omit")
        return (
            range_statistic(y, r, STATS, method="wavelet", **kw),
            range_statistic(y, r, STATS, method="reference", **kw),
        )

    a, b = both(jnp.asarray(y))
    for s in STATS:
        np.testing.assert_array_equal(np.asarray(a[s]), np.asarray(b[s]), err_msg=s)
    assert np.isfinite(np.asarray(a["median"])).sum() > 20


def test_row_ranking_paths():
    """Near-ties (keys equal but for their lowest bits) and exact ties rank stably."""
    rng = np.random.default_rng(5)
    eps = np.finfo(FLOAT).eps
    base = 1.0 + eps * np.arange(40)[::-1]  # descending by a few ulps: the packed x64 sort
    y = np.concatenate([base, rng.permutation(base), np.round(rng.normal(size=80))])
    start = np.arange(0, 150, 3)
    count = np.full(start.shape, 12)
    r = Ranges(start, count)

    @jax.jit
    def both(y):
        kw = dict(q=0.3, capacity=12)
        return (
            range_statistic(y, r, STATS, method="wavelet", **kw),
            range_statistic(y, r, STATS, method="reference", **kw),
        )

    a, b = both(jnp.asarray(y.astype(FLOAT)))
    for s in STATS:
        np.testing.assert_array_equal(np.asarray(a[s]), np.asarray(b[s]), err_msg=s)
    # the rows' order by itself: each row's stable argsort
    key = _wavelet.order_key(jnp.asarray(y[:64].astype(FLOAT)).reshape(2, 32))
    order, rank = jax.jit(_wavelet.row_order)(key)
    want = np.argsort(y[:64].astype(FLOAT).reshape(2, 32), axis=1, kind="stable")
    np.testing.assert_array_equal(np.asarray(order), want)
    np.testing.assert_array_equal(
        np.take_along_axis(np.asarray(rank), want, 1), np.tile(np.arange(32), (2, 1))
    )


def test_rolling_against_pandas():
    rng = np.random.default_rng(2)
    n = 400
    x = np.cumsum(rng.exponential(1.0, n)).round(0)  # ties in x
    y = rng.normal(size=n)
    y[rng.random(n) < 0.1] = np.nan
    y[100:115] = np.nan  # windows of only NaN: NaN
    s = pd.Series(y, index=pd.to_datetime(x, unit="s"))
    got = rolling_statistic(x, y.astype(FLOAT), 8.0, STATS, q=0.3, min_periods=2)
    r = s.rolling("8s", min_periods=2)
    tol = dict(rtol=1e-12 if X64 else 1e-5, atol=1e-12 if X64 else 1e-6)
    np.testing.assert_allclose(got["median"], r.median().to_numpy(), **tol)
    np.testing.assert_allclose(got["quantile"], r.quantile(0.3).to_numpy(), **tol)
    # empty windows (closed="neither" with ties and gaps): NaN, as pandas
    got = rolling_statistic(x, y.astype(FLOAT), 2.0, "median", closed="neither")
    want = s.rolling("2s", closed="neither").median().to_numpy()
    np.testing.assert_allclose(got, want, **tol)
    assert np.isnan(np.asarray(got)).sum() > 20
    # fixed-count windows: pandas' rolling(w), centred too, with min_periods
    ps = pd.Series(y)
    for w, mp, center in ((7, 3, False), (500, 1, True)):
        got = rolling_statistic(
            None, y.astype(FLOAT), statistic=STATS, q=0.9, window=w, min_periods=mp, center=center
        )
        r = ps.rolling(w, min_periods=mp, center=center)
        np.testing.assert_allclose(got["median"], r.median().to_numpy(), **tol, err_msg=f"w={w}")
        np.testing.assert_allclose(got["quantile"], r.quantile(0.9).to_numpy(), **tol)


def test_propagate_and_long_windows():
    y = _nasty(300, 3)[:, 0]
    got = rolling_statistic(None, y, statistic="median", window=9, nan_policy="propagate")
    # NumPy's median of each window's slice (pandas' rolling reads +-inf as NaN)
    want = np.array([np.median(y[max(0, i - 8) : i + 1]) for i in range(y.size)])
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12 if X64 else 1e-6)
    # a capacity below the window: NaN (never the median of a truncated window), as padded
    short = rolling_statistic(
        None, y, statistic="median", window=9, capacity=8, nan_policy="propagate"
    )
    assert np.isnan(np.asarray(short)[8:]).all()
    np.testing.assert_array_equal(np.asarray(short)[:8], np.asarray(got)[:8])


def test_jit_vmap_and_no_recompilation():
    rng = np.random.default_rng(4)
    ys = rng.normal(size=(3, 200)).astype(FLOAT)
    ys[:, ::13] = np.nan

    def fn(y):
        return rolling_statistic(None, y, statistic=STATS, q=0.75, window=11)

    compile_and_check(fn, [(ys[0],), (ys[1],)])
    vmap_and_check(fn, (ys,))


def test_gradient_is_the_middle_points():
    rng = np.random.default_rng(6)
    y = rng.permutation(np.arange(60.0)).astype(FLOAT)  # no ties
    r = Ranges(np.array([0, 5, 20, 33]), np.array([7, 10, 1, 26]))
    want = np.zeros(60)
    for a, c in zip(r.start, r.count, strict=True):
        pts = a + np.argsort(y[a : a + c])
        want[pts[(c - 1) // 2]] += 0.5
        want[pts[c // 2]] += 0.5

    @jax.jit
    def grads(v):
        def total(m, stat):
            q = 0.3 if stat == "quantile" else None
            return lambda v: jnp.sum(range_statistic(v, r, stat, q=q, capacity=32, method=m))

        return {
            (m, s): jax.grad(total(m, s))(v)
            for m in ("wavelet", "reference")
            for s in ("median", "quantile")
        }

    g = grads(jnp.asarray(y))
    np.testing.assert_array_equal(np.asarray(g[("wavelet", "median")]), want)
    for s in ("median", "quantile"):
        np.testing.assert_array_equal(
            np.asarray(g[("wavelet", s)]), np.asarray(g[("reference", s)]), err_msg=s
        )


def test_road_choice_and_errors(monkeypatch):
    # the pure-JAX roads' choice (on the CPU the native road takes them where built)
    monkeypatch.setenv("JAXSUBSET_NATIVE", "off")
    assert choose("ranges", "median", "auto", "f") == "wavelet"
    assert choose("ranges", "quantile(0.5)", "auto", "f") == "wavelet"
    assert choose("sliding", "median", "auto", "f") == "wavelet"
    assert choose("ranges", "median", "reference", "f") == "reference"
    # bins as index ranges (one row over the whole series), NaN sorted last as SciPy's
    rng = np.random.default_rng(7)
    xs, v = np.sort(rng.random(200)), rng.normal(size=200).astype(FLOAT)
    v[::9] = np.nan
    got = jaxsubset.binned_statistic(xs, v, "median", bins=6, method="wavelet").statistic
    want = scipy.stats.binned_statistic(xs, v, "median", bins=6).statistic
    np.testing.assert_allclose(got, want, rtol=1e-6)
    x = jnp.arange(20.0)
    with pytest.raises(ValueError, match="method='wavelet' cannot compute 'mean'"):
        range_statistic(x, jaxsubset.ranges.chunks(x, 4), "mean", method="wavelet")
    with pytest.raises(TypeError, match="need a static `capacity`"):
        jax.jit(lambda c: range_statistic(x, Ranges(jnp.zeros_like(c), c), "median"))(
            jnp.array([3, 4])
        )
