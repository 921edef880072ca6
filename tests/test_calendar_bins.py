"""Calendar and period bins in the Python API (``bins="1M"``, ``"1Q"``, ``"1Y"``, ``"7D"``,
``"12h"``) against pandas ``resample``, and the same edges as the command's ``--bins``."""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsubset
from references import X64, needs_x64


pd = pytest.importorskip("pandas")

# (our period, pandas' resample rule): month/quarter/year starts, fixed widths from midnight
PERIODS = (
    ("1M", "MS"),
    ("2M", "2MS"),
    ("3M", "QS"),
    ("1Q", "QS"),
    ("2Q", "2QS"),
    ("1Y", "YS"),
    ("2Y", "2YS"),
    ("7D", "7D"),
    ("1W", "7D"),
    ("12h", "12h"),
    ("5h", "5h"),
)


def _dates():
    """Dates of many shapes: before 1970, leap days, empty months/years, ties on the edges
    (midnight of the 1st, duplicates), and times of day that fall into the 12h/5h bins."""
    rng = np.random.default_rng(7)
    cases = {
        "single": np.array(["1999-07-15T13:00"], "datetime64[m]"),
        "leap": np.array(
            [
                "1996-02-28T23:00",
                "1996-02-29",
                "1996-02-29T12:00",
                "1996-03-01",
                "2000-02-29",
                "2000-03-01",
                "2000-03-01",
                "2004-02-29T06:00",
            ],
            "datetime64[m]",
        ),  # fmt: skip
        "pre1970": np.sort(
            np.datetime64("1955-11-03T07:00", "m")
            + rng.integers(0, 60 * 24 * 365 * 20, 60).astype("timedelta64[m]")
        ),
        # on the edges: the 1st of months, Jan 1, midnights, noon; and a two-year gap
        "edges": np.array(
            [
                "1969-12-31T23:59",
                "1970-01-01",
                "1970-01-01",
                "1970-02-01",
                "1970-04-01T12:00",
                "1970-07-01",
                "1973-01-01",
                "1973-01-01T12:00",
                "1973-10-01",
            ],
            "datetime64[m]",
        ),  # fmt: skip
    }
    return cases


def _pandas(t, y, rule):
    r = pd.Series(y, index=pd.DatetimeIndex(t)).resample(rule)
    return r.mean(), r.count(), r.sum()


def test_period_edges_match_pandas_resample():
    """``bin_edges`` (NumPy only, either JAX mode): pandas' bins for every period and case,
    and the points of each bin (``[e_k, e_{k+1})``) those of pandas' groups."""
    for name, t in _dates().items():
        for spec, rule in PERIODS:
            msg = f"{name} {spec}"
            full = pd.Series(1, index=pd.DatetimeIndex(t)).resample(rule).sum()
            edges = jaxsubset.bin_edges(t, spec)
            assert edges.dtype == np.dtype("datetime64[ns]")
            np.testing.assert_array_equal(edges[:-1], full.index.values, err_msg=msg)
            assert edges[-1] > t.max() and (edges[-2] <= t.max()), msg
            if rule[-1] in "hD":  # fixed widths: equal steps
                assert (np.diff(edges) == np.diff(edges)[0]).all(), msg
            idx = np.searchsorted(t.astype("datetime64[ns]"), edges, side="left")
            np.testing.assert_array_equal(np.diff(idx), full.values, err_msg=msg)


# cases through the library's ranges: one program per number of bins, so a few
RANGE_CASES = (("pre1970", "1M"), ("leap", "1W"), ("edges", "1Q"), ("edges", "12h"),
               ("single", "1Y"))  # fmt: skip


@needs_x64
def test_period_bins_match_pandas_resample():
    """``ranges.bins``/``bins`` with a period: pandas' resample values (mean, count, sum)."""
    cases = _dates()
    for name, spec in RANGE_CASES:
        t = cases[name]
        rule = dict(PERIODS)[spec]
        y = np.cos(np.arange(t.size) * 0.7) * 10
        y[::5] = np.nan  # resample's count/mean/sum skip NaN: nan_policy="omit"
        mean, count, total = _pandas(t, y, rule)
        msg = f"{name} {spec}"
        r = jaxsubset.ranges.bins(t, spec)
        got = jaxsubset.range_statistic(y, r, ("mean", "count", "sum"), nan_policy="omit")
        np.testing.assert_allclose(np.asarray(got["mean"]), mean.values, rtol=1e-12,
                                   equal_nan=True, err_msg=msg)  # fmt: skip
        np.testing.assert_array_equal(np.asarray(got["count"]), count.values, err_msg=msg)
        np.testing.assert_allclose(np.asarray(got["sum"]), total.values, rtol=1e-12,
                                   atol=1e-12, err_msg=msg)  # fmt: skip
    # the Subsets constructor takes the period too; `length` leaves the padding out
    t = cases["edges"]
    s = jaxsubset.bins(t, np.arange(t.size, dtype=float), "1Y", capacity=8)
    assert np.asarray(s.count).tolist() == [1, 5, 0, 0, 3]
    r = jaxsubset.ranges.bins(t, "1Y", length=3)  # 1969-12-31 and two 1970-01-01
    assert np.asarray(r.count).tolist() == [1, 2]


