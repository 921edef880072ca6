"""Missing values (nan_policy) and time axes in binned_statistic, range_statistic and
rolling_statistic, against SciPy, NumPy and pandas."""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
import pytest
import scipy.stats

import jaxsubset
from checks import compile_once
from jaxsubset import binned_statistic, range_statistic, rolling_statistic
from references import NAN_FUNCS as BASE_NAN_FUNCS, needs_x64


def _rt(r: float) -> float:
    """The relative tolerance for float64 results, loosened for float32 (32-bit mode)."""
    return r if jax.config.jax_enable_x64 else max(r, 5e-5)


def _at(a: float) -> float:
    """The absolute tolerance for float64 results, loosened for float32 (32-bit mode)."""
    return a if jax.config.jax_enable_x64 else max(a, 2e-5)


BINNED = ["mean", "std", "median", "count", "sum", "min", "max"]
RNG = np.random.default_rng(11)
N = 1200
X = np.round(RNG.uniform(0.0, 10.0, N), 2)  # ties, some on edges
V = RNG.normal(3.0, 2.0, (2, N))
V[RNG.random((2, N)) < 0.1] = np.nan
V[0, (X >= 3.0) & (X < 4.0)] = np.nan  # whole bins of NaN in channel 0
V[1, :5] = np.nan
ORDER = np.argsort(X, kind="stable")
XS, VS = X[ORDER], V[:, ORDER]  # the same data with x sorted
RANGE = (0.0, 10.0)
NBINS = 20


def _scipy(x, v, statistic, bins=NBINS):
    return scipy.stats.binned_statistic(x, v, statistic, bins=bins, range=RANGE).statistic


@pytest.mark.parametrize("statistic", BINNED)
@pytest.mark.parametrize("x_sorted", [True, False])
def test_binned_omit_matches_scipy_on_the_nan_free_subset(statistic, x_sorted):
    x, v = (XS, VS) if x_sorted else (X, V)
    from references import tol  # the mode's float: float32 without x64

    got = binned_statistic(x, v, statistic, NBINS, RANGE, x_sorted=x_sorted, nan_policy="omit")
    assert got.statistic.shape == (2, NBINS)
    for c in range(2):
        real = ~np.isnan(v[c])
        want = _scipy(x[real], v[c][real], statistic)
        np.testing.assert_allclose(np.asarray(got.statistic[c]), want, equal_nan=True, **tol())
    # the binnumber does not depend on the values
    assert (
        np.asarray(got.binnumber).tolist()
        == scipy.stats.binned_statistic(x, V[0], "count", NBINS, RANGE).binnumber.tolist()
    )
    if statistic != "sum" and statistic != "count":
        assert np.isnan(np.asarray(got.statistic[0, 6:8])).all()  # the all-NaN bins


@pytest.mark.parametrize("statistic", BINNED)
@pytest.mark.parametrize("x_sorted", [True, False])
def test_binned_propagate_is_scipys_own_behaviour(statistic, x_sorted):
    x, v = (XS, VS) if x_sorted else (X, V)
    from references import tol  # the mode's float: float32 without x64

    got = np.asarray(binned_statistic(x, v, statistic, NBINS, RANGE, x_sorted=x_sorted).statistic)
    want = _scipy(x, v, statistic)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=statistic)
    np.testing.assert_allclose(got, want, equal_nan=True, **tol())


NAN_FUNCS = {"count": lambda a: np.sum(~np.isnan(a)), **BASE_NAN_FUNCS}
NUMPY_FUNCS = {
    "count": len,
    "sum": np.sum,
    "mean": np.mean,
    "var": np.var,
    "std": np.std,
    "min": np.min,
    "max": np.max,
    "median": np.median,
}
Y2 = VS.T.copy()  # (N, 2): the y of range_statistic is (N, *channels)


