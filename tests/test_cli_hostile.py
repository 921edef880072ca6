"""Hostile input to ``jaxsubset``: every bad file, option or value is one line and exit 2.

Each test here is a case that once gave a traceback, a wrong table, a leftover file or a message
naming the wrong thing. An unexpected exception (a bug) is exit status 1 with one line asking for
a report, the traceback only with ``--debug``.
"""

import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest

import jaxsubset
from jaxsubset.cli import main


# the same in either JAX mode (the command switches 64-bit mode on; lint, imports and
# dependencies have no mode): run once, in the 64-bit run (see conftest.py)
pytestmark = pytest.mark.one_mode


def one_error(capsys, argv, status=2):
    """Run ``main(argv)``; return its single stderr line (asserting the status, no stdout)."""
    assert main(argv) == status
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def npz_bytes(path):
    np.savez(path, x=np.arange(10.0), y=np.arange(10.0) ** 2)
    return path.read_bytes()


# ---------------------------------------------------------------------------- broken files
def test_truncated_non_zip_and_bad_crc_npz_are_one_line(folder, capsys):
    good = npz_bytes(folder / "good.npz")
    bad_crc = bytearray(good)
    bad_crc[good.find(b"\x93NUMPY") + 200] ^= 0xFF  # inside x's data: the CRC no longer holds
    cases = {
        "trunc.npz": (good[: len(good) // 2], "cannot read the file as a NumPy .npz archive"),
        "nonzip.npz": (b"hello, not a zip archive", "is not a NumPy .npz archive"),
        "crc.npz": (bytes(bad_crc), "Bad CRC-32"),
        "empty.npz": (b"", "is not a NumPy .npz archive"),
    }
    for name, (content, message) in cases.items():
        (folder / name).write_bytes(content)
        line = one_error(capsys, ["stats", name, "--chunks", "2"])
        assert line.startswith(f"jaxsubset stats: error: {name}: ") and message in line, line
    assert sorted(os.listdir(folder)) == sorted(["good.npz", *cases])


def test_an_npz_archive_named_npy_is_read_as_the_archive(folder, capsys):
    (folder / "a.npy").write_bytes(npz_bytes(folder / "a.npz"))
    assert main(["stats", "a.npy", "--chunks", "2", "--stat", "sum", "--out", "o.csv"]) == 0
    got = pd.read_csv(folder / "o.csv")
    assert got["sum"].tolist() == [30.0, 255.0]  # 0+1+4+9+16, 25+...+81


def test_garbage_named_npy_is_not_called_python_objects(folder, capsys):
    (folder / "g.npy").write_bytes(b"garbage garbage garbage")
    line = one_error(capsys, ["stats", "g.npy", "--chunks", "2"])
    assert "g.npy: the file is not a NumPy .npy array" in line
    assert "Python objects" not in line
    np.save(folder / "obj.npy", np.array([{"a": 1}, None], dtype=object), allow_pickle=True)
    line = one_error(capsys, ["stats", "obj.npy", "--chunks", "2"])
    assert "obj.npy" in line and "Python objects" in line  # the real case keeps its message
    np.save(folder / "t.npy", np.ones((1000, 2)))
    (folder / "t.npy").write_bytes((folder / "t.npy").read_bytes()[:5000])
    line = one_error(capsys, ["stats", "t.npy", "--chunks", "2"])
    assert "t.npy" in line and "truncated" in line and "(1000, 2)" in line


def test_unterminated_quote_names_the_file_and_line(folder, capsys):
    (folder / "q.csv").write_text('x,y\n0,1\n1,"2\n2,3\n')
    line = one_error(capsys, ["stats", "q.csv", "--chunks", "2"])
    assert "q.csv" in line and "line 3" in line and "quote" in line
    assert "zip()" not in line


# ---------------------------------------------------------------------------- huge values
@pytest.mark.parametrize("option", ["--chunks", "--bins"])
def test_counts_beyond_memory_name_the_limit(folder, capsys, option):
    (folder / "in.csv").write_text("x,y\n0,1\n1,2\n2,3\n")
    line = one_error(capsys, ["stats", "in.csv", option, "100000000000"])
    assert f"{option} 100000000000" in line and "GiB available" in line


def test_ddof_beyond_int32_is_refused_by_the_option(folder, capsys):
    (folder / "in.csv").write_text("x,y\n0,1\n1,2\n2,3\n")
    line = one_error(capsys, ["stats", "in.csv", "--chunks", "2", "--ddof", "9" * 20])
    assert "argument --ddof" in line and "at most 2**31-1" in line


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (["--width", "200000D"], "--width 200000D: longer than the longest int64 nanosecond"),
        (["--bins", "99999999999999999999D"], "longer than the longest int64 nanosecond"),
        (["--bins", "1000000000000000000000Y"], "longer than the whole range of int64"),
        (["--width", "0.5ns"], "--width 0.5ns: shorter than 1 ns"),
    ],
)
def test_durations_beyond_int64_nanoseconds(folder, capsys, spec, message):
    (folder / "t.csv").write_text("t,y\n2001-01-01,1\n2001-01-02,2\n2001-01-05,3\n")
    line = one_error(capsys, ["stats", "t.csv", *spec])
    assert message in line


