"""File readers and writers of the command (in-process: no subprocess, no JAX compile)."""

import json
import os

import numpy as np
import pytest

from jaxsubset.cli._files import InputError
from jaxsubset.cli._reader import read_table, read_xy, to_numeric
from jaxsubset.cli._text import inspect_text, read_direct
from jaxsubset.cli._writer import atomic_output, check_output_path, write_table


# the same in either JAX mode (the command switches 64-bit mode on; lint, imports and
# dependencies have no mode): run once, in the 64-bit run (see conftest.py)
pytestmark = pytest.mark.one_mode


def _write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


# ---------------------------------------------------------------------------- text
def test_csv_with_header_by_name_and_index(tmp_path):
    p = _write(tmp_path / "d.csv", "# a comment\ntime, a ,b\n0,1.5,10\n\n1,2.5,20\n2,-3e-5,30\n")
    t = read_table(p)
    assert t.header and t.names == ["time", "a", "b"]
    xy = read_xy(p, "time", ["b", "1"])
    np.testing.assert_array_equal(xy.x, [0, 1, 2])
    assert xy.x.dtype == np.float64
    np.testing.assert_array_equal(xy.y, [[10, 1.5], [20, 2.5], [30, -3e-5]])
    assert xy.x_name == "time" and xy.y_names == ["b", "a"]


def test_csv_without_header_defaults_to_first_two_columns(tmp_path):
    p = _write(tmp_path / "d.csv", "0.5,1,7\n1.5,2,8\n")
    t = read_table(p)
    assert not t.header and t.names == ["0", "1", "2"]
    xy = read_xy(p)
    np.testing.assert_array_equal(xy.x, [0.5, 1.5])
    np.testing.assert_array_equal(xy.y[:, 0], [1, 2])


def test_tsv_and_whitespace_and_single_column(tmp_path):
    tsv = _write(tmp_path / "d.tsv", "x\ty\n1\t2\n3\t4\n")
    np.testing.assert_array_equal(read_xy(tsv).y[:, 0], [2, 4])
    txt = _write(tmp_path / "d.txt", "1  2.5\n3   4.5\n")
    np.testing.assert_array_equal(read_xy(txt).y[:, 0], [2.5, 4.5])
    one = _write(tmp_path / "one.csv", "v\n5\n6\n7\n")
    xy = read_xy(one)
    np.testing.assert_array_equal(xy.x, [0, 1, 2])
    np.testing.assert_array_equal(xy.y[:, 0], [5, 6, 7])
    assert xy.x_name == "index"


def test_direct_and_careful_roads_agree(tmp_path):
    # pyarrow reading the file typed (the direct road) and the numbered lines split into text
    # and converted by the command (the careful road): the same numbers, bit for bit
    rng = np.random.default_rng(0)
    v = rng.normal(size=(50, 3)) * 10.0 ** rng.integers(-300, 14, size=(50, 3))
    rows = [",".join(repr(a) for a in row) for row in v.tolist()]
    plain = _write(tmp_path / "a.csv", "a,b,c\n" + "\n".join(rows) + "\n")
    rows[0] = '"' + rows[0].replace(",", '","') + '"'  # quoted cells
    quoted = _write(tmp_path / "b.csv", "a,b,c\n" + "\n".join(rows) + "\n")
    for p in (plain, quoted):
        head = inspect_text(str(p), None, None)
        assert head.direct and head.names == ["a", "b", "c"] and (head.line, head.offset) == (2, 6)
        direct, n = read_direct(head, {0: "float", 1: "float", 2: "float"})
        careful = read_table(p)
        assert n == 50 and careful.names == ["a", "b", "c"] and careful.lines == list(range(2, 52))
        assert careful.columns[0].dtype.kind == "U"
        for j in range(3):
            np.testing.assert_array_equal(direct[j], v[:, j])
            np.testing.assert_array_equal(to_numeric(careful, j, "y"), v[:, j])


def test_empty_cells_in_y_are_missing_values(tmp_path):
    p = _write(tmp_path / "d.csv", "x,y\n0,1\n1,\n2,3\n")
    y = read_xy(p).y[:, 0]
    assert y[0] == 1 and np.isnan(y[1]) and y[2] == 3


