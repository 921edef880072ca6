"""The command's reader on pyarrow (issue 30): columns and options checked before the data is
read, the direct and careful roads, the lines named in messages, per-column counts.

The direct road (pyarrow reads the file itself, typed) and the careful road (Python numbers the
lines, pyarrow splits the fields) are checked against each other and against independent
references (NumPy, pandas, the line counted here by hand).
"""

import os
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import jaxsubset.cli._reader as reader
from jaxsubset.cli._files import InputError
from jaxsubset.cli._reader import read_xy
from jaxsubset.cli._text import inspect_text, nonempty_line


# the same in either JAX mode (the command switches 64-bit mode on; lint, imports and
# dependencies have no mode): run once, in the 64-bit run (see conftest.py)
pytestmark = pytest.mark.one_mode


def time_csv(n=400):
    t = pd.date_range("2001-01-01", periods=n, freq="6h")
    rows = [f"{d},{i % 7},{-i}" for i, d in enumerate(t.strftime("%Y-%m-%dT%H:%M:%S"))]
    return "date,a,b\n" + "\n".join(rows) + "\n"


NUMBER_CSV = "x,v\n" + "".join(f"{i * 0.5},{i}\n" for i in range(400))


def never(*args, **kwargs):
    raise AssertionError("the data was read before the columns and options were checked")


@pytest.fixture
def no_data_read(monkeypatch):
    """Reading any data (either road, any binary reader) fails the test."""
    import pyarrow.parquet as pq

    monkeypatch.setattr(reader, "read_direct", never)
    monkeypatch.setattr(reader, "read_careful", never)
    monkeypatch.setattr(pq, "read_table", never)
    monkeypatch.setattr(np.lib.format, "read_array", never)


PRE_READ = [
    (time_csv(), ["--y", "tmep", "--width", "7D"], "d.csv: no y column 'tmep'; the columns are"),
    (time_csv(), ["--x", "dat", "--bins", "1M"], "no x column 'dat'"),
    (time_csv(), ["--width", "7"], "--width 7: x column 'date' holds dates, so the width needs"),
    (time_csv(), ["--before", "2", "--after", "1h"], "--before 2: x column 'date' holds dates"),
    (time_csv(), ["--every", "3"], "--every 3: x column 'date' holds dates, so the value needs"),
    (time_csv(), ["--every", "1M", "--offset", "40D"], "the offset must be in [0, 28D)"),
    (time_csv(), ["--bins", "0,1"], "x column 'date' holds dates: give the edges as dates"),
    (NUMBER_CSV, ["--bins", "1M"], "--bins 1M: a time period needs a time axis"),
    (NUMBER_CSV, ["--width", "7D"], "--width 7D: a duration needs a time axis"),
    (NUMBER_CSV, ["--bins", "2001-01-01,2002-01-01"], "date edges need a time axis"),
    (NUMBER_CSV, ["--every", "1D"], "--every 1D: a duration needs a time axis"),
]


@pytest.mark.parametrize(("text", "argv", "message"), PRE_READ, ids=[m for _, _, m in PRE_READ])
def test_columns_and_options_fail_before_the_data_is_read(
    tmp_path, run, no_data_read, text, argv, message
):
    (tmp_path / "d.csv").write_text(text)
    rc, out, err = run("d.csv", *argv, "--out", "o.csv")
    assert rc == 2 and out == "", err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], lines
    assert sorted(os.listdir(tmp_path)) == ["d.csv"]


def test_binary_files_are_checked_from_their_headers(tmp_path, run, no_data_read):
    import pyarrow as pa
    import pyarrow.parquet as pq

    t = np.datetime64("2001-01-01", "ns") + np.arange(50) * np.timedelta64(1, "h")
    rec = np.zeros(50, dtype=[("t", "datetime64[ns]"), ("v", "f8")])
    rec["t"] = t
    np.save(tmp_path / "d.npy", rec)
    np.savez(tmp_path / "d.npz", t=t, v=np.arange(50.0))
    pq.write_table(pa.table({"t": t, "v": np.arange(50.0)}), tmp_path / "d.parquet")
    for name in ("d.npy", "d.npz", "d.parquet"):
        rc, _, err = run(name, "--x", "t", "--y", "w", "--chunks", 2)
        assert rc == 2 and f"{name}: no y column 'w'" in err, err
        rc, _, err = run(name, "--x", "t", "--width", "3")
        assert rc == 2 and "--width 3: x column 't' holds dates, so the width needs" in err, err
    # streamed (a big .npy): the options fail before any block is read
    rc, _, err = run("d.npy", "--x", "t", "--y", "v", "--width", "3", "--stream-above", "0")
    assert rc == 2 and "the width needs a unit" in err, err