def test_demo_points_beyond_memory(folder, capsys):
    line = one_error(capsys, ["demo", "--n-points", "100000000000000", "--out", "d"])
    assert "--n-points 100000000000000" in line and "GiB available" in line
    assert os.listdir(folder) == []


# ---------------------------------------------------------------------------- messages
def test_ranges_hi_below_lo_prints_plain_numbers(folder, capsys):
    (folder / "in.csv").write_text("x,y\n0,1\n1,2\n")
    (folder / "r.csv").write_text("lo,hi\n0,1\n5,0\n")
    line = one_error(capsys, ["stats", "in.csv", "--ranges", "r.csv"])
    assert "r.csv: range 1 (line 3) has hi < lo (0.0 < 5.0)" in line


def test_date_messages_quote_the_cell_and_far_dates_never_wrap(folder, capsys):
    # The ISO day cell '1500-01-03' was quoted as '1500-01-03T00:00' (mixed formats).
    (folder / "a.csv").write_text("t,y\n2001-01-01,1\n2001-01-02T06:00,2\n1500-01-03,3\n")
    line = one_error(capsys, ["stats", "a.csv", "--chunks", "2"])
    assert "line 4 holds '1500-01-03', outside 1677-09-22 .. 2262-04-10" in line
    # With a time-zone cell the careful parser ran, and wrapped 1500 to a date in 2084.
    (folder / "b.csv").write_text("t,y\n2001-01-01,1\n2001-01-02T06:00+01:00,2\n1500-01-03,3\n")
    line = one_error(capsys, ["stats", "b.csv", "--chunks", "2"])
    assert "line 4 holds '1500-01-03', outside" in line
    (folder / "c.csv").write_text("t,y\n2001-01-02,1\n2001-01-01T06:00,2\n")
    line = one_error(capsys, ["stats", "c.csv", "--chunks", "2"])
    assert "(line 3: 2001-01-01T06:00 after 2001-01-02)" in line


def test_unwritable_output_folder_fails_first_naming_the_output(folder, capsys, monkeypatch):
    import jaxsubset.cli._stats as stats_command

    (folder / "in.csv").write_text("x,y\n0,1\n1,2\n")

    def never(*args, **kwargs):
        raise AssertionError("the data was read before the output folder was checked")

    monkeypatch.setattr(stats_command, "read_xy", never)
    # /proc refuses new files even to root (file modes do not stop root).
    line = one_error(capsys, ["stats", "in.csv", "--chunks", "1", "--out", "/proc/o.csv"])
    assert "/proc/o.csv: cannot write to the output folder /proc" in line
    assert ".tmp" not in line
    if os.geteuid() != 0:
        ro = folder / "ro"
        ro.mkdir()
        ro.chmod(0o555)
        try:
            line = one_error(capsys, ["stats", "in.csv", "--chunks", "1", "--out", "ro/o.csv"])
        finally:
            ro.chmod(0o755)
        assert "ro/o.csv: cannot write to the output folder" in line and ".tmp" not in line


