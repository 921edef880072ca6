"""One list of statistic names (``jaxsubset.STATISTICS``) for the library, ``stream`` and the
command: the command's ``--stat`` takes the library's statistics and equals the library."""

import re

import numpy as np
import pytest

import jaxsubset
from jaxsubset.reduce import _registry
from references import tol


pd = pytest.importorskip("pandas")


def test_statistics_is_the_registry_list():
    assert jaxsubset.STATISTICS == _registry.STATISTICS
    assert isinstance(jaxsubset.STATISTICS, tuple)
    # every road's statistics are names of the one list, or the statistics between channels
    # (cov/corr: a matrix per subset, which the stream and the command do not compute)
    assert _registry.ALL_STATISTICS == jaxsubset.STATISTICS + ("cov", "corr")
    for roads in (_registry.RANGE_ROADS, _registry.LABEL_ROADS, _registry.SLIDING_ROADS):
        for names in roads.values():
            assert set(names) <= set(_registry.ALL_STATISTICS)
    # the module docstring documents the public constant (the docs' statistics page lists
    # every name: tests/test_docs.py)
    assert "STATISTICS" in jaxsubset.__doc__
    from jaxsubset.cli._options import STATS

    assert STATS == tuple(s for s in jaxsubset.STATISTICS if s != "quantile")


def test_the_table_has_one_entry_per_statistic():
    """``reduce``'s table: one entry per statistic, in the list's order, naming the fold and
    the finish every road takes; the tree road's statistics are those with a fold (and
    first/last, read at an index); the order statistics are never folded."""
    from jaxsubset import reduce

    assert tuple(_registry.TABLE) == _registry.ALL_STATISTICS
    for name, e in _registry.TABLE.items():
        assert e.name == name and reduce.entry(name) is e
        assert e.pair == (name in _registry.PAIR_STATISTICS)
        assert e.integer == (name == "count") == reduce.is_count(name)
        assert np.isnan(e.empty) or name in ("count", "sum")
        if name in _registry.RANGE_ROADS["tree"] and name not in ("first", "last"):
            assert isinstance(e.fold, reduce.Fold), name
        else:
            assert e.fold is None, name
    assert reduce.entry("quantile(0.25)") is _registry.TABLE["quantile"]
    assert reduce.fold_of("std") is reduce.fold_of("var") and reduce.entry("std").finish is (
        reduce.spread_statistics
    )
    assert isinstance(reduce.fold_of("kurt"), reduce.Moments4)
    with pytest.raises(ValueError, match="not folded"):
        reduce.fold_of("median")


def test_stream_computes_the_new_statistics():
    """``stream`` reduces with the registry's conventions: sem (with ddof), first/last,
    skew/kurt equal ``range_statistic`` on the same chunks; the quantile is refused clearly."""
    rng = np.random.default_rng(0)
    n = 300
    x = np.arange(n, dtype=np.float32)
    y = rng.normal(size=n).astype(np.float32)
    y[[3, 40, 41]] = np.nan
    names = ("sem", "first", "last", "skew", "kurt")
    out = jaxsubset.stream((x, y), "chunks", n=7, statistic=names, ddof=1, nan_policy="omit",
                           block_size=64)  # fmt: skip
    want = jaxsubset.range_statistic(y, jaxsubset.ranges.chunks(x, 7), names, ddof=1,
                                     nan_policy="omit")  # fmt: skip
    for s in names:
        np.testing.assert_allclose(np.asarray(out[s]), np.asarray(want[s]),
                                   **tol(np.float32), err_msg=s)  # fmt: skip
    with pytest.raises(ValueError, match=re.escape("statistic 'quantile' is not streamed")):
        jaxsubset.stream((x, y), "chunks", n=7, statistic="quantile")


NEW = "sem,first,last,skew,kurt,q0.9,q0.25,median"


@pytest.mark.one_mode  # the command switches 64-bit mode on itself
def test_command_new_statistics_equal_the_library(tmp_path, run):
    rng = np.random.default_rng(3)
    n = 2000
    x = np.sort(rng.uniform(0, 100, n))
    y = rng.normal(size=n)
    y[rng.choice(n, 50, replace=False)] = np.nan
    cells = ("" if np.isnan(b) else repr(float(b)) for b in y)
    lines = ["x,y", *(f"{float(a)!r},{b}" for a, b in zip(x, cells, strict=True))]
    (tmp_path / "d.csv").write_text("\n".join(lines) + "\n")
    np.save(tmp_path / "d.npy", np.stack([x, y], axis=1))
    rc, _, err = run("d.csv", "--chunks", 9, "--stat", NEW, "--ddof", 1, "--out", "o.csv")
    assert rc == 0, err
    got = pd.read_csv(tmp_path / "o.csv")
    r = jaxsubset.ranges.chunks(x, 9)
    base = ("sem", "first", "last", "skew", "kurt", "median")
    want = jaxsubset.range_statistic(y, r, base, ddof=1, nan_policy="omit")
    for s in base:
        np.testing.assert_allclose(got[s], np.asarray(want[s]), rtol=1e-12, err_msg=s)
    # the quantiles as numpy.nanquantile of every chunk (and the library's)
    for q in (0.9, 0.25):
        ref = [np.nanquantile(c, q) for c in np.array_split(y, 9)]
        np.testing.assert_allclose(got[f"q{q}"], ref, rtol=1e-12)
    sem = pd.Series(y).groupby(np.repeat(np.arange(9), [len(c) for c in np.array_split(y, 9)]))
    np.testing.assert_allclose(got["sem"], sem.sem().values, rtol=1e-12)  # pandas' ddof=1
    np.testing.assert_allclose(got["skew"], sem.skew().values, rtol=1e-9)
    # a streamed .npy computes the same (not the quantiles: refused, with how to read whole)
    stream_stats = "sem,first,last,skew,kurt,median"
    rc, _, err = run("d.npy", "--chunks", 9, "--stat", stream_stats, "--ddof", 1,
                     "--stream-above", 0, "--out", "s.csv")  # fmt: skip
    assert rc == 0, err
    streamed = pd.read_csv(tmp_path / "s.csv")
    for s in stream_stats.split(","):
        np.testing.assert_allclose(streamed[s], got[s], rtol=1e-12, err_msg=s)
    rc, _, err = run("d.npy", "--chunks", 9, "--stat", "mean,q0.9", "--stream-above", 0)
    assert rc == 2
    assert "--stat q0.9: d.npy" in err and "is streamed block by block" in err
    assert "no quantile; pass --stream-above 1 to read the file whole" in err
    rc, _, err = run("d.npy", "--chunks", 9, "--stat", "mean,q0.9", "--stream-above", 1)
    assert rc == 0, err


@pytest.mark.one_mode
@pytest.mark.parametrize(
    "stat, message",
    [
        ("quantile", "--stat quantile: say which one with its q, e.g. --stat q0.9"),
        ("q1.5", "unknown statistic 'q1.5' (a quantile's q lies in [0, 1])"),
        ("mode", "unknown statistic 'mode' (choose from count, sum, mean, var, std, sem"),
    ],
)
def test_command_statistic_errors(tmp_path, run, stat, message):
    (tmp_path / "d.csv").write_text("x,y\n0,1\n1,2\n2,4\n")
    rc, _, err = run("d.csv", "--chunks", 2, "--stat", stat)
    assert rc == 2 and message in err, err