def _ranges(kind):
    if kind == "chunks":
        return jaxsubset.ranges.chunks(XS, 7)
    if kind == "select":
        lo = np.array([0.0, 2.5, 3.0, 3.2, 9.9, 5.0])
        return jaxsubset.ranges.select(XS, lo, lo + np.array([3.0, 1.5, 1.0, 0.5, 1.0, 0.0]))
    return jaxsubset.ranges.rolling(XS, 0.7)


@pytest.mark.parametrize("kind", ["chunks", "select", "rolling"])
def test_range_statistic_omit_and_propagate_match_numpy(kind):
    r = _ranges(kind)
    names = tuple(NAN_FUNCS)
    # host copies: the loop below reads single elements (device indexing would dispatch each)
    omit = {s: np.asarray(v) for s, v in range_statistic(Y2, r, names, nan_policy="omit").items()}
    prop = {s: np.asarray(v) for s, v in range_statistic(Y2, r, names).items()}
    start, count = np.asarray(r.start), np.asarray(r.count)
    every = range(0, start.size, 1 if start.size < 100 else 13)  # rolling: a sample of windows
    with np.errstate(all="ignore"), _quiet():
        for k in every:
            seg = Y2[start[k] : start[k] + count[k]]
            for c in range(2):
                col = seg[:, c]
                real = col[~np.isnan(col)]
                for s in names:
                    if s in ("count", "sum"):
                        want = NAN_FUNCS[s](col) if col.size else 0
                    else:
                        want = NAN_FUNCS[s](col) if real.size else np.nan
                    np.testing.assert_allclose(
                        float(omit[s][k, c]),
                        want,
                        rtol=_rt(1e-10),
                        atol=_at(1e-12),
                        err_msg=f"{s} {k}",
                    )
                    if s == "count":
                        assert int(prop[s][k, c]) == col.size
                        continue
                    if col.size:
                        want = NUMPY_FUNCS[s](col)
                    else:
                        want = 0.0 if s == "sum" else np.nan
                    np.testing.assert_allclose(
                        float(prop[s][k, c]),
                        want,
                        rtol=_rt(1e-10),
                        atol=_at(1e-12),
                        err_msg=f"{s} {k}",
                    )


class _quiet:
    """Silence NumPy's all-NaN warnings inside a with block."""

    def __enter__(self):
        import warnings

        self._w = warnings.catch_warnings()
        self._w.__enter__()
        warnings.simplefilter("ignore", RuntimeWarning)

    def __exit__(self, *exc):
        return self._w.__exit__(*exc)


SEC = 1_000_000_000
T = np.cumsum(RNG.integers(0, 3, N)).astype(np.int64) * SEC  # ties, gaps
YR = RNG.normal(2.0, 3.0, N)
YR[RNG.integers(0, N, 60)] = np.nan
YR[300:330] = np.nan  # whole windows of NaN
ROLL = ("count", "sum", "mean", "var", "std", "min", "max", "median")


@needs_x64  # int64 nanoseconds / datetime64 x
def test_rolling_omit_default_matches_pandas_and_propagate_gives_nan():
    series = pd.Series(YR, index=pd.to_datetime(T))
    # ddof=1: pandas' rolling var/std (the library's default is NumPy's ddof=0)
    omit = rolling_statistic(T, YR, 7 * SEC, ROLL, nan_policy="omit", ddof=1)
    default = rolling_statistic(T, YR, 7 * SEC, "mean")
    np.testing.assert_array_equal(np.asarray(default), np.asarray(omit["mean"]))
    prop = rolling_statistic(T, YR, 7 * SEC, ROLL, nan_policy="propagate", ddof=1)
    # a window holding a NaN: the prefix count of NaN differs at its two ends
    start = np.searchsorted(T, T - 7 * SEC, side="right")
    nan_before = np.concatenate([[0], np.cumsum(np.isnan(YR))])
    has_nan = nan_before[np.arange(N) + 1] > nan_before[start]
    assert has_nan.sum() > 50
    for s in ROLL:
        want = getattr(series.rolling("7s"), s)().to_numpy()
        np.testing.assert_allclose(
            np.asarray(omit[s]), want, rtol=_rt(1e-9), atol=_at(1e-10), equal_nan=True, err_msg=s
        )
        got = np.asarray(prop[s])
        if s == "count":  # every point of the window, missing readings included
            np.testing.assert_array_equal(got, np.arange(N) + 1 - start)
            continue
        assert np.isnan(got[has_nan]).all(), s
        np.testing.assert_allclose(got[~has_nan], want[~has_nan], rtol=_rt(1e-9), atol=_at(1e-10))