# ---------------------------------------------------------------------------- exit status 1
def test_a_library_type_error_is_a_bug_not_bad_input(folder, capsys, monkeypatch):
    (folder / "in.csv").write_text("x,y\n0,1\n1,2\n2,3\n")

    def broken(*args, **kwargs):
        raise TypeError("unsupported operand")

    monkeypatch.setattr(jaxsubset.ranges, "chunks", broken)
    line = one_error(capsys, ["stats", "in.csv", "--chunks", "2"], status=1)
    assert "internal error: TypeError: unsupported operand" in line
    assert "please report it" in line and "--debug" in line
    assert main(["stats", "in.csv", "--chunks", "2", "--debug"]) == 1
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err and "broken" in err
    assert err.strip().splitlines()[-1].startswith("jaxsubset stats: internal error: TypeError")
    assert sorted(os.listdir(folder)) == ["in.csv"]


def test_main_keeps_the_callers_jax_mode(folder, capsys):
    import jax

    before = bool(jax.config.jax_enable_x64)
    (folder / "in.csv").write_text("x,y\n0,1\n1,2\n")
    try:
        for mode in (False, True):  # the command itself runs in 64-bit mode
            jax.config.update("jax_enable_x64", mode)
            assert main(["stats", "in.csv", "--chunks", "1", "--stat", "count"]) == 0
            assert bool(jax.config.jax_enable_x64) == mode
    finally:
        jax.config.update("jax_enable_x64", before)


# ---------------------------------------------------------------------------- signals
@pytest.mark.parametrize("sig", ["SIGTERM", "SIGHUP"])
def test_termination_while_writing_leaves_no_temporary_file(tmp_path, sig):
    (tmp_path / "in.csv").write_text("x,y\n" + "".join(f"{i},{i % 7}\n" for i in range(50)))
    (tmp_path / "out.csv").write_text("previous\n")
    # The signal arrives while the table is being written (inside the temporary file).
    code = textwrap.dedent(
        f"""
        import os, signal, sys
        import jaxsubset.cli._writer as writer
        real = writer.format_value
        sent = []
        def format_value(v):
            if not sent:
                sent.append(1)
                os.kill(os.getpid(), signal.{sig})
            return real(v)
        writer.format_value = format_value
        from jaxsubset.cli import main
        sys.exit(main(["stats", "in.csv", "--chunks", "5", "--out", "out.csv"]))
        """
    )
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    r = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env
    )
    assert r.returncode == 128 + getattr(signal, sig), r.stderr
    assert r.stderr.strip() == f"jaxsubset: terminated by {sig}"
    assert sorted(os.listdir(tmp_path)) == ["in.csv", "out.csv"]
    assert (tmp_path / "out.csv").read_text() == "previous\n"


# ---------------------------------------------------------------------------- streamed path
def streamed_and_whole(folder, name, argv, monkeypatch):
    """The table of ``argv`` read whole and streamed, asserting that the second streamed."""
    assert main(["stats", name, *argv, "--out", "whole.csv"]) == 0
    calls = []
    real = jaxsubset.stream
    monkeypatch.setattr(jaxsubset, "stream", lambda *a, **k: calls.append(1) or real(*a, **k))
    assert main(["stats", name, *argv, "--out", "streamed.csv", "--stream-above", "0"]) == 0
    monkeypatch.setattr(jaxsubset, "stream", real)
    assert calls == [1]
    return pd.read_csv(folder / "whole.csv"), pd.read_csv(folder / "streamed.csv")


