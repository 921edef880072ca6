"""The ``jaxsubset`` command: real files of every format, numbers against NumPy, bad input.

Subprocess runs (each pays the JAX import and compile) cover the formats, the demo and the
process-level contract (exit status, no traceback); the many bad-input cases and the parsing
helpers run in-process through ``main(argv)``.
"""

import io
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import scipy.stats

from jaxsubset.cli import main
from jaxsubset.cli._files import InputError
from jaxsubset.cli._main import build_parser
from jaxsubset.cli._options import STATS, parse_bins, parse_stats
from jaxsubset.cli._progress import Progress
from jaxsubset.cli._writer import format_table


# the same in either JAX mode (the command switches 64-bit mode on; lint, imports and
# dependencies have no mode): run once, in the 64-bit run (see conftest.py)
pytestmark = pytest.mark.one_mode


REF = {
    "count": len,
    "sum": np.sum,
    "mean": np.mean,
    "std": np.std,  # ddof=0, as the command's default
    "var": np.var,
    "min": np.min,
    "max": np.max,
    "median": np.median,
    "sem": lambda v: np.std(v) / np.sqrt(len(v)),  # the command's ddof=0 (pandas' sem(): 1)
    "first": lambda v: v[0],
    "last": lambda v: v[-1],
    "skew": lambda v: scipy.stats.skew(v, bias=False) if len(v) >= 3 else np.nan,
    "kurt": lambda v: scipy.stats.kurtosis(v, bias=False) if len(v) >= 4 else np.nan,
}
assert set(REF) == set(STATS)  # every statistic of the command has its reference here


def reference(y, pieces, stats):
    """NumPy statistics of ``y[piece]`` for each index array / boolean mask ``piece``."""
    out = {s: [] for s in stats}
    for p in pieces:
        v = y[p]
        for s in stats:
            out[s].append(REF[s](v) if (len(v) or s in ("count", "sum")) else np.nan)
    return {s: np.array(v, dtype=float) for s, v in out.items()}


def data(n=240, seed=0):
    rng = np.random.default_rng(seed)
    x = np.sort(rng.uniform(0.0, 50.0, n))
    y = 1e3 + rng.normal(size=n)  # an offset: a careless variance would lose digits
    return x, y


def read_csv(path):
    lines = path.read_text().splitlines()
    names = lines[0].split(",")
    rows = np.array([[float(v) for v in line.split(",")] for line in lines[1:]])
    return {k: rows[:, i] for i, k in enumerate(names)}


# the third and fourth moments lose a few more digits to the offset of the data (1e3)
RTOL = {"skew": 1e-9, "kurt": 1e-9}


def assert_close(got, want, stat=None):
    rtol = RTOL.get(stat, 1e-12)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-12, equal_nan=True)


