"""The command on real measurements: time axes, missing readings, duplicates, gaps (issue 7).

Numbers are checked against pandas (``resample``, ``rolling("7D")``, ``groupby(dt.year)``),
computed here from the same file. Most runs go through ``main(argv)`` in-process (conftest's
``run``); a subprocess run (``run_process``) checks the process-level contract (exit status,
one line, no traceback).
"""

import json
import os

import numpy as np
import pytest

from jaxsubset.cli._dates import iso_strings, parse_dates
from jaxsubset.cli._files import InputError
from jaxsubset.cli._options import bin_edges, parse_period
from jaxsubset.cli._reader import XY, read_table, read_xy


# the same in either JAX mode (the command switches 64-bit mode on; lint, imports and
# dependencies have no mode): run once, in the 64-bit run (see conftest.py)
pytestmark = pytest.mark.one_mode


pd = pytest.importorskip("pandas")

DAY = 86_400 * 10**9


def write_series(path, t, columns, fmt="%Y-%m-%dT%H:%M:%S", sep=","):
    """A CSV with a date column and value columns; NaN is written as an empty cell."""
    names = list(columns)
    lines = [sep.join(["date", *names])]
    stamps = t.strftime(fmt)
    for i, d in enumerate(stamps):
        cells = ["" if np.isnan(columns[k][i]) else repr(float(columns[k][i])) for k in names]
        lines.append(sep.join([d, *cells]))
    path.write_text("\n".join(lines) + "\n")
    return path


def series(t, columns):
    return pd.DataFrame(columns, index=pd.DatetimeIndex(t))


def read_out(path):
    names = path.read_text().splitlines()[0].split(",")
    dates = [k for k in ("x_first", "x_last", "lo", "hi") if k in names]
    return pd.read_csv(path, parse_dates=dates)


def close(got, want):
    np.testing.assert_allclose(np.asarray(got, float), np.asarray(want, float), rtol=1e-9,
                               atol=1e-12, equal_nan=True)  # fmt: skip


def weekly_with_decades_gap(seed=0):
    """Weekly readings 1975-1980 and 2004-2008 (a 24-year gap), NaN scattered and a NaN month."""
    rng = np.random.default_rng(seed)
    t = pd.date_range("1975-01-05", periods=300, freq="7D").append(
        pd.date_range("2004-03-02", periods=200, freq="7D")
    )
    y = 20.0 + rng.normal(size=len(t))
    y[rng.choice(len(t), 40, replace=False)] = np.nan
    y[100:105] = np.nan  # a whole month of missing readings
    return t, y


# ---------------------------------------------------------------------------- against pandas
def test_iso_weekly_series_bins_and_rolling_match_pandas(tmp_path, run):
    t, y = weekly_with_decades_gap()
    write_series(tmp_path / "w.csv", t, {"temp": y}, fmt="%Y-%m-%d")
    s = series(t, {"temp": y})["temp"]
    stats = "mean,std,min,max,sum,valid"

    # one bin per calendar year, against groupby(dt.year) on the years that have data
    rc, _, err = run("w.csv", "--bins", "1Y", "--stat", stats, "--ddof", 1, "--out", "y.csv")
    assert rc == 0, err
    got = read_out(tmp_path / "y.csv")
    years = got["lo"].dt.year
    assert years.tolist() == list(range(1975, t[-1].year + 1))  # the empty years too
    assert (got["lo"].dt.strftime("%m-%d") == "01-01").all()
    g = s.groupby(s.index.year)
    full = got.set_index(years).loc[g.mean().index]
    close(full["mean"], g.mean())
    close(full["std"], g.std())
    close(full["min"], g.min())
    close(full["max"], g.max())
    close(full["sum"], g.sum())
    close(full["valid"], g.count())
    close(full["count"], g.size())
    empty = got[got["count"] == 0]
    assert len(empty) == len(got) - len(g.mean()) and empty["mean"].isna().all()
    assert empty["x_first"].isna().all()  # NaT for an empty bin, an empty cell in the CSV

    # resample("MS"): calendar months; resample("7D"): fixed bins from the first day
    for spec, rule in (("1M", "MS"), ("7D", "7D"), ("3M", "QS")):
        rc, _, err = run("w.csv", "--bins", spec, "--stat", "mean,sum,valid", "--out", "m.csv")
        assert rc == 0, err
        got = read_out(tmp_path / "m.csv")
        r = s.resample(rule)
        want = r.mean()
        assert got["lo"].tolist() == want.index.tolist()
        close(got["mean"], want)
        close(got["sum"], r.sum())
        close(got["valid"], r.count())

    # rolling("7D")/("30D") offset windows, which skip NaN as --nan-policy omit does
    rc, _, err = run("w.csv", "--width", "30D", "--stat", "mean,std,max,valid", "--ddof", 1,
                     "--out", "r.json")  # fmt: skip
    assert rc == 0, err
    rows = json.loads((tmp_path / "r.json").read_text())
    roll = s.rolling("30D")
    close([r["mean"] if r["mean"] is not None else np.nan for r in rows], roll.mean())
    close([r["std"] if r["std"] is not None else np.nan for r in rows], roll.std())
    close([r["max"] if r["max"] is not None else np.nan for r in rows], roll.max())
    close([r["valid"] for r in rows], roll.count())
    assert rows[0]["hi"] == "1975-01-05" and rows[0]["lo"] == "1974-12-06"  # ISO dates