@needs_x64
def test_binned_statistic_period_matches_pandas():
    """``binned_statistic(..., bins="1M")``: pandas' resample values, datetime64 edges,
    bin numbers of every date; unsorted dates bin the same."""
    t = _dates()["pre1970"]
    y = np.sin(np.arange(t.size))
    for spec, rule in (("1M", "MS"), ("1Q", "QS"), ("1Y", "YS"), ("7D", "7D")):
        mean, count, total = _pandas(t, y, rule)
        for stat, want in (("mean", mean), ("count", count), ("sum", total)):
            res = jaxsubset.binned_statistic(t, y, stat, bins=spec)
            np.testing.assert_allclose(res.statistic, want.values, rtol=1e-12, atol=1e-12,
                                       equal_nan=True, err_msg=f"{spec} {stat}")  # fmt: skip
        assert res.bin_edges.dtype == np.dtype("datetime64[ns]")
        np.testing.assert_array_equal(res.bin_edges, jaxsubset.bin_edges(t, spec))
        np.testing.assert_array_equal(res.bin_edges[:-1], mean.index.values)
        want_bin = np.searchsorted(res.bin_edges, t.astype("datetime64[ns]"), side="right")
        np.testing.assert_array_equal(res.binnumber, want_bin)
    # under jit/vmap with the dates closed over (concrete): traced values, the same bins
    ys = np.stack([y, 2 * y])
    f = jax.jit(jax.vmap(lambda v: jaxsubset.binned_statistic(t, v, "mean", bins="1M").statistic))
    want = _pandas(t, y, "MS")[0].values
    np.testing.assert_allclose(np.asarray(f(ys)), np.stack([want, 2 * want]), rtol=1e-12)
    perm = np.random.default_rng(1).permutation(t.size)
    res = jaxsubset.binned_statistic(t[perm], y[perm], "mean", bins="1M")
    np.testing.assert_allclose(res.statistic, _pandas(t, y, "MS")[0].values, rtol=1e-12)


@needs_x64
def test_period_bins_errors():
    t = _dates()["leap"]
    y = np.ones(t.size)
    ns = jaxsubset.to_ns(t)
    with pytest.raises(TypeError, match=re.escape("`bins`='1M' is a period, whose edges are")):
        jax.jit(lambda x, y: jaxsubset.binned_statistic(x, y, "mean", bins="1M").statistic)(ns, y)
    with pytest.raises(TypeError, match="compute them outside first"):
        jax.jit(lambda x: jaxsubset.ranges.bins(x, "1M").count)(ns)
    with pytest.raises(TypeError, match="`x` is not a time axis"):
        jaxsubset.binned_statistic(np.arange(3.0), np.ones(3), "mean", bins="1M")
    with pytest.raises(TypeError, match="`x` is not a time axis"):
        jaxsubset.ranges.bins(jnp.arange(3.0), "1M")
    with pytest.raises(ValueError, match="`range` goes with an int `bins`"):
        jaxsubset.binned_statistic(t, y, "mean", bins="1M", range=(t[0], t[-1]))
    with pytest.raises(ValueError, match="ambiguous unit 'm'"):
        jaxsubset.binned_statistic(t, y, "mean", bins="1m")
    with pytest.raises(ValueError, match="unknown time unit 'parsecs'"):
        jaxsubset.ranges.bins(t, "3parsecs")
    # the edges computed outside jit serve inside it (as int64 ns)
    edges = jaxsubset.to_ns(jaxsubset.bin_edges(t, "1M"))
    got = jax.jit(lambda x, y, e: jaxsubset.binned_statistic(x, y, "count", bins=e).statistic)(
        ns, y, edges
    )
    eager = jaxsubset.binned_statistic(t, y, "count", bins="1M").statistic
    np.testing.assert_array_equal(np.asarray(got), eager)