# ---------------------------------------------------------------------------- subprocess
def test_csv_with_header_chunks_all_statistics(tmp_path, run_process):
    x, y = data()
    rows = "\n".join(f"{a!r},{b!r},7" for a, b in zip(x.tolist(), y.tolist(), strict=True))
    (tmp_path / "in.csv").write_text("time,signal,junk\n" + rows + "\n")
    r = run_process(
        "stats", "in.csv", "--x", "time", "--y", "signal", "--chunks", 7,
        "--stat", ",".join(STATS), "--out", "out.csv",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert r.stdout == ""
    got = read_csv(tmp_path / "out.csv")
    pieces = np.array_split(np.arange(len(x)), 7)
    want = reference(y, pieces, STATS)
    for s in STATS:
        assert_close(got[s if s != "count" else "count"], want[s], s)
    assert_close(got["start"], [p[0] for p in pieces])
    assert_close(got["x_first"], [x[p[0]] for p in pieces])
    assert_close(got["x_last"], [x[p[-1]] for p in pieces])


def test_csv_without_header_table_on_stdout(tmp_path, run_process):
    x, y = data(60, seed=1)
    np.savetxt(tmp_path / "in.csv", np.stack([x, y], axis=1), delimiter=",", fmt="%.17g")
    r = run_process("stats", "in.csv", "--size", 25, "--stat", "mean,max")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    assert lines[0].split() == ["subset", "start", "count", "x_first", "x_last", "mean", "max"]
    table = np.array([[float(v) for v in line.split()] for line in lines[1:]])
    pieces = [np.arange(i, min(i + 25, 60)) for i in range(0, 60, 25)]
    want = reference(y, pieces, ("count", "mean", "max"))
    np.testing.assert_allclose(table[:, 2], want["count"])
    np.testing.assert_allclose(table[:, 5], want["mean"], rtol=1e-5)  # 6 digits on screen
    np.testing.assert_allclose(table[:, 6], want["max"], rtol=1e-5)
    assert len({len(line) for line in lines}) == 1  # aligned


def test_tsv_sliding_windows_to_json(tmp_path, run_process):
    x, y = data(80, seed=2)
    pairs = enumerate(zip(x.tolist(), y.tolist(), strict=True))
    rows = "\n".join(f"{i}\t{a!r}\t{b!r}" for i, (a, b) in pairs)
    (tmp_path / "in.tsv").write_text("i\tx\ty\n" + rows + "\n")
    r = run_process(
        "stats", "in.tsv", "--x", 1, "--y", 2, "--window", 9, "--step", 4,
        "--stat", "mean,std,median", "--out", "out.json", "--quiet",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""  # --quiet
    rows = json.loads((tmp_path / "out.json").read_text())
    idx = np.lib.stride_tricks.sliding_window_view(np.arange(80), 9)[::4]
    want = reference(y, idx, ("mean", "std", "median"))
    for s in ("mean", "std", "median"):
        assert_close([row[s] for row in rows], want[s])
    assert [row["start"] for row in rows] == idx[:, 0].tolist()


def test_parquet_width_windows_with_two_y_columns(tmp_path, run_process):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    x, y = data(120, seed=3)
    y2 = np.cos(x)
    pq.write_table(pa.table({"t": x, "a": y, "b": y2}), tmp_path / "in.parquet")
    r = run_process(
        "stats", "in.parquet", "--x", "t", "--y", "a", "--y", "b", "--width", 3.5,
        "--stat", "sum,min", "--out", "out.parquet",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "wrote 120 subsets" in r.stderr
    got = pq.read_table(tmp_path / "out.parquet").to_pydict()
    masks = [(x > a - 3.5) & (x <= a) for a in x]  # brute force, pandas "3.5" semantics
    for name, col in (("a", y), ("b", y2)):
        want = reference(col, masks, ("count", "sum", "min"))
        assert_close(got[f"sum_{name}"], want["sum"])
        assert_close(got[f"min_{name}"], want["min"])
        assert_close(got["count"], want["count"])
    assert_close(got["lo"], x - 3.5)
    assert_close(got["hi"], x)


def test_npy_bins_and_npz_ranges_with_plot(tmp_path, run_process):
    x, y = data(150, seed=4)
    np.save(tmp_path / "xy.npy", np.stack([x, y], axis=1))
    edges = [0.0, 5.0, 12.5, 12.6, 30.0, 50.0]
    r = run_process(
        "stats", "xy.npy", "--bins", ",".join(map(str, edges)), "--stat", "mean,count",
        "--out", "bins.csv",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    got = read_csv(tmp_path / "bins.csv")
    masks = [(x >= lo) & (x < hi) for lo, hi in zip(edges[:-1], edges[1:], strict=True)]
    masks[-1] |= x == edges[-1]  # numpy.histogram: the last bin is closed
    want = reference(y, masks, ("count", "mean"))
    assert_close(got["count"], want["count"])
    assert_close(got["mean"], want["mean"])  # an empty bin gives NaN
    assert np.isnan(got["mean"]).sum() == (want["count"] == 0).sum()

    np.savez(tmp_path / "d.npz", x=x, y=y)
    (tmp_path / "cuts.csv").write_text("lo,hi\n1,10\n10,10\n-5,100\n20.5,21\n")
    r = run_process(
        "stats", "d.npz", "--ranges", "cuts.csv", "--stat", "max", "--out", "r.csv",
        "--plot", "r.png",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    got = read_csv(tmp_path / "r.csv")
    cuts = [(1, 10), (10, 10), (-5, 100), (20.5, 21)]
    want = reference(y, [(x >= lo) & (x < hi) for lo, hi in cuts], ("count", "max"))
    assert_close(got["count"], want["count"])
    assert_close(got["max"], want["max"])
    assert_close(got["lo"], [c[0] for c in cuts])
    img = __import__("matplotlib.image").image.imread(tmp_path / "r.png")
    assert img.shape[:2] == (450, 800) and img[..., :3].std() > 0.05


def test_demo_writes_figures_and_reports_one_compilation(tmp_path, run_process):
    import matplotlib.image

    r = run_process("demo", "--out", "figs", "--n-points", 300, "--n-subsets", 3)
    assert r.returncode == 0, r.stderr
    assert "compilations: 1 " in r.stdout
    assert "time per subset after compilation:" in r.stdout
    assert "wrote 4 figures (800 x 450 px)" in r.stdout
    # The table's numbers against NumPy slicing.
    x = np.linspace(0, 10, 300)
    y = np.sin(2 * np.pi * x)
    rows = [line.split() for line in r.stdout.splitlines()]
    rows = [row for row in rows if len(row) == 9 and row[0].isdigit()]
    assert len(rows) == 3
    for k, piece in enumerate(np.array_split(np.arange(300), 3)):
        # subset, x_lo, "..", x_hi, count, mean, std, min, max
        assert int(rows[k][0]) == k and int(rows[k][4]) == len(piece)
        got = np.array([float(v) for v in rows[k][5:9]])
        want = [np.mean(y[piece]), np.std(y[piece]), np.min(y[piece]), np.max(y[piece])]
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-9)
        assert float(rows[k][1]) == pytest.approx(x[piece[0]], abs=1e-4)
    names = sorted(os.listdir(tmp_path / "figs"))
    assert names == ["overview.png", "subset_0.png", "subset_1.png", "subset_2.png"]
    for name in names:
        img = matplotlib.image.imread(tmp_path / "figs" / name)
        assert img.shape[:2] == (450, 800)
        rgb = img[..., :3]
        assert rgb.std() > 0.05  # not blank
        saturated = np.ptp(rgb, axis=-1) > 0.3  # coloured (not grey) pixels: the subsets
        assert saturated.mean() > 0.002


def test_process_level_errors_exit_2_without_traceback(tmp_path, run_process):
    (tmp_path / "in.csv").write_text("x,y\n0,1\n2,2\n1,3\n")
    for args, message in [
        (("stats", "missing.csv", "--chunks", 2, "--out", "o.csv"), "missing.csv: no such file"),
        (("stats", "in.csv", "--chunks", 2, "--out", "o.csv"), "pass --sort"),
        (("stats", "in.csv", "--chunks", 2, "--window", 3), "not allowed with argument"),
    ]:
        r = run_process(*args)
        assert r.returncode == 2
        assert r.stdout == ""
        assert "Traceback" not in r.stderr
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and message in lines[0]
    assert sorted(os.listdir(tmp_path)) == ["in.csv"]


def test_import_without_matplotlib_and_plot_needs_it(tmp_path):
    (tmp_path / "in.csv").write_text("x,y\n0,1\n1,2\n")
    code = (
        "import sys; sys.modules['matplotlib'] = None\n"
        "import jaxsubset\n"
        "from jaxsubset.cli import main\n"
        "print('rc', main(['stats', 'in.csv', '--chunks', '1', '--plot', 'p.png']))\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=300
    )
    assert r.stdout.strip() == "rc 2", r.stderr
    assert "needs matplotlib" in r.stderr and "pip install 'jaxsubset[plot]'" in r.stderr
    assert sorted(os.listdir(tmp_path)) == ["in.csv"]


# ---------------------------------------------------------------------------- in-process
BAD = [
    # (files, argv, message)
    ({}, ["missing.csv", "--chunks", "2"], "missing.csv: no such file"),
    ({"in.xlsx": "x"}, ["in.xlsx", "--chunks", "2"], "unsupported input format '.xlsx'"),
    ({"in.csv": b"\xff\xfe\x00\x01"}, ["in.csv", "--chunks", "2"], "cannot read the file as"),
    ({"in.npy": b"garbage"}, ["in.npy", "--chunks", "2"], "is not a NumPy .npy array"),
    ({"in.csv": "x,y\n0,1\n"}, ["in.csv", "--y", "z", "--chunks", "2"], "no y column 'z'"),
    ({"in.csv": "x,y\n0,a\n"}, ["in.csv", "--chunks", "2"], "is not numeric: line 2 holds 'a'"),
    ({"in.csv": "x,y,e\n0,1,\n1,2,\n"}, ["in.csv", "--y", "e", "--chunks", "1"], "'e' is empty"),
    ({"in.csv": "x,y\n0,1\n1\n"}, ["in.csv", "--chunks", "2"], "line 3 has 1 field(s)"),
    ({"in.csv": "x,y\nnan,1\n1,2\n"}, ["in.csv", "--chunks", "2"], "missing/NaN"),
    ({"in.csv": "x,y\n1,1\n0,2\n"}, ["in.csv", "--chunks", "2"], "is not sorted ascending"),
    ({"in.csv": "x,y\n0,1\n"}, ["in.csv", "--step", "2", "--chunks", "2"], "--step goes with"),
    ({"in.csv": "x,y\n0,1\n"}, ["in.csv"], "one of the arguments --chunks"),
    ({"in.csv": "x,y\n0,1\n"}, ["in.csv", "--chunks", "0"], "expected a positive integer"),
    ({"in.csv": "x,y\n0,1\n"}, ["in.csv", "--width", "-1"], "expected a positive number"),
    ({"in.csv": "x,y\n0,1\n"}, ["in.csv", "--window", "5"], "longer than the data (1 points)"),
    ({"in.csv": "x,y\n0,1\n"}, ["in.csv", "--bins", "2.5"], "--bins takes a number of bins"),
    ({"in.csv": "x,y\n0,1\n"}, ["in.csv", "--bins", "3,1"], "edges must increase"),
    ({"in.csv": "x,y\n0,1\n"}, ["in.csv", "--chunks", "1", "--stat", "mode"], "unknown statistic"),
    ({"in.csv": "x,y\n0,1\n"}, ["in.csv", "--chunks", "1", "--out", "in.csv"], "refusing to"),
    ({"in.csv": "x,y\n0,1\n"}, ["in.csv", "--chunks", "1", "--out", "o.xls"], "output format"),
    ({"in.csv": "x,y\n0,1\n"}, ["in.csv", "--chunks", "1", "--out", "d/o.csv"], "does not exist"),
    ({"in.csv": "x,y\n0,1\n"}, ["in.csv", "--chunks", "1", "--plot", "p.jpg"], "output format"),
    (
        {"in.csv": "x,y\n0,1\n", "r.csv": "0,1\n5,2\n"},
        ["in.csv", "--ranges", "r.csv", "--out", "o.csv"],
        "r.csv: range 1 (line 2) has hi < lo (2.0 < 5.0)",
    ),
    (
        {"in.npz": ("x", "y")},
        ["in.npz", "--chunks", "1", "--out", "o.csv", "--plot", "o.png"],
        "length mismatch",
    ),
]


@pytest.mark.parametrize(("files", "argv", "message"), BAD, ids=[m for _, _, m in BAD])
def test_bad_input_one_line_exit_2_no_output(tmp_path, run, files, argv, message):
    for name, content in files.items():
        if isinstance(content, tuple):
            np.savez(tmp_path / name, x=np.arange(3.0), y=np.arange(2.0))
        elif isinstance(content, bytes):
            (tmp_path / name).write_bytes(content)
        else:
            (tmp_path / name).write_text(content)
    before = {p: (tmp_path / p).read_bytes() for p in os.listdir(tmp_path)}
    rc, out, err = run(*argv)
    assert rc == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert message in lines[0] and lines[0].startswith("jaxsubset stats: error: ")
    after = {p: (tmp_path / p).read_bytes() for p in os.listdir(tmp_path)}
    assert after == before  # nothing written, inputs untouched


def test_failure_after_computing_leaves_no_output(tmp_path, monkeypatch, run):
    import jaxsubset.cli._stats as stats_command

    (tmp_path / "in.csv").write_text("x,y\n0,1\n1,2\n2,3\n")
    (tmp_path / "o.csv").write_text("previous\n")

    def broken(*args, **kwargs):
        raise ValueError("the figure could not be drawn")

    monkeypatch.setattr(stats_command, "stats_figure", broken)
    # Not a documented input error: a bug, exit status 1 with one line asking for a report.
    rc, _, err = run("in.csv", "--chunks", "2", "--out", "o.csv", "--plot", "p.png")
    assert rc == 1
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "ValueError: the figure could not be drawn" in lines[0]
    assert "this is a bug, please report it" in lines[0]
    assert sorted(os.listdir(tmp_path)) == ["in.csv", "o.csv"]
    assert (tmp_path / "o.csv").read_text() == "previous\n"


def test_sort_option_and_in_process_numbers(tmp_path, run):
    rng = np.random.default_rng(5)
    x = rng.permutation(40).astype(float)
    y = rng.normal(size=40)
    rows = "\n".join(f"{a!r},{b!r}" for a, b in zip(x.tolist(), y.tolist(), strict=True))
    (tmp_path / "in.csv").write_text("x,y\n" + rows + "\n")
    rc, _, err = run(
        "in.csv", "--sort", "--bins", "4", "--stat", "var", "--ddof", "1", "--out", "o.csv"
    )
    assert rc == 0, err
    assert "sorted 40 rows by x column 'x' (--sort)" in err
    got = read_csv(tmp_path / "o.csv")
    order = np.argsort(x, kind="stable")
    xs, ys = x[order], y[order]
    counts, edges = np.histogram(xs, 4)
    bins = np.searchsorted(edges, xs, side="right") - 1
    bins[xs == edges[-1]] = 3
    want = [np.var(ys[bins == b], ddof=1) for b in range(4)]
    assert_close(got["var"], want)
    assert_close(got["count"], counts)
    assert_close(got["lo"], edges[:-1])
    assert_close(got["hi"], edges[1:])


def test_help_documents_every_option_with_an_example(capsys):
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    for name, sp in sub.choices.items():
        for action in sp._actions:
            if action.dest in ("help",) or action.nargs == 0:
                continue  # flags: --help, --quiet, --sort
            assert "e.g." in (action.help or ""), (name, action.dest)
        assert "example" in sp.epilog
    assert main(["stats", "--help"]) == 0
    text = capsys.readouterr().out
    options = "--chunks --size --window --step --width --bins --ranges --stat --x --y --out --plot"
    for opt in options.split() + ["--sort", "--quiet", "--ddof"]:
        assert opt in text


def test_parse_helpers():
    assert parse_bins("7") == 7
    np.testing.assert_array_equal(parse_bins("0, 1.5,10"), [0, 1.5, 10])
    for bad in ("0", "x", "1,", "1,nan", "2,1"):
        with pytest.raises(InputError):
            parse_bins(bad)
    assert parse_stats(None) == ("mean", "std", "min", "max")
    assert parse_stats(["Mean, max", "mean,count"]) == ("mean", "max", "count")
    with pytest.raises(InputError, match="unknown statistic 'avg'"):
        parse_stats(["avg"])
    text = format_table({"a": np.array([1, 22]), "bb": np.array([0.5, np.nan])})
    assert text.splitlines() == [" a   bb", " 1  0.5", "22  nan"]


class _Tty(io.StringIO):
    def isatty(self):
        return True


def test_progress_bar_only_on_a_terminal():
    tty = _Tty()
    p = Progress(4, "computing", stream=tty, delay=0.0)
    for _ in range(4):
        p.advance()
    assert "computing [" in tty.getvalue() and "100% (4/4)" in tty.getvalue()
    p.close()
    assert tty.getvalue().endswith("\r")
    pipe = io.StringIO()
    p = Progress(4, "computing", stream=pipe, delay=0.0)
    p.advance(4)
    p.close()
    assert pipe.getvalue() == ""
    quiet = _Tty()
    p = Progress(4, "computing", stream=quiet, enabled=False, delay=0.0).start()
    p.advance(4)
    p.close()
    assert quiet.getvalue() == ""


def test_progress_stages_and_background_redraw():
    tty = _Tty()
    p = Progress(None, "", stream=tty, delay=0.0).start()
    p.stage("reading big.csv")  # no total: the elapsed time
    assert "reading big.csv ... 0." in tty.getvalue()
    p.stage("computing", total=2)
    assert "computing [------------------------------]   0% (0/2)" in tty.getvalue()
    p.advance(2)  # a finished stage is always drawn
    assert "computing [##############################] 100% (2/2)" in tty.getvalue()
    p.close()  # stops the thread and erases the longest line drawn
    assert tty.getvalue().endswith("\r" + " " * len("computing [] 100% (2/2)" + "#" * 30) + "\r")
    assert p._thread is None


def test_statistics_against_numpy(command_mode):
    """Every statistic (the median and quantiles too) through range_statistic's roads."""
    import jaxsubset
    from jaxsubset.cli._reader import XY
    from jaxsubset.cli._stats import compute_statistics

    x, y = data(90, seed=6)
    y2 = np.stack([y, np.sin(x)], axis=1)
    xy = XY(x, y2, "x", ["a", "b"])
    r = jaxsubset.ranges.rolling(x, 4.0)
    got = compute_statistics(xy, r, (*STATS, "q0.9", "q0.25"), ddof=1)
    masks = [(x > a - 4.0) & (x <= a) for a in x]
    for c in range(2):
        want = reference(y2[:, c], masks, STATS)
        want["std"] = [np.std(y2[m, c], ddof=1) if m.sum() > 1 else np.nan for m in masks]
        want["var"] = [np.var(y2[m, c], ddof=1) if m.sum() > 1 else np.nan for m in masks]
        want["sem"] = [
            np.std(y2[m, c], ddof=1) / np.sqrt(m.sum()) if m.sum() > 1 else np.nan for m in masks
        ]
        for s in STATS:
            assert_close(got[s][:, 0 if s == "count" else c], want[s], s)
        for q in (0.9, 0.25):
            want_q = [np.quantile(y2[m, c], q) for m in masks]
            assert_close(got[f"q{q}"][:, c], want_q, f"q{q}")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--n-subsets", "0"], "expected a positive integer, got '0'"),
        (["--n-points", "1"], "--n-points must be at least 2, got 1"),
        (["--n-points", "10", "--n-subsets", "11"], "--n-subsets must be between 1 and 10"),
        (["--n-subsets", "101"], "--n-subsets must be between 1 and 100"),
        (["--out", "taken"], "--out taken: exists and is not a folder"),
    ],
)
def test_demo_bad_options(tmp_path, monkeypatch, capsys, argv, message):
    (tmp_path / "taken").write_text("a file\n")
    monkeypatch.chdir(tmp_path)
    assert main(["demo", *argv]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and message in lines[0]
    assert sorted(os.listdir(tmp_path)) == ["taken"]


def test_no_command_prints_help_and_exits_2(capsys):
    assert main([]) == 2
    assert "{demo,stats}" in capsys.readouterr().err