def test_hourly_series_with_duplicates_and_yyyymmdd_integers(tmp_path, run):
    rng = np.random.default_rng(1)
    t = pd.DatetimeIndex(
        np.r_[
            pd.date_range("2001-12-29 06:00", periods=200, freq="h").values,
            pd.date_range("2002-02-01 00:00", periods=100, freq="h").values,
        ]
    )
    t = t.insert(50, t[50])  # duplicate time stamps: legal, kept in the file's order
    t = t.insert(120, t[120])
    y = rng.normal(size=len(t))
    y[[3, 51, 77]] = np.nan
    write_series(tmp_path / "h.csv", t, {"v": y}, fmt="%Y-%m-%d %H:%M:%S")  # a space, no T
    s = series(t, {"v": y})["v"]

    rc, _, err = run("h.csv", "--bins", "6h", "--stat", "mean,max,valid", "--out", "b.csv")
    assert rc == 0, err
    assert err.strip().splitlines()[0] == (
        "omitted 3 missing y reading(s) (empty or NaN cells) from the statistics "
        "(--nan-policy omit; --nan-policy propagate gives NaN instead)"
    )
    got = read_out(tmp_path / "b.csv")
    r = s.resample("6h")
    assert got["lo"].tolist() == r.mean().index.tolist()
    close(got["mean"], r.mean())
    close(got["max"], r.max())
    close(got["valid"], r.count())
    assert got["x_first"].iloc[0] == pd.Timestamp("2001-12-29 06:00")

    # duplicates kept in file order: one subset per point gives y back in order
    rc, out, err = run("h.csv", "--size", 1, "--stat", "max", "--nan-policy", "propagate",
                       "--out", "p.csv")  # fmt: skip
    assert rc == 0, err
    got = read_out(tmp_path / "p.csv")
    close(got["max"], y)
    assert got["x_first"].tolist() == list(t)

    # daily bins with duplicate stamps, against groupby on the calendar day
    days = t.strftime("%Y%m%d")
    (tmp_path / "d.csv").write_text(
        "day,v\n"
        + "".join(
            f"{d},{'' if v != v else repr(v)}\n" for d, v in zip(days, y.tolist(), strict=True)
        )
    )
    rc, _, err = run("d.csv", "--x-format", "%Y%m%d", "--bins", "1D", "--stat", "mean,valid",
                     "--out", "dd.csv", "--quiet")  # fmt: skip
    assert rc == 0 and err == "", err
    got = read_out(tmp_path / "dd.csv")
    g = s.groupby(s.index.normalize())
    nonempty = got[got["count"] > 0].set_index("lo")
    assert nonempty.index.tolist() == g.mean().index.tolist()
    close(nonempty["mean"], g.mean())
    close(nonempty["valid"], g.count())
    assert (got["x_first"].dropna().dt.hour == 0).all()  # dates of YYYYMMDD: midnight