def test_period_bins_in_either_mode():
    """``bin_edges`` is NumPy only (either JAX mode); the binned statistics and the ranges of
    datetime64 x are exact in 32-bit mode too (resolved as in 64-bit mode, issue 30), only
    ``Subsets`` (whose x would be int64 nanoseconds) need 64-bit mode."""
    t = np.array(["2001-01-30", "2001-02-02", "2001-04-01"], "datetime64[D]")
    e = jaxsubset.bin_edges(t, "1M")
    assert e.astype("datetime64[D]").astype(str).tolist() == [
        "2001-01-01", "2001-02-01", "2001-03-01", "2001-04-01", "2001-05-01"]  # fmt: skip
    ns = jaxsubset.bin_edges(jaxsubset.to_ns(t), "1M")  # int64 ns in, int64 ns out
    assert ns.dtype == np.int64 and (ns == e.view(np.int64)).all()
    res = jaxsubset.binned_statistic(t, np.arange(3.0), "mean", bins="1M")
    np.testing.assert_array_equal(res.statistic, [0.0, 1.0, np.nan, 2.0])
    np.testing.assert_array_equal(res.bin_edges, e)
    assert jaxsubset.ranges.bins(t, "1M").count.tolist() == [1, 1, 0, 1]
    if not X64:
        with pytest.raises(TypeError, match="64-bit mode"):
            jaxsubset.bins(t, np.ones(3), "1M", capacity=2)


def test_parse_period_and_bin_edges_checks():
    assert jaxsubset.parse_period("1Y") == ("calendar", 12)
    assert jaxsubset.parse_period("YS") == ("calendar", 12)
    assert jaxsubset.parse_period("3M") == ("calendar", 3)
    assert jaxsubset.parse_period("2Q") == ("calendar", 6)
    assert jaxsubset.parse_period("1.5h") == ("fixed", 5400 * 10**9)
    assert jaxsubset.parse_period("1W") == ("fixed", 7 * 86400 * 10**9)
    bad_periods = (("1m", "ambiguous unit 'm'"), ("1.5M", "takes a whole number"),
                   ("0.5ns", "shorter than 1 ns"), ("10", "is not a period"),
                   ("3parsecs", "unknown time unit"), ("9999Y", "longer than the"))  # fmt: skip
    for bad, why in bad_periods:
        with pytest.raises(ValueError, match=re.escape(why)):
            jaxsubset.parse_period(bad)
    t = np.array(["2001-01-30", "2001-02-02"], "datetime64[D]")
    with pytest.raises(ValueError, match="gives 4 bins over the data"):
        jaxsubset.bin_edges(t, "1D", max_bins=3)
    with pytest.raises(TypeError, match="`x` must be dates"):
        jaxsubset.bin_edges(np.arange(3.0), "1M")
    with pytest.raises(ValueError, match="non-empty 1-D"):
        jaxsubset.bin_edges(t[:0], "1M")
    with pytest.raises(TypeError, match="`bins` must be a period"):
        jaxsubset.bin_edges(t, 2.5)
    # equal bins in exact integer nanoseconds; a single time: the second around it
    e = jaxsubset.bin_edges(t, 3).view(np.int64)
    lo, hi = (int(v) for v in jaxsubset.to_ns(t))
    assert e.tolist() == [lo + (hi - lo) * k // 3 for k in range(4)]
    one = jaxsubset.bin_edges(t[:1], 2).view(np.int64)
    assert one.tolist() == [lo - 5 * 10**8, lo, lo + 5 * 10**8]


@pytest.mark.one_mode  # the command switches 64-bit mode on itself
def test_command_bins_are_the_library_edges(tmp_path, run):
    """``jaxsubset stats --bins 1M`` (and 1Q, 1Y, 7D, 12h, 5) bins by ``jaxsubset.bin_edges``."""
    t = _dates()["pre1970"]
    y = np.arange(t.size, dtype=float)
    text = "\n".join(["t,y", *(f"{d},{float(v)!r}" for d, v in zip(t.astype(str), y, strict=True))])
    (tmp_path / "d.csv").write_text(text + "\n")
    for spec in ("1M", "1Q", "1Y", "7D", "12h", "5"):
        rc, _, err = run("d.csv", "--bins", spec, "--stat", "mean", "--out", "o.csv", "--quiet")
        assert rc == 0, err
        got = pd.read_csv(tmp_path / "o.csv", parse_dates=["lo", "hi"])
        edges = jaxsubset.bin_edges(t, int(spec) if spec.isdigit() else spec)
        np.testing.assert_array_equal(got["lo"].values, edges[:-1], err_msg=spec)
        np.testing.assert_array_equal(got["hi"].values, edges[1:], err_msg=spec)
        want = jaxsubset.binned_statistic(t, y, "mean", bins=edges) if X64 else None
        if want is not None and not spec.isdigit():  # --bins N closes its last bin as SciPy
            np.testing.assert_allclose(got["mean"].values, want.statistic, rtol=1e-12)