def test_step_without_window_is_refused_on_the_streamed_road_too(folder, capsys, monkeypatch):
    np.save(folder / "d.npy", np.stack([np.arange(50.0), np.ones(50)], axis=1))

    def never(*args, **kwargs):
        raise AssertionError("the data was read before the options were checked")

    monkeypatch.setattr(jaxsubset, "stream", never)
    for extra in ([], ["--stream-above", "0"]):
        line = one_error(capsys, ["stats", "d.npy", "--chunks", "2", "--step", "2", *extra])
        assert line == (
            "jaxsubset stats: error: --step goes with --window only (the step between sliding "
            "windows)"
        )


def test_streamed_1d_y_and_datetime_field_like_in_memory(folder, capsys, monkeypatch):
    rng = np.random.default_rng(3)
    y = rng.normal(size=1000)
    np.save(folder / "y.npy", y)
    whole, streamed = streamed_and_whole(
        folder, "y.npy", ["--chunks", "4", "--stat", "sum,max"], monkeypatch
    )
    pd.testing.assert_frame_equal(whole, streamed, rtol=1e-12)
    assert streamed["x_first"].tolist() == [0, 250, 500, 750]
    rec = np.zeros(1000, dtype=[("t", "datetime64[ns]"), ("v", "f8")])
    rec["t"] = np.datetime64("2001-01-01", "ns") + np.arange(1000) * np.timedelta64(3, "h")
    rec["v"] = y
    np.save(folder / "rec.npy", rec)
    whole, streamed = streamed_and_whole(
        folder, "rec.npy", ["--bins", "7D", "--stat", "count,mean"], monkeypatch
    )
    pd.testing.assert_frame_equal(whole, streamed, rtol=1e-12)
    assert streamed["lo"].iloc[1] == "2001-01-08T00:00:00"
    capsys.readouterr()


def test_streamed_bool_x_prints_0_1_and_float32_sums_in_float64(folder, capsys, monkeypatch):
    x = np.repeat([False, True], [3, 5])
    np.save(folder / "b.npy", np.stack([x, x], axis=1))
    whole, streamed = streamed_and_whole(
        folder, "b.npy", ["--chunks", "2", "--stat", "sum"], monkeypatch
    )
    assert streamed["x_first"].tolist() == [0, 1] and streamed["x_last"].tolist() == [1, 1]
    pd.testing.assert_frame_equal(whole, streamed)
    n = 300_000  # a float32 accumulator drifts by ~1e-6 relative over this many terms
    data = np.stack([np.arange(n), np.full(n, 500.0)], axis=1).astype(np.float32)
    np.save(folder / "f.npy", data)
    whole, streamed = streamed_and_whole(
        folder, "f.npy", ["--chunks", "1", "--stat", "sum,mean"], monkeypatch
    )
    want = float(np.sum(data[:, 1].astype(np.float64)))
    assert whole["sum"].tolist() == [want] and streamed["sum"].tolist() == [want]
    assert streamed["mean"].tolist() == [500.0]
    capsys.readouterr()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes need a POSIX system")
def test_a_pipe_is_refused_instead_of_blocking(folder, capsys):
    os.mkfifo(folder / "pipe.csv")  # reading it would wait for a writer forever
    line = one_error(capsys, ["stats", "pipe.csv", "--chunks", "2"])
    assert "pipe.csv: not a regular file" in line


def test_demo_unwritable_out_fails_before_computing(folder, capsys, monkeypatch):
    import jaxsubset.cli._demo as demo

    def never(*args, **kwargs):
        raise AssertionError("the demo computed before checking its output folder")

    monkeypatch.setattr(demo, "make_master", never)
    line = one_error(capsys, ["demo", "--out", "/proc/demo-out"])
    assert "--out /proc/demo-out: cannot write figures there" in line