def test_rolling_7d_on_an_unsorted_file_and_ranges_of_dates(tmp_path, run):
    t, y = weekly_with_decades_gap(seed=2)
    t = t + pd.to_timedelta(np.arange(len(t)) % 5, unit="D")  # irregular spacing
    order = np.random.default_rng(3).permutation(len(t))
    write_series(tmp_path / "u.csv", t[order], {"a": y[order], "b": -y[order]})
    rc, _, err = run("u.csv", "--y", "a", "--y", "b", "--sort", "--width", "7D", "--stat",
                     "mean,min", "--out", "r.csv")  # fmt: skip
    assert rc == 0, err
    got = read_out(tmp_path / "r.csv")
    roll = series(t, {"a": y, "b": -y}).rolling("7D")
    close(got["mean_a"], roll.mean()["a"])
    close(got["min_b"], roll.min()["b"])
    assert got["hi"].tolist() == list(t)

    (tmp_path / "cuts.csv").write_text("lo,hi\n1976-01-01,1977-01-01\n1990-01-01,1991-06-30\n"
                                       "2005-02-03T12:00,2005-03-01\n")  # fmt: skip
    rc, _, err = run("u.csv", "--y", "a", "--sort", "--ranges", "cuts.csv", "--stat", "mean",
                     "--out", "c.csv")  # fmt: skip
    assert rc == 0, err
    got = read_out(tmp_path / "c.csv")
    s = series(t, {"a": y})["a"]
    want = [s[(s.index >= lo) & (s.index < hi)].mean() for lo, hi in
            [("1976-01-01", "1977-01-01"), ("1990-01-01", "1991-06-30"),
             ("2005-02-03 12:00", "2005-03-01")]]  # fmt: skip
    close(got["mean"], want)
    assert got["count"][1] == 0
    assert (tmp_path / "c.csv").read_text().splitlines()[1].split(",")[5:7] == [
        "1976-01-01T00:00:00",  # one precision for every date of the table
        "1977-01-01T00:00:00",
    ]


# ---------------------------------------------------------------------------- missing values
def test_nan_policies_on_empty_cells(tmp_path, run):
    (tmp_path / "e.csv").write_text("t,v\n0,1\n1,\n2,3\n3,NA\n4,5\n5,\n")
    rc, out, err = run("e.csv", "--chunks", 2, "--stat", "mean,sum,count,valid")
    assert rc == 0
    assert len(err.strip().splitlines()) == 1 and "omitted 3 missing y reading(s)" in err
    rows = [line.split() for line in out.strip().splitlines()]
    assert rows[0] == ["subset", "start", "count", "x_first", "x_last", "mean", "sum", "valid"]
    assert rows[1][5:] == ["2", "4", "2"] and rows[2][5:] == ["5", "5", "1"]

    rc, out, err = run("e.csv", "--chunks", 2, "--stat", "mean", "--nan-policy", "propagate")
    assert rc == 0 and err == ""
    assert [line.split()[-1] for line in out.strip().splitlines()[1:]] == ["nan", "nan"]

    rc, _, err = run("e.csv", "--chunks", 2, "--quiet")  # omit, silently
    assert rc == 0 and err == ""

    rc, out, err = run("e.csv", "--chunks", 2, "--nan-policy", "raise", "--out", "o.csv")
    assert rc == 2 and out == ""
    assert err.strip() == (
        "jaxsubset stats: error: --nan-policy raise: the subsets hold 3 missing y reading(s), "
        "the first in column 'v' at line 3 (--nan-policy omit skips them)"
    )
    assert sorted(os.listdir(tmp_path)) == ["e.csv"]

    # a missing reading outside every subset is neither omitted nor an error
    rc, out, err = run("e.csv", "--bins", "4,4.5", "--nan-policy", "raise", "--stat", "mean")
    assert rc == 0, err
    assert out.splitlines()[1].split()[-1] == "5"