def test_raise_eager_and_under_jit():
    msg = "holds 1 NaN (the first at flat index 3) with nan_policy='raise'"
    y = np.arange(8.0)
    y[3] = np.nan
    x = np.arange(8.0)
    r = jaxsubset.ranges.chunks(x, 2)
    with pytest.raises(ValueError, match=re.escape("binned_statistic: `values` " + msg)):
        binned_statistic(x, y, "mean", 2, nan_policy="raise")
    with pytest.raises(ValueError, match=re.escape("range_statistic: `y` " + msg)):
        range_statistic(y, r, "sum", nan_policy="raise")
    with pytest.raises(ValueError, match=re.escape("rolling_statistic: `y` " + msg)):
        rolling_statistic(x, y, 2.0, nan_policy="raise")
    clean = np.arange(8.0)
    np.testing.assert_allclose(
        np.asarray(binned_statistic(x, clean, "mean", 2, nan_policy="raise").statistic),
        [1.5, 5.5],
    )

    @jax.jit
    def f(v):
        a = binned_statistic(x, v, "sum", 2, (0.0, 8.0), nan_policy="raise").statistic
        b = range_statistic(v, r, "sum", nan_policy="raise")
        c = rolling_statistic(x, v, 2.0, "sum", nan_policy="raise")
        return a, b, c

    jax.block_until_ready(f(clean))
    with pytest.raises(Exception, match=re.escape(msg)):
        jax.block_until_ready(f(y))
    for fn, args in (
        (binned_statistic, (x, y)),
        (rolling_statistic, (x, y, 2.0)),
        (range_statistic, (y, r)),
    ):
        with pytest.raises(ValueError, match="`nan_policy` must be one of 'propagate', 'omit'"):
            fn(*args, nan_policy="skip")


def _omit(x, v, lo, hi):
    return (
        binned_statistic(x, v, "mean", NBINS, (lo, hi), nan_policy="omit").statistic,
        binned_statistic(x, v, "median", NBINS, (lo, hi), nan_policy="omit").statistic,
    )