def test_the_direct_road_reads_plain_files_typed(tmp_path, run, monkeypatch):
    monkeypatch.setattr(reader, "read_careful", never)
    (tmp_path / "t.csv").write_text("\ufeff" + time_csv().replace("\n", "\r\n"))  # BOM, CRLF
    t = pd.date_range("2001-01-01", periods=400, freq="6h")
    xy = read_xy(tmp_path / "t.csv", "date", ["a", "b"])
    assert xy.x_time and xy.x.tolist() == t.as_unit("ns").asi8.tolist()
    np.testing.assert_array_equal(xy.y, np.stack([np.arange(400) % 7, -np.arange(400)], 1))
    # single-space columns (numpy.savetxt's default), empty lines, missing values
    (tmp_path / "s.txt").write_text("x y\n0 1.5\n\n1 NA\n2 -3e-5\n3 nan\n")
    xy = read_xy(tmp_path / "s.txt")
    np.testing.assert_array_equal(xy.x, [0, 1, 2, 3])
    np.testing.assert_array_equal(xy.y[:, 0], [1.5, np.nan, -3e-5, np.nan])
    # integers beyond 2**53 (nanosecond stamps) stay exact, as the careful road keeps them
    (tmp_path / "n.csv").write_text("t,y\n1700000000000000001,1\n1700000000000000002,2\n")
    xy = read_xy(tmp_path / "n.csv")
    assert xy.x.dtype == np.int64 and xy.x[1] - xy.x[0] == 1
    # integers in the head, a fraction further on: x is read again as floats, not line by line
    x = np.arange(1000.0)
    x[900] += 0.5
    (tmp_path / "f.csv").write_text("x,y\n" + "".join(f"{v:g},1\n" for v in x))
    np.testing.assert_array_equal(read_xy(tmp_path / "f.csv").x, x)
    rc, _, err = run("t.csv", "--y", "a", "--y", "b", "--bins", "1M", "--stat", "mean")
    assert rc == 0, err


CAREFUL = [
    ("x,y\n0,1\n# a note\n1,2\n", "a comment after the header"),
    ("x,y\n0,1\n   \n1,2\n", "a line of spaces"),
    ("x y\n0  1\n1   2\n", "runs of spaces"),
    ("x,y\n0,1\n1, none \n", "a missing value with spaces around it"),
    ("x,y\n0,1\n1,2\x0c\n", "a form feed (a line break to Python)"),
    ("x\ty\n0\t1\n\t\n1\t2\n", "a line of a tab (blank, not a row of empty cells)"),
    ("x y z\n0 1 5\n1  2\n", "a run of spaces where pyarrow would see an empty field"),
    ("x,y\n2001-01-01, 1\n2001-01-02T06:00+01:00,2\n", "a time zone on some dates"),
]


@pytest.mark.parametrize(("text", "why"), CAREFUL, ids=[w for _, w in CAREFUL])
def test_the_careful_road_reads_what_pyarrow_does_not_split_alike(tmp_path, text, why):
    # the direct road gives up on these (or is never tried) and the careful road reads them
    # as the command always has; pandas (with its own options for each case) is the reference
    p = tmp_path / "d.csv"
    p.write_text(text)
    calls = []
    real = reader.read_careful
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(reader, "read_careful", lambda *a, **k: calls.append(1) or real(*a, **k))
        try:
            xy = read_xy(p)
        except InputError:
            xy = None
    assert calls == [1], why
    if "2001" in text:
        want = pd.to_datetime(["2001-01-01T00:00", "2001-01-02T05:00"]).as_unit("ns").asi8
        assert xy.x_time and xy.x.tolist() == want.tolist()
        return
    if "z" in text:  # str.split() sees 2 fields, as the old reader did: the width is wrong
        with pytest.raises(InputError, match="line 3 has 2 field"):
            read_xy(p)
        return
    xy = read_xy(p)
    np.testing.assert_array_equal(xy.x, [0.0, 1.0])
    np.testing.assert_array_equal(xy.y[:, 0], [1.0, np.nan if "none" in text else 2.0])