def test_omit_through_the_padded_road_and_the_library(tmp_path, command_mode):
    """Omitting goes through the library's nan_policy whichever road the statistic takes."""
    import jaxsubset
    from jaxsubset.cli._options import STATS
    from jaxsubset.cli._stats import compute_statistics

    rng = np.random.default_rng(4)
    x = np.sort(rng.uniform(0, 20, 150))
    y = rng.normal(size=(150, 2))
    y[rng.random((150, 2)) < 0.2] = np.nan
    y[30:45, 0] = np.nan  # whole windows of NaN in one column
    xy = XY(x, y, "x", ["a", "b"])
    r = jaxsubset.ranges.rolling(x, 2.0)
    masks = [(x > a - 2.0) & (x <= a) for a in x]
    ref = {"sum": np.nansum, "mean": np.nanmean, "std": np.nanstd, "var": np.nanvar,
           "min": np.nanmin, "max": np.nanmax, "median": np.nanmedian}  # fmt: skip
    stats = (*STATS, "valid")
    library = compute_statistics(xy, r, stats, nan_policy="omit")
    # every reduction by the library's padded road too (the reference every road is tested on)
    padded = {
        k: np.asarray(v)
        for k, v in jaxsubset.range_statistic(
            y, r, tuple(ref), nan_policy="omit", method="reference"
        ).items()
    }
    for got in (library, padded):
        for c in range(2):
            for name, fn in ref.items():
                want = []
                for m in masks:
                    v = y[m, c]
                    v = v[~np.isnan(v)]
                    want.append(fn(v) if v.size else (0.0 if name == "sum" else np.nan))
                close(got[name][:, c], want)
    for c in range(2):
        close(library["valid"][:, c], [np.sum(~np.isnan(y[m, c])) for m in masks])
    close(library["count"][:, 0], [m.sum() for m in masks])


# ---------------------------------------------------------------------------- errors
TIME_CSV = "date,v\n2001-12-29,1\n2001-12-30,2\n2002-01-05,3\n"
BAD = [
    # (files, argv, message)
    ({"d.csv": "date,v\n2001-12-29,1\n2001-13-30,2\n"}, ["--chunks", "1"],
     "x column 'date' is not an ISO-8601 date: line 3 holds '2001-13-30'"),
    ({"d.csv": "date,v\n2001-12-29,1\n,2\n"}, ["--chunks", "1"],
     "x column 'date' has a missing date at line 3"),
    ({"d.csv": "date,v\n20011229,1\n20011232,2\n"}, ["--x-format", "%Y%m%d", "--chunks", "1"],
     "is not a date of --x-format '%Y%m%d': line 3 holds '20011232'"),
    ({"d.csv": "date,v\n1500-01-01,1\n"}, ["--chunks", "1"], "outside 1677-09-22 .. 2262-04-10"),
    ({"d.csv": TIME_CSV}, ["--width", "7"], "--width 7: x column 'date' holds dates, so the "
     "width needs a unit, e.g. --width 7D"),
    ({"d.csv": TIME_CSV}, ["--width", "1M"], "--width 1M: months and years have no fixed length"),
    ({"d.csv": TIME_CSV}, ["--width", "1Y"], "for calendar periods use bins, e.g. --bins 1Y"),
    ({"d.csv": TIME_CSV}, ["--width", "3parsecs"], "unknown time unit 'parsecs'"),
    ({"d.csv": TIME_CSV}, ["--bins", "1m"], "ambiguous unit 'm': use M for months or min"),
    ({"d.csv": TIME_CSV}, ["--bins", "0,1"], "x column 'date' holds dates: give the edges as"),
    ({"d.csv": TIME_CSV}, ["--bins", "2002-01-01,2001-01-01"], "the edges must increase"),
    ({"d.csv": TIME_CSV}, ["--bins", "1ms"], "gives 604800001 bins over the data; choose a"),
    ({"d.csv": TIME_CSV}, ["--bins", "1.5M"], "a calendar period takes a whole number"),
    ({"d.csv": TIME_CSV, "r.csv": "0,1\n"}, ["--ranges", "r.csv"], "holds numbers, but x is a "
     "time axis"),
    ({"d.csv": "x,v\n0,1\n1,2\n"}, ["--width", "7D"], "a duration needs a time axis, but x "
     "column 'x' holds numbers (for dates stored as numbers such as 20011229 pass --x-format"),
    ({"d.csv": "x,v\n0,1\n1,2\n"}, ["--bins", "1Y"], "a time period needs a time axis"),
    ({"d.csv": "x,v\n0,1\n1,2\n"}, ["--bins", "2001-01-01,2002-01-01"], "date edges need a "
     "time axis"),
    ({"d.csv": "x,v\n0,1\n1,2\n", "r.csv": "2001-01-01,2002-01-01\n"}, ["--ranges", "r.csv"],
     "the ranges are dates, but the x column holds numbers"),
    ({"d.csv": "date,v\n2001-12-30,1\n2001-12-29,2\n"}, ["--chunks", "1"],
     "not sorted ascending (line 3: 2001-12-29 after 2001-12-30); pass --sort"),
    ({"d.csv": "x,v\n0,2001-12-29\n"}, ["--chunks", "1"], "(a date: only the x column may be"),
    ({"d.csv": TIME_CSV}, ["--chunks", "1", "--nan-policy", "never"], "invalid choice: 'never'"),
]  # fmt: skip