@pytest.mark.parametrize(
    ("text", "args", "message"),
    [
        ("x,y\n0,1\n1,abc\n", {}, "y column 'y' is not numeric: line 3 holds 'abc'"),
        ("x,y\n0,1\n# note\n\n1,abc\n", {}, "not numeric: line 5 holds 'abc'"),
        ('x,y\n0,1\n1,"2"\n2,"a,b"\n', {}, "not numeric: line 4 holds 'a,b'"),
        ("x,y\n0,\n1,\n", {}, "y column 'y' is empty"),
        ("x,y\n0,1\n1,2,3\n", {}, "line 3 has 3 field(s), expected 2"),
        ("x,y\n0,1\n,2\n", {}, "x column 'x' has 1 missing/NaN value(s), the first at line 3"),
        ("x,y\n0,1\nnan,2\n", {}, "missing/NaN"),
        ("x,y\n0,1\n2,2\n1,3\n", {}, "not sorted ascending (line 4: 1.0 after 2.0); pass --sort"),
        ("x,y\n0,1\n", {"x": "t"}, "no x column 't'; the columns are 'x', 'y'"),
        ("x,y\n0,1\n", {"y": ["5"]}, "no y column '5'"),
        ("x,y\n", {}, "has a header but no data rows"),
        ("# only a comment\n\n", {}, "holds no data"),
    ],
)
def test_text_errors_name_the_problem(tmp_path, text, args, message):
    p = _write(tmp_path / "d.csv", text)
    with pytest.raises(InputError) as e:
        read_xy(p, **args)
    assert message in str(e.value)
    assert "\n" not in str(e.value)