def lines_of(text, row):
    """The 1-based line of data row ``row``: counted by hand (non-empty lines after line 1)."""
    filled = [n for n, line in enumerate(text.split("\n"), start=1) if line.strip() and n > 1]
    return filled[row]


def test_messages_of_the_direct_road_name_the_line(tmp_path, run):
    # blank lines scattered through a file the direct road reads: the line of a row is found
    # by scanning the file's breaks, and must be the line a person counts
    rng = np.random.default_rng(0)
    rows = [f"{i},{'' if i == 1700 else i % 5}" for i in range(3000)]
    rows[2500], rows[2501] = rows[2501], rows[2500]  # x goes back here
    body = []
    for r in rows:
        body.append(r)
        body.extend([""] * int(rng.integers(0, 3) == 0))
    text = "x,y\n" + "\n".join(body) + "\n"
    (tmp_path / "d.csv").write_text(text)
    assert inspect_text(str(tmp_path / "d.csv"), None, None).direct
    rc, _, err = run("d.csv", "--chunks", 2)
    want = lines_of(text, 2501)
    assert rc == 2 and f"(line {want}: 2500.0 after 2501.0); pass --sort" in err, err
    rc, _, err = run("d.csv", "--sort", "--chunks", 2, "--nan-policy", "raise")
    assert rc == 2 and f"column 'y' at line {lines_of(text, 1700)} (--nan-policy" in err, err


def test_nonempty_line_against_python_splitting(tmp_path):
    rng = np.random.default_rng(1)
    pieces = ["", "a", "1,2", " "]
    breaks = ["\n", "\r\n", "\r"]
    for _ in range(200):
        parts = [str(rng.choice(pieces)) for _ in range(int(rng.integers(1, 30)))]
        text = "".join(line + str(rng.choice(breaks)) for line in parts)
        p = tmp_path / "l.txt"
        p.write_bytes(text.encode())
        lines = re.split("\r\n|\r|\n", text)[:-1]  # pyarrow's line breaks
        filled = [n for n, line in enumerate(lines, start=1) if line]
        for row, want in enumerate(filled):
            for block in (1, 3, 1 << 16):
                assert nonempty_line(str(p), 0, 1, row, block=block) == want


def test_a_quote_left_open_and_wrong_widths_name_their_line(tmp_path):
    for text, message in [
        ('x,y\n0,1\n1,"2\n2,3\n', "line 3: a quoted field runs past the end of its line"),
        ("x,y\n0,1\n\n1,2,3\n", "line 4 has 3 field(s), expected 2 like the header"),
        ("0,1\n1\n", "line 2 has 1 field(s), expected 2 like the first line"),
        ("x;y\n0;1\n1;b\n", "y column 'y' is not numeric: line 3 holds 'b'"),
    ]:
        (tmp_path / "d.csv").write_text(text)
        with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
            read_xy(tmp_path / "d.csv")


def test_several_y_columns_count_and_valid_per_column(tmp_path, run):
    # --stat count with several y: count_<col> (and valid_<col>), like every other statistic
    y = np.array([[1, 5], [np.nan, 6], [3, np.nan], [4, np.nan], [5, 9]], float)
    rows = ["" if v != v else repr(v) for v in y.ravel().tolist()]
    text = "x,a,b\n" + "".join(f"{i},{rows[2 * i]},{rows[2 * i + 1]}\n" for i in range(5))
    (tmp_path / "d.csv").write_text(text)
    rc, _, err = run("d.csv", "--y", "a", "--y", "b", "--chunks", 2, "--stat", "count,valid,sum",
                     "--out", "o.csv", "--quiet")  # fmt: skip
    assert rc == 0, err
    got = pd.read_csv(tmp_path / "o.csv")
    assert list(got.columns) == ["subset", "start", "count", "x_first", "x_last", "count_a",
                                 "count_b", "valid_a", "valid_b", "sum_a", "sum_b"]  # fmt: skip
    pieces = np.array_split(np.arange(5), 2)
    for c, name in enumerate("ab"):
        assert got[f"count_{name}"].tolist() == [len(p) for p in pieces]
        assert got[f"valid_{name}"].tolist() == [int(np.sum(~np.isnan(y[p, c]))) for p in pieces]
        assert got[f"sum_{name}"].tolist() == [float(np.nansum(y[p, c])) for p in pieces]
    rc, _, err = run("d.csv", "--y", "a", "--chunks", 2, "--stat", "count", "--out", "p.csv")
    assert rc == 0, err
    assert list(pd.read_csv(tmp_path / "p.csv").columns) == [
        "subset", "start", "count", "x_first", "x_last",
    ]  # fmt: skip