@pytest.mark.parametrize(("files", "argv", "message"), BAD, ids=[m[:40] for _, _, m in BAD])
def test_time_errors_one_line_exit_2_no_output(tmp_path, run, files, argv, message):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    rc, out, err = run("d.csv", *argv, "--out", "o.csv")
    assert rc == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("jaxsubset stats: error: ") and message in lines[0], lines[0]
    assert sorted(os.listdir(tmp_path)) == sorted(files)  # no output, not even a temporary


# ---------------------------------------------------------------------------- parsing
def test_dates_are_recognised_in_every_iso_form(tmp_path):
    text = (
        "2001-12-29,1\n"  # no header: a date is data, not a column name
        "2001-12-29T06:00,2\n"
        "2001-12-29 06:00:30,3\n"
        "2001-12-29T07:00:00.000000001,4\n"
        "2001-12-29T08:00:00Z,5\n"
        "2001-12-29T10:00:00+01:00,6\n"
    )
    (tmp_path / "d.csv").write_text(text)
    xy = read_xy(tmp_path / "d.csv")
    assert xy.x_time and xy.x_name == "0" and xy.x.dtype == np.int64
    assert iso_strings(xy.x.view("datetime64[ns]")) == [
        "2001-12-29T00:00:00.000000000",
        "2001-12-29T06:00:00.000000000",
        "2001-12-29T06:00:30.000000000",
        "2001-12-29T07:00:00.000000001",  # exact: float64 seconds would round this away
        "2001-12-29T08:00:00.000000000",
        "2001-12-29T09:00:00.000000000",  # +01:00 converted to UTC
    ]
    assert iso_strings(np.array(["2001-12-29", "NaT"], "datetime64[D]")) == ["2001-12-29", None]
    # numbers stay numbers; YYYYMMDD only with --x-format; a header row of names is a header
    (tmp_path / "n.tsv").write_text("day\tv\n20011229\t1\n20020101\t2\n")
    assert not read_xy(tmp_path / "n.tsv").x_time
    xy = read_xy(tmp_path / "n.tsv", x_format="%Y%m%d")
    assert xy.x_time and xy.x_name == "day"
    assert iso_strings(xy.x.view("datetime64[ns]")) == ["2001-12-29", "2002-01-01"]
    (tmp_path / "h.csv").write_text("29/12/2001,1\n30/12/2001,2\n")
    assert read_table(tmp_path / "h.csv", "%d/%m/%Y").header is False
    xy = read_xy(tmp_path / "h.csv", x_format="%d/%m/%Y")
    assert iso_strings(xy.x.view("datetime64[ns]")) == ["2001-12-29", "2001-12-30"]


