"""Fuzzing the reader of ``jaxsubset stats``: random bytes, truncations and mutations of valid
CSV, NPY, NPZ and Parquet files.

Whatever the file holds, the command either exits 0 with the right table (checked against an
independent reader: NumPy, pyarrow, or a plain split of the text lines) or exits 2 with ONE
stderr line naming the file; never a traceback, never a file left behind, and the input is never
changed. ``--stat count`` keeps every example free of JAX compilation beyond the index ranges.
"""

import contextlib
import csv
import hashlib
import io
import math
import os
import tempfile

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from jaxsubset.cli import main


# the same in either JAX mode (the command switches 64-bit mode on; lint, imports and
# dependencies have no mode): run once, in the 64-bit run (see conftest.py)
pytestmark = pytest.mark.one_mode


N_CHUNKS = 3
KINDS = ("csv", "npy", "npz", "parquet")
CELL_CHARACTERS = '0123456789.,;-+eE \t\n#"naNxyT:'


def _seed_bytes(kind: str) -> bytes:
    """A small valid file of ``kind``: 12 rows x = 0, 0.5, ..., y = a wave with one NaN."""
    x = np.arange(12) * 0.5
    y = np.round(np.sin(x), 6)
    y[4] = np.nan
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, f"seed.{kind}")
        if kind == "csv":
            rows = ["" if v != v else repr(v) for v in y.tolist()]
            text = "# a comment\nx,y\n" + "".join(
                f"{a!r},{b}\n" for a, b in zip(x.tolist(), rows, strict=True)
            )
            with open(path, "w") as f:
                f.write(text)
        elif kind == "npy":
            np.save(path, np.stack([x, y], axis=1))
        elif kind == "npz":
            np.savez(path, x=x, y=y)
        else:
            pq.write_table(pa.table({"x": x, "y": y}), path)
        with open(path, "rb") as f:
            return f.read()


SEEDS = {k: _seed_bytes(k) for k in KINDS}


@st.composite
def hostile_files(draw):
    """``(kind, content)``: random bytes, a truncated seed, or a seed with bytes changed."""
    kind = draw(st.sampled_from(KINDS))
    seed = SEEDS[kind]
    how = draw(st.sampled_from(("random", "text", "truncate", "mutate", "mutate")))
    if how == "random":
        return kind, draw(st.binary(max_size=300))
    if how == "text":  # text made of what CSV cells are made of
        return kind, draw(st.text(alphabet=CELL_CHARACTERS, max_size=200)).encode()
    if how == "truncate":
        return kind, seed[: draw(st.integers(0, len(seed) - 1))]
    data = bytearray(seed)
    for _ in range(draw(st.integers(1, 4))):
        n = len(data)
        # anywhere, or in the back half (the data of a .npy, the columns of a Parquet file)
        at = draw(st.one_of(st.integers(0, n - 1), st.integers(n // 2, n - 1)))
        op = draw(st.sampled_from(("replace", "flip", "insert", "delete")))
        byte = draw(st.sampled_from((0, 0x22, 0x2C, 0x0A, 0x2D, 0x30, 0x35, 0x7F, 0xFF)))
        if op == "replace":
            data[at] = byte
        elif op == "flip":
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif op == "insert":
            data.insert(at, byte)
        elif n > 1:
            del data[at]
    return kind, bytes(data)


def _float(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def reference_x(kind: str, path: str) -> np.ndarray | None:
    """The x column by an independent reader (None where that reader sees no valid table)."""
    try:
        if kind == "npy":
            a = np.load(path, allow_pickle=False)
            if a.dtype.names:
                a = np.asarray(a[a.dtype.names[0]])
            elif a.ndim == 1:
                return np.arange(a.shape[0], dtype=float)
            elif a.ndim == 2 and a.shape[0] == 2 and a.shape[1] != 2:
                a = a[0]
            elif a.ndim == 2:
                a = a[:, 0]
            return np.asarray(a, dtype=float)
        if kind == "npz":
            with np.load(path, allow_pickle=False) as z:
                if len(z.files) == 1:  # one array: y against its row index, as for text
                    return np.arange(len(z[z.files[0]]), dtype=float)
                key = "x" if "x" in z.files else z.files[0]
                return np.asarray(z[key], dtype=float)
        if kind == "parquet":
            t = pq.read_table(path)
            name = "x" if "x" in t.column_names else t.column_names[0]
            return np.asarray(t.column(name).to_numpy(zero_copy_only=False), dtype=float)
    except Exception:
        return None
    with open(path, encoding="utf-8-sig", newline="") as f:
        lines = [s for s in f.read().splitlines() if s.strip() and not s.lstrip().startswith("#")]
    first = lines[0]
    delim = next((d for d in ("\t", ",", ";") if d in first), None)
    rows = [
        [c.strip() for c in (next(csv.reader([s], delimiter=delim)) if delim else s.split())]
        for s in lines
    ]
    header = any(c and _float(c) is None for c in rows[0])
    names = rows[0] if header else [str(i) for i in range(len(rows[0]))]
    j = names.index("x") if header and "x" in names else 0
    if len(rows[0]) == 1 and not (header and names[0] == "x"):
        return np.arange(len(rows) - header, dtype=float)  # one column: y against the index
    return np.array([_float(r[j]) for r in rows[header:]], dtype=float)


def run(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(argv)
    return status, out.getvalue(), err.getvalue()


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(hostile_files())
def test_any_file_gives_the_right_table_or_one_line_naming_it(case):
    kind, content = case
    with tempfile.TemporaryDirectory() as d:
        name = os.path.join(d, f"in.{kind}")
        with open(name, "wb") as f:
            f.write(content)
        digest = hashlib.sha256(content).hexdigest()
        out = os.path.join(d, "out.csv")
        argv = ["stats", name, "--chunks", str(N_CHUNKS), "--stat", "count", "--quiet"]
        status, stdout, stderr = run([*argv, "--out", out])
        with open(name, "rb") as f:
            assert hashlib.sha256(f.read()).hexdigest() == digest  # the input is untouched
        assert "Traceback" not in stderr
        assert stdout == ""
        left = sorted(os.listdir(d))
        if status == 2:
            lines = stderr.strip().splitlines()
            assert len(lines) == 1, stderr
            assert lines[0].startswith("jaxsubset stats: error: ") and name in lines[0], lines
            assert left == ["in." + kind]  # no output, no temporary file
            return
        assert status == 0, stderr
        assert left == sorted(["in." + kind, "out.csv"])
        with open(out) as f:
            table = list(csv.DictReader(f))
        x = reference_x(kind, name)
        assert x is not None, "the command read a file its independent reader refuses"
        pieces = np.array_split(np.arange(len(x)), N_CHUNKS)
        sizes = [len(p) for p in pieces]
        assert [int(r["count"]) for r in table] == sizes
        assert [int(r["start"]) for r in table] == np.cumsum([0, *sizes[:-1]]).tolist()
        for r, p in zip(table, pieces, strict=True):
            if len(p):
                for col, i in (("x_first", p[0]), ("x_last", p[-1])):
                    assert math.isclose(float(r[col]), x[i], rel_tol=1e-15), (col, r, x)