def test_omit_under_jit_and_vmap_and_grad():
    cases = [(X, V, 0.0, 10.0), (X, V, -2.0, 8.0)]  # exact edges: x has ties on them
    for (_, _, lo, hi), (mean, med) in zip(cases, compile_once(_omit, cases), strict=True):
        for c in range(2):
            real = ~np.isnan(V[c])
            for got, s in ((mean, "mean"), (med, "median")):
                want = scipy.stats.binned_statistic(
                    X[real], V[c][real], s, NBINS, (lo, hi)
                ).statistic
                np.testing.assert_allclose(
                    np.asarray(got[c]), want, rtol=_rt(1e-12), equal_nan=True
                )
    vstd = jax.vmap(lambda v: binned_statistic(XS, v, "std", 8, nan_policy="omit").statistic)
    out = jax.jit(vstd)(VS)
    for c in range(2):
        real = ~np.isnan(VS[c])
        want = scipy.stats.binned_statistic(XS[real], VS[c][real], "std", 8, (XS[0], XS[-1]))
        np.testing.assert_allclose(np.asarray(out[c]), want.statistic, rtol=_rt(1e-12))

    v0 = VS[1]
    nan = np.isnan(v0)
    losses = {
        "binned sorted": lambda v: jnp.nansum(
            binned_statistic(XS, v, "std", 8, nan_policy="omit").statistic
        ),
        "binned unsorted": lambda v: jnp.nansum(
            binned_statistic(X[ORDER[::-1]], v, "mean", 8, nan_policy="omit").statistic
        ),
        "binned sum": lambda v: jnp.sum(
            binned_statistic(XS, v, "sum", 8, nan_policy="omit").statistic
        ),
        "range": lambda v: jnp.nansum(
            range_statistic(v, _ranges("chunks"), "var", nan_policy="omit")
        ),
        "rolling": lambda v: jnp.nansum(rolling_statistic(XS, v, 0.5, "mean")),
    }
    # all gradients in one jitted program (eager grads would dispatch op by op)
    grads = jax.jit(lambda v: {name: jax.grad(loss)(v) for name, loss in losses.items()})(v0)
    for name in losses:
        g = np.asarray(grads[name])
        assert np.isfinite(g).all(), name
        assert (g[nan] == 0).all(), name
        assert (g[~nan] != 0).any(), name
    g = np.asarray(grads["binned sum"])
    np.testing.assert_array_equal(g, np.where(nan, 0.0, 1.0))


# ---------------------------------------------------------------------------- time axes
def weekly_with_gaps(seed=0):
    """Weekly readings 1950-2020 with a 22-year gap, duplicate timestamps and missing values."""
    t = pd.date_range("1950-01-01", "2020-12-31", freq="7D").values
    keep = ~((t >= np.datetime64("1961-03-01")) & (t < np.datetime64("1983-07-01")))
    t = np.sort(np.concatenate([t[keep], t[keep][::50]]))
    rng = np.random.default_rng(seed)
    y = rng.normal(size=t.size)
    y[rng.random(t.size) < 0.1] = np.nan
    y[(t >= np.datetime64("1990-01-01")) & (t < np.datetime64("1991-01-01"))] = np.nan
    return t, y


@pytest.mark.skipif(not jax.config.jax_enable_x64, reason="time axes: int64 ns need x64")
def test_binned_yearly_datetime_edges_match_pandas_groupby_year():
    t, y = weekly_with_gaps(1)
    years = np.arange(1950, 2022).astype(str).astype("datetime64[Y]")
    by_year = pd.Series(y, index=t).groupby(pd.DatetimeIndex(t).year)
    for stat, pd_name in (("mean", "mean"), ("count", "count"), ("max", "max"), ("sum", "sum")):
        res = binned_statistic(t, y, stat, years, nan_policy="omit")
        assert res.bin_edges.dtype == np.dtype("datetime64[ns]")
        np.testing.assert_array_equal(res.bin_edges, years.astype("datetime64[ns]"))
        want = getattr(by_year, pd_name)()
        got = np.asarray(res.statistic)
        for k, year in enumerate(range(1950, 2021)):
            if year in want.index and (stat in ("count", "sum") or by_year.count()[year] > 0):
                np.testing.assert_allclose(got[k], want[year], rtol=_rt(1e-12), err_msg=f"{year}")
            elif stat in ("count", "sum"):
                assert got[k] == 0
            else:
                assert np.isnan(got[k]), (stat, year)
    # binnumber as scipy numbers it: 1.. inside (every point is inside here)
    res = binned_statistic(t, y, "count", years)
    want_bin = pd.DatetimeIndex(t).year.to_numpy() - 1950 + 1
    np.testing.assert_array_equal(np.asarray(res.binnumber), want_bin)


