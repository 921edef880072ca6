"""`jaxsubset stats --before/--after` and `--every/--period/--offset`, in memory and streamed.

Asymmetric windows are checked against a NumPy brute force of their definition (pandas has
no asymmetric offset windows), hopping/tumbling windows against polars' ``group_by_dynamic``,
and the streamed tables of big ``.npy`` files against the in-memory tables of the same file.
"""

import numpy as np
import pytest

import jaxsubset


# the same in either JAX mode (the command switches 64-bit mode on): run once (see conftest.py)
pytestmark = pytest.mark.one_mode

pd = pytest.importorskip("pandas")

DAY = 86_400 * 10**9
H = 3_600 * 10**9


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A numeric CSV (integer x, ties, a missing reading), a .npy twin, and a time-axis CSV
    and structured .npy (hours over three months, ties)."""
    d = tmp_path_factory.mktemp("windows")
    rng = np.random.default_rng(15)
    n = 300
    x = np.sort(rng.integers(0, 120, n))
    y = rng.normal(size=n)
    y[7] = np.nan
    lines = ["x,y"] + [
        f"{a},{'' if np.isnan(b) else repr(float(b))}" for a, b in zip(x, y, strict=True)
    ]
    (d / "n.csv").write_text("\n".join(lines) + "\n")
    np.save(d / "n.npy", np.stack([x.astype(np.float64), y], axis=1))
    xi = np.zeros(n, [("x", "i8"), ("y", "f8")])  # integer x: fractional extents round up
    xi["x"], xi["y"] = x, y
    np.save(d / "i.npy", xi)
    t = np.datetime64("2001-01-01", "ns") + np.sort(rng.integers(0, 90 * 24, n)) * H
    lines = ["date,v"] + [
        f"{str(a)[:19]},{float(b)!r}" for a, b in zip(t, np.nan_to_num(y), strict=True)
    ]
    (d / "t.csv").write_text("\n".join(lines) + "\n")
    a = np.zeros(n, [("date", "datetime64[ns]"), ("v", "f8")])
    a["date"], a["v"] = t, y
    np.save(d / "t.npy", a)
    return d, x, y, t.astype(np.int64)


@pytest.fixture
def run(files, run, monkeypatch):
    """``run(*argv)`` -> (exit status, the --out table or None, stderr) in the files' folder
    (conftest's ``run`` with ``--out`` and ``--quiet``)."""
    monkeypatch.chdir(files[0])

    def go(*argv):
        out = f"out{len(argv)}.csv"
        rc, _, err = run(*argv, "--out", out, "--quiet")
        return rc, (pd.read_csv(out) if rc == 0 else None), err

    return go


def brute(x, y, lo, hi):
    """count, NaN-skipping sum and mean of the points with lo < x <= hi, per row."""
    keep = (x[None, :] > lo[:, None]) & (x[None, :] <= hi[:, None])
    yy = np.where(keep & ~np.isnan(y)[None, :], y[None, :], 0.0)
    valid = (keep & ~np.isnan(y)[None, :]).sum(1)
    return keep.sum(1), yy.sum(1), np.where(valid > 0, yy.sum(1) / np.maximum(valid, 1), np.nan)


def test_before_after_numeric_equals_the_definition(files, run):
    _, x, y, _ = files
    rc, tab, err = run("n.csv", "--before", 3, "--after", 1.5, "--stat", "count,sum,mean")
    assert rc == 0, err
    count, total, mean = brute(x, y, x - 3.0, x + 1.5)
    np.testing.assert_array_equal(tab["count"], count)
    np.testing.assert_allclose(tab["sum"], total, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(tab["mean"], mean, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(tab["lo"], x - 3.0)
    np.testing.assert_allclose(tab["hi"], x + 1.5)
    # --before 0 --after A: look-ahead only; ties with the end are in, as pandas' centred
    rc, tab, _ = run("n.csv", "--before", 0, "--after", 2, "--stat", "count")
    assert rc == 0
    r = jaxsubset.ranges.rolling(x.astype(np.float64), before=0.0, after=2.0)
    np.testing.assert_array_equal(tab["count"], np.asarray(r.count))
    np.testing.assert_array_equal(tab["start"], np.asarray(r.start))


def test_every_numeric_equals_polars_group_by_dynamic(files, run):
    pl = pytest.importorskip("polars")
    _, x, y, _ = files
    rc, tab, err = run("n.csv", "--every", 10, "--period", 25, "--offset", 3, "--stat", "count,sum")
    assert rc == 0, err
    df = (
        pl.DataFrame({"x": x, "y": np.nan_to_num(y)})
        .group_by_dynamic("x", every="10i", period="25i", offset="3i", closed="left")
        .agg(pl.len(), pl.col("y").sum())
    )
    full = tab[tab["count"] > 0]  # polars drops empty windows
    np.testing.assert_array_equal(full["lo"], df["x"].to_numpy())
    np.testing.assert_array_equal(full["count"], df["len"].to_numpy())
    np.testing.assert_allclose(full["sum"], df["y"].to_numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(tab["hi"] - tab["lo"], 25)
    # tumbling windows of a fractional length on integer x: [s, s + 7.5) holds 8 integers
    rc, tab, _ = run("n.csv", "--every", 7.5, "--stat", "count")
    assert rc == 0
    lo = tab["lo"].to_numpy()
    np.testing.assert_array_equal(tab["count"], [np.sum((x >= a) & (x < a + 7.5)) for a in lo])


def test_time_windows_equal_polars_and_the_definition(files, run):
    pl = pytest.importorskip("polars")
    _, _, y, ns = files
    t = ns.astype("datetime64[ns]")
    v = np.nan_to_num(y)
    frame = pl.DataFrame({"t": t, "v": v})
    for argv, spec in (
        (
            ("--every", "7D", "--period", "10D", "--offset", "4D"),
            dict(every="7d", period="10d", offset="4d"),
        ),
        (("--every", "1M"), dict(every="1mo")),
        (
            ("--every", "1M", "--period", "2M", "--offset", "12h"),
            dict(every="1mo", period="2mo", offset="12h"),
        ),
    ):
        rc, tab, err = run("t.csv", *argv, "--stat", "count,sum")
        assert rc == 0, (argv, err)
        df = frame.group_by_dynamic("t", closed="left", **spec).agg(pl.len(), pl.col("v").sum())
        full = tab[tab["count"] > 0]
        lo = pd.to_datetime(full["lo"]).to_numpy().astype("datetime64[ns]")
        np.testing.assert_array_equal(
            lo, df["t"].to_numpy().astype("datetime64[ns]"), err_msg=str(argv)
        )
        np.testing.assert_array_equal(full["count"], df["len"].to_numpy(), err_msg=str(argv))
        np.testing.assert_allclose(full["sum"], df["v"].to_numpy(), rtol=1e-12, atol=1e-12)
    rc, tab, err = run("t.csv", "--before", "3D", "--after", "12h", "--stat", "count,sum")
    assert rc == 0, err
    count, total, _ = brute(ns, v, ns - 3 * DAY, ns + 12 * H)
    np.testing.assert_array_equal(tab["count"], count)
    np.testing.assert_allclose(tab["sum"], total, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    "argv",
    [
        ("n.npy", "--before", "2.5", "--after", "4"),
        ("n.npy", "--width", "6", "--center"),
        ("i.npy", "--before", "2.5", "--after", "0.5"),
        ("i.npy", "--width", "5", "--center"),
        ("n.npy", "--every", "10", "--period", "25", "--offset", "-3"),
        ("t.npy", "--before", "3D", "--after", "12h"),
        ("t.npy", "--every", "7D", "--period", "10D"),
    ],
)
def test_streamed_windows_equal_in_memory(files, run, argv, monkeypatch):
    stats = ("--stat", "count,mean,max,valid")
    rc, whole, err = run(*argv, *stats)
    assert rc == 0, err
    calls = []
    real = jaxsubset.stream
    monkeypatch.setattr(jaxsubset, "stream", lambda *a, **k: calls.append(a[1]) or real(*a, **k))
    rc, streamed, err = run(*argv, *stats, "--stream-above", 0)
    assert rc == 0, err
    assert len(calls) == 1  # it was streamed
    assert list(whole.columns) == list(streamed.columns)
    for col in whole.columns:
        a, b = whole[col], streamed[col]
        if a.dtype.kind in "fiu":
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14, equal_nan=True, err_msg=col)
        else:
            assert (a.fillna("") == b.fillna("")).all(), col


def test_window_option_errors_exit_2_with_one_line(files, run, monkeypatch):
    cases = [
        (("n.csv", "--chunks", 2, "--after", 1), "--after goes with --before"),
        (("n.csv", "--chunks", 2, "--period", 3), "--period goes with --every only"),
        (("n.csv", "--every", 2, "--offset", "1D"), "a duration needs a time axis"),
        (("t.csv", "--before", 2), "holds dates, so the value needs a unit"),
        (("t.csv", "--every", "1M", "--period", "7D"), "both as calendar periods"),
        (("t.csv", "--every", "1M", "--offset", "30D"), "must be in [0, 28D)"),
        (("t.csv", "--every", "7D", "--offset", "1M"), "an offset is a fixed duration"),
        (("t.csv", "--before", "1M"), "months and years have no fixed length"),
        (("n.csv", "--every", 0), "expected a number > 0"),
        (("n.csv", "--before", -1), "expected a number >= 0"),
    ]
    for argv, msg in cases:
        rc, _, err = run(*argv)
        assert rc == 2, (argv, err)
        assert len(err.strip().splitlines()) == 1 and msg in err, (argv, err)
    # calendar windows of a big .npy are computed in memory (month lengths), with its results
    calls = []
    monkeypatch.setattr(jaxsubset, "stream", lambda *a, **k: calls.append(1))
    rc, tab, err = run("t.npy", "--every", "1M", "--stat", "count", "--stream-above", 0)
    assert rc == 0 and calls == [] and tab.shape[0] == 3, err