def test_without_pyarrow_text_is_refused_with_the_install_line(tmp_path):
    (tmp_path / "in.csv").write_text("x,y\n0,1\n1,2\n")
    np.save(tmp_path / "in.npy", np.stack([np.arange(4.0), np.ones(4)], 1))
    code = (
        "import sys; sys.modules['pyarrow'] = None\n"
        "from jaxsubset.cli import main\n"
        "print('rc', main(['stats', 'in.csv', '--chunks', '1', '--stat', 'count']))\n"
        "print('rc', main(['stats', 'in.npy', '--chunks', '1', '--stat', 'count']))\n"
    )
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    r = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env,
        timeout=300,
    )  # fmt: skip
    assert r.stdout.split("\n")[0] == "rc 2" and "rc 0" in r.stdout, r.stderr
    assert r.stderr.strip() == (
        "jaxsubset stats: error: reading text files needs pyarrow: pip install 'jaxsubset[cli]'"
    )


@pytest.mark.parametrize(
    "windows",
    [
        {"width": 2.0},
        {"width": 3.0, "center": True},
        {"before": 2.0, "after": 1.0},
        {"width": 0.05},
    ],
)
def test_rolling_windows_take_the_rolling_road_with_the_same_numbers(command_mode, windows):
    # x-width windows: jaxsubset.rolling_statistic over the windows it resolves itself, against
    # range_statistic over the windows of jaxsubset.ranges.rolling (the command's table), with
    # tied x, runs of missing readings, both NaN policies and ddof
    import jaxsubset
    from jaxsubset.cli._options import STATS
    from jaxsubset.cli._reader import XY
    from jaxsubset.cli._stats import compute_statistics

    rng = np.random.default_rng(0)
    x = np.sort(np.round(rng.uniform(0, 40, 300), 1))
    y = rng.normal(size=(300, 2)) + 100
    y[rng.random((300, 2)) < 0.3] = np.nan
    y[50:70, 0] = np.nan
    xy = XY(x, y, "x", ["a", "b"])
    r = jaxsubset.ranges.rolling(x, **windows)
    stats = (*STATS, "valid", "q0.9", "q0.25")
    for policy, ddof in (("omit", 0), ("omit", 1), ("propagate", 1)):
        flat = compute_statistics(xy, r, stats, ddof=ddof, nan_policy=policy)
        road = compute_statistics(xy, r, stats, ddof=ddof, nan_policy=policy, rolling=windows)
        for s in stats:
            np.testing.assert_allclose(road[s], flat[s], rtol=1e-11, atol=1e-12, err_msg=s)


def test_a_header_or_comments_longer_than_the_head(tmp_path):
    # the head grows until it holds the header: 5000 columns, after 100 kB of comments
    names = [f"column_{i}" for i in range(5000)]
    text = "# note\n" * 15000 + ",".join(names) + "\n" + ",".join(map(str, range(5000))) + "\n"
    (tmp_path / "w.csv").write_text(text)
    head = inspect_text(str(tmp_path / "w.csv"), None, None)
    assert head.names == names and head.line == 15002 and head.rows == [list(map(str, range(5000)))]
    xy = read_xy(tmp_path / "w.csv", "column_3", ["column_4999"])
    assert xy.x.tolist() == [3.0] and xy.y.tolist() == [[4999.0]]