@pytest.mark.skipif(not jax.config.jax_enable_x64, reason="time axes: int64 ns need x64")
def test_binned_int_bins_on_a_time_axis_are_exact_int64():
    base = np.datetime64("2001-12-29T06:00:00", "ns")
    t = base + np.arange(10).astype("timedelta64[ns]")  # 1 ns apart, near 1e18 ns
    assert np.unique(t.astype(np.int64).astype(float)).size < 10  # float64 would round
    res = binned_statistic(t, np.arange(10.0), "count", 3)
    np.testing.assert_array_equal(res.bin_edges, base + np.array([0, 3, 6, 9], "timedelta64[ns]"))
    assert np.asarray(res.statistic).tolist() == [3.0, 3.0, 4.0]  # the last bin is closed
    res = binned_statistic(
        t, np.arange(10.0), "sum", 2, range=(base + np.timedelta64(2, "ns"), str(base + 6))
    )
    assert np.asarray(res.statistic).tolist() == [2.0 + 3.0, 4.0 + 5.0 + 6.0]
    assert np.asarray(res.binnumber).tolist() == [0, 0, 1, 1, 2, 2, 2, 3, 3, 3]
    # unsorted x, hourly over decades: same result as sorted, edges exact
    hours = pd.date_range("1970-01-01", "2030-01-01", freq="97h").values
    perm = np.random.default_rng(0).permutation(hours.size)
    vals = np.sin(np.arange(hours.size) / 7.0)
    a = binned_statistic(hours, vals, "mean", 60)
    b = binned_statistic(hours[perm], vals[perm], "mean", 60)
    # means of sin() cancel to ~1e-6 in some bins: compare at the scale of the values (O(1))
    np.testing.assert_allclose(
        np.asarray(a.statistic), np.asarray(b.statistic), rtol=_rt(1e-12), atol=1e-15
    )
    lo, hi = (int(h) for h in hours[[0, -1]].astype("datetime64[ns]").astype(np.int64))
    want = [lo + (k * (hi - lo)) // 60 for k in range(61)]
    assert a.bin_edges.astype(np.int64).tolist() == want
    with pytest.raises(TypeError, match="`range` must be dates"):
        binned_statistic(t, np.arange(10.0), "sum", 2, range=(0, 10))
    with pytest.raises(TypeError, match="not a time axis"):
        binned_statistic(np.arange(10.0), np.arange(10.0), "sum", years_edges())
    with pytest.raises(ValueError, match="must increase strictly"):
        binned_statistic(t, np.arange(10.0), "sum", years_edges()[::-1])


def years_edges():
    return np.array(["2000", "2001", "2002"], "datetime64[Y]")


@needs_x64  # int64 nanoseconds / datetime64 x
def test_rolling_7d_on_datetime_x_matches_pandas():
    t, y = weekly_with_gaps(2)
    t = np.sort(t + (np.arange(t.size) % 3).astype("timedelta64[D]"))  # irregular spacing
    series = pd.Series(y, index=t)
    got = rolling_statistic(t, y, "7D", ("count", "mean", "max"), closed="both")
    for s in ("count", "mean", "max"):
        want = getattr(series.rolling("7D", closed="both"), s)().to_numpy()
        np.testing.assert_allclose(np.asarray(got[s]), want, rtol=_rt(1e-12), equal_nan=True)
    same = rolling_statistic(t, y, np.timedelta64(7, "D"), "mean", closed="both")
    np.testing.assert_array_equal(np.asarray(same), np.asarray(got["mean"]))
    at = np.array(["1960-01-01", "1990-06-01", "2020-12-31"], "datetime64[D]")
    anchored = rolling_statistic(t, y, "30D", "count", at=at)
    for k, a in enumerate(at):
        a = a.astype("datetime64[ns]")
        inside = (t > a - np.timedelta64(30, "D")) & (t <= a)
        assert float(anchored[k]) == float((~np.isnan(y[inside])).sum())
    with pytest.raises(TypeError, match="a plain number would be read as nanoseconds"):
        rolling_statistic(t, y, 7, "mean")
    with pytest.raises(TypeError, match="not a time axis"):
        rolling_statistic(np.arange(5.0), np.arange(5.0), "7D")