def test_missing_binary_and_unknown_files(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        read_table(tmp_path / "nope.csv")
    (tmp_path / "b.csv").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe")
    with pytest.raises(InputError, match="b.csv: the file is a PNG image"):
        read_table(tmp_path / "b.csv")
    (tmp_path / "d.xlsx").write_bytes(b"PK")
    with pytest.raises(InputError, match="unsupported input format '.xlsx'"):
        read_table(tmp_path / "d.xlsx")
    (tmp_path / "bad.npy").write_bytes(b"not numpy at all")
    with pytest.raises(InputError, match="the file is not a NumPy .npy array"):
        read_table(tmp_path / "bad.npy")


def test_sort_reorders_rows_stably(tmp_path):
    p = _write(tmp_path / "d.csv", "x,y\n2,1\n0,2\n2,3\n1,4\n")
    xy = read_xy(p, sort=True)
    assert xy.sorted_rows
    np.testing.assert_array_equal(xy.x, [0, 1, 2, 2])
    np.testing.assert_array_equal(xy.y[:, 0], [2, 4, 1, 3])  # ties keep file order


# ---------------------------------------------------------------------------- binary formats
def test_npy_two_column_pair_1d_and_structured(tmp_path):
    x = np.linspace(0, 1, 5)
    y = x**2
    np.save(tmp_path / "cols.npy", np.stack([x, y], axis=1))
    np.save(tmp_path / "pair.npy", np.stack([x, y]))
    np.save(tmp_path / "flat.npy", y)
    rec = np.zeros(5, dtype=[("t", "f8"), ("v", "f8")])
    rec["t"], rec["v"] = x, y
    np.save(tmp_path / "rec.npy", rec)
    for name, kw in [("cols", {}), ("pair", {}), ("rec", {"x": "t", "y": ["v"]})]:
        xy = read_xy(tmp_path / f"{name}.npy", **kw)
        np.testing.assert_array_equal(xy.x, x)
        np.testing.assert_array_equal(xy.y[:, 0], y)
    xy = read_xy(tmp_path / "flat.npy")
    np.testing.assert_array_equal(xy.x, np.arange(5))
    np.testing.assert_array_equal(xy.y[:, 0], y)
    np.save(tmp_path / "cube.npy", np.zeros((2, 2, 2)))
    with pytest.raises(InputError, match=r"got shape \(2, 2, 2\)"):
        read_table(tmp_path / "cube.npy")


def test_npz_keys_defaults_and_length_mismatch(tmp_path):
    x = np.arange(4.0)
    np.savez(tmp_path / "d.npz", other=x * 7, y=x + 1, x=x)
    xy = read_xy(tmp_path / "d.npz")
    np.testing.assert_array_equal(xy.x, x)
    np.testing.assert_array_equal(xy.y[:, 0], x + 1)  # 'x' and 'y' picked by name
    np.testing.assert_array_equal(read_xy(tmp_path / "d.npz", y=["other"]).y[:, 0], x * 7)
    np.savez(tmp_path / "bad.npz", x=x, y=np.arange(3.0))
    with pytest.raises(InputError, match="length mismatch: x column 'x' has 4 values, y column"):
        read_xy(tmp_path / "bad.npz")


def test_parquet_read_and_write_round_trip(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    x = np.array([0.0, 0.5, 2.0])
    pq.write_table(
        pa.table({"t": x, "s": np.array(["a", "b", "c"]), "v": x / 3}), tmp_path / "d.parquet"
    )
    xy = read_xy(tmp_path / "d.parquet", "t", ["v"])
    np.testing.assert_array_equal(xy.y[:, 0], x / 3)
    with pytest.raises(InputError, match="y column 's' is not numeric"):
        read_xy(tmp_path / "d.parquet", "t", ["s"])
    write_table(tmp_path / "o.parquet", {"a": np.arange(3), "b": x / 3})
    back = pq.read_table(tmp_path / "o.parquet").to_pydict()
    assert back["a"] == [0, 1, 2] and back["b"] == (x / 3).tolist()


def test_to_numeric_keeps_large_integers_exact(tmp_path):
    p = _write(tmp_path / "d.csv", "t,y\n1700000000000000001,1\n1700000000000000002,2\n")
    t = read_table(p)
    x = to_numeric(t, 0, "x")
    assert x.dtype == np.int64 and x[1] - x[0] == 1


# ---------------------------------------------------------------------------- writing
TRICKY = np.array(
    [0.1 + 0.2, 1 / 3, 1e-300, -2.5e17 + 1, np.pi * 1e10, np.nan, 123456789.123456789]
)


def test_csv_and_tsv_keep_full_precision(tmp_path):
    for ext, sep in ((".csv", ","), (".tsv", "\t")):
        p = tmp_path / f"o{ext}"
        write_table(p, {"i": np.arange(len(TRICKY)), "v": TRICKY})
        lines = p.read_text().splitlines()
        assert lines[0] == f"i{sep}v"
        back = np.array([float(line.split(sep)[1]) for line in lines[1:]])
        np.testing.assert_array_equal(back, TRICKY)  # bit-exact, NaN included
        assert [line.split(sep)[0] for line in lines[1:]] == [str(i) for i in range(len(TRICKY))]


def test_json_rows_with_nan_as_null(tmp_path):
    p = tmp_path / "o.json"
    write_table(p, {"i": np.arange(len(TRICKY)), "v": TRICKY})
    rows = json.loads(p.read_text())
    assert [r["i"] for r in rows] == list(range(len(TRICKY)))
    got = np.array([np.nan if r["v"] is None else r["v"] for r in rows])
    np.testing.assert_array_equal(got, TRICKY)


def test_atomic_output_leaves_nothing_on_failure(tmp_path):
    target = tmp_path / "o.csv"
    target.write_text("old\n")
    with pytest.raises(RuntimeError):
        with atomic_output(target) as tmp:
            with open(tmp, "w") as f:
                f.write("partial")
            raise RuntimeError("boom")
    assert target.read_text() == "old\n"
    assert sorted(os.listdir(tmp_path)) == ["o.csv"]
    with atomic_output(target) as tmp:
        with open(tmp, "w") as f:
            f.write("new\n")
    assert target.read_text() == "new\n"
    assert sorted(os.listdir(tmp_path)) == ["o.csv"]
    umask = os.umask(0)
    os.umask(umask)
    assert os.stat(target).st_mode & 0o777 == 0o666 & ~umask  # not mkstemp's private 0600


def test_check_output_path(tmp_path):
    src = _write(tmp_path / "in.csv", "x,y\n0,1\n")
    allowed = (".csv", ".json")
    assert check_output_path(tmp_path / "o.csv", [src], allowed) == str(tmp_path / "o.csv")
    with pytest.raises(InputError, match="refusing to overwrite the input file"):
        check_output_path(tmp_path / "." / "in.csv", [src], allowed)
    with pytest.raises(InputError, match=r"unsupported output format '.xlsx' \(use .csv, .json\)"):
        check_output_path(tmp_path / "o.xlsx", [src], allowed)
    with pytest.raises(InputError, match="the output folder .* does not exist"):
        check_output_path(tmp_path / "no" / "o.csv", [src], allowed)
    (tmp_path / "dir.csv").mkdir()
    with pytest.raises(InputError, match="is a folder"):
        check_output_path(tmp_path / "dir.csv", [src], allowed)


def test_uint64_beyond_int64_is_read_as_float_not_wrapped(tmp_path):
    big = np.array([0, 2**63 + 2**11, 2**64 - 2**11], dtype=np.uint64)
    np.save(tmp_path / "u.npy", np.stack([np.arange(3, dtype=np.uint64), big], axis=1))
    xy = read_xy(tmp_path / "u.npy")
    np.testing.assert_array_equal(xy.y[:, 0], big.astype(np.float64))
    assert (xy.y >= 0).all()  # int64 would have wrapped these to negative numbers