def test_npz_and_parquet_datetime_columns_are_time_axes(tmp_path):
    t = np.array(["2001-12-29", "2001-12-30", "2002-01-05"], "datetime64[D]")
    np.savez(tmp_path / "d.npz", x=t, y=np.arange(3.0))
    xy = read_xy(tmp_path / "d.npz")
    assert xy.x_time and xy.x.tolist() == t.astype("datetime64[ns]").view(np.int64).tolist()
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    pq.write_table(pa.table({"t": t.astype("datetime64[ms]"), "v": [1.0, None, 3.0]}),
                   tmp_path / "d.parquet")  # fmt: skip
    xy = read_xy(tmp_path / "d.parquet")
    assert xy.x_time and np.isnan(xy.y[1, 0])


def test_periods_and_edges():
    assert parse_period("7D", "--bins") == ("fixed", 7 * DAY)
    assert parse_period("30min", "--bins") == ("fixed", 30 * 60 * 10**9)
    assert parse_period("1W", "--bins") == ("fixed", 7 * DAY)
    assert parse_period("1h", "--bins") == ("fixed", 3600 * 10**9)
    assert parse_period("Y", "--bins") == ("calendar", 12)
    assert parse_period("2Y", "--bins") == ("calendar", 24)
    assert parse_period("3M", "--bins") == ("calendar", 3)
    assert parse_period("1Q", "--bins") == ("calendar", 3)
    assert parse_period("2,3", "--bins") is None
    ns = parse_dates(["2001-02-17T13:00", "2003-07-01"], "x")
    xy = XY(ns, np.zeros((2, 1)), "t", ["v"], x_time=True)
    want = ["2001-01-01", "2002-01-01", "2003-01-01", "2004-01-01"]
    assert iso_strings(bin_edges("1Y", xy)[0].view("datetime64[ns]")) == want
    edges, what = bin_edges("6M", xy)
    assert iso_strings(edges.view("datetime64[ns]"))[:2] == ["2001-01-01", "2001-07-01"]
    assert what == "calendar bins of 6M"
    edges = bin_edges("10D", xy)[0]
    assert edges[0] == parse_dates(["2001-02-17"], "x")[0] and np.all(np.diff(edges) == 10 * DAY)
    assert edges[-2] <= ns[1] < edges[-1]
    edges = bin_edges("3", xy)[0]  # equal bins in exact integer nanoseconds
    assert edges[0] == ns[0] and edges[-1] == ns[1] and edges.dtype == np.int64
    with pytest.raises(InputError, match="dates"):
        bin_edges("0,1", xy)


# ---------------------------------------------------------------------------- process level
def test_subprocess_time_axis_with_plot_and_an_error(tmp_path, run_process):
    t, y = weekly_with_decades_gap(seed=5)
    write_series(tmp_path / "w.tsv", t, {"v": y}, fmt="%Y-%m-%d", sep="\t")
    r = run_process("stats", "w.tsv", "--bins", "1Y", "--stat", "mean")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    assert lines[0].split() == ["subset", "start", "count", "x_first", "x_last", "lo", "hi",
                                "mean"]  # fmt: skip
    assert lines[1].split()[3:7] == ["1975-01-05", "1975-12-28", "1975-01-01", "1976-01-01"]
    assert "omitted" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    r = run_process("stats", "w.tsv", "--width", "7", "--out", "o.csv", "--plot", "o.png")
    assert r.returncode == 2 and r.stdout == "" and "Traceback" not in r.stderr
    assert r.stderr.strip().splitlines() == [
        "jaxsubset stats: error: --width 7: x column 'date' holds dates, so the width needs a "
        "unit, e.g. --width 7D, 12h or 30min"
    ]
    assert sorted(os.listdir(tmp_path)) == ["w.tsv"]


def test_figure_of_a_time_axis_breaks_at_gaps_and_missing_readings(tmp_path, run):
    pytest.importorskip("matplotlib")
    import jaxsubset.cli._stats as stats_command

    t, y = weekly_with_decades_gap(seed=6)
    write_series(tmp_path / "w.csv", t, {"v": y}, fmt="%Y-%m-%d")
    figs = []
    real = stats_command.stats_figure

    def keep(*args, **kwargs):
        figs.append(real(*args, **kwargs))
        return figs[-1]

    import pytest as _pytest

    with _pytest.MonkeyPatch.context() as mp:
        mp.setattr(stats_command, "stats_figure", keep)
        rc, _, err = run("w.csv", "--bins", "1Y", "--plot", "w.png", "--quiet")
    assert rc == 0, err
    assert (tmp_path / "w.png").stat().st_size > 0
    data = figs[0].axes[0].get_lines()[0]
    xs, ys = np.asarray(data.get_xdata()), np.asarray(data.get_ydata(), float)
    assert xs.dtype.kind == "M"  # drawn on a date axis
    breaks = np.flatnonzero(np.isnan(ys))
    # every missing reading stays NaN, plus one break inside the 24-year gap
    assert len(breaks) == np.isnan(y).sum() + 1
    inserted = xs[breaks[~np.isin(xs[breaks], t.values)]]
    assert len(inserted) == 1 and t[299] < inserted[0] < t[300]


def test_fixed_width_formats_parse_without_strptime_and_agree_with_it():
    import datetime as dt

    from jaxsubset.cli._dates import fixed_width_dates

    rng = np.random.default_rng(7)
    secs = rng.integers(-(2**62) // 10**9, 2**62 // 10**9, 3000)
    stamps = secs.astype("datetime64[s]").astype(object)
    for fmt in ("%Y%m%d%H%M%S", "%d.%m.%Y %H:%M:%S", "%Y%m%d"):
        text = np.array([d.strftime(fmt) for d in stamps])
        want = [np.datetime64(dt.datetime.strptime(s, fmt), "s") for s in text]
        np.testing.assert_array_equal(fixed_width_dates(text, fmt), want)
        np.testing.assert_array_equal(
            parse_dates(text, "x", x_format=fmt), np.array(want, "M8[ns]").view(np.int64)
        )
    # what the vectorised road cannot take goes to strptime: ragged cells, other directives
    assert fixed_width_dates(np.array(["1/2/2001", "11/12/2001"]), "%d/%m/%Y") is None
    assert iso_strings(parse_dates(["1/2/2001", "11/12/2001"], "x", x_format="%d/%m/%Y").view(
        "datetime64[ns]")) == ["2001-02-01", "2001-12-11"]  # fmt: skip
    assert fixed_width_dates(np.array(["20010229"]), "%Y%m%d") is None  # not a leap year
    with pytest.raises(InputError, match="line 9 holds '20010229'"):
        parse_dates(["20010228", "20010229"], "x", lambda i: f"line {i + 8}", "%Y%m%d")
    assert fixed_width_dates(np.array(["Dec 2001"]), "%b %Y") is None


def test_parquet_output_stores_timestamps_and_json_iso_text(tmp_path, run):
    pq = pytest.importorskip("pyarrow.parquet")
    (tmp_path / "d.csv").write_text("date,v\n2001-12-29,1\n2001-12-30,\n2002-03-01,5\n")
    rc, _, err = run("d.csv", "--bins", "1M", "--stat", "mean", "--out", "o.parquet", "--quiet")
    assert rc == 0, err
    t = pq.read_table(tmp_path / "o.parquet")
    assert str(t.schema.field("lo").type) == "timestamp[ns]"
    assert str(t.schema.field("x_first").type) == "timestamp[ns]"
    got = t.to_pydict()
    assert [d.isoformat() for d in got["lo"]] == [
        "2001-12-01T00:00:00", "2002-01-01T00:00:00", "2002-02-01T00:00:00",
        "2002-03-01T00:00:00",
    ]  # fmt: skip
    assert got["x_first"][1] is None and got["mean"][0] == 1.0  # NaT is null; NaN omitted
    rc, _, err = run("d.csv", "--bins", "1M", "--stat", "mean", "--out", "o.json", "--quiet")
    assert rc == 0, err
    rows = json.loads((tmp_path / "o.json").read_text())
    assert rows[1] == {"subset": 1, "start": 2, "count": 0, "x_first": None, "x_last": None,
                       "lo": "2002-01-01", "hi": "2002-02-01", "mean": None}  # fmt: skip
