"""Reading ``(x, y)`` columns from files and writing result tables safely (used by the command).

Readers: CSV/TSV/whitespace text (header detected), ``.npy`` (a 2-column array, a pair of rows,
a 1-D array or a structured array), ``.npz`` (arrays by key) and Parquet (needs ``pyarrow``).
Columns are chosen by name or by 0-based index. Writers: CSV/TSV, JSON and Parquet by extension,
every float written with full precision (``repr``: the shortest text that reads back to the same
float64), always through a temporary file in the same folder renamed into place, so a failed run
never leaves a partial file and a reader never sees one.

Every problem with a file is an :class:`InputError` with a one-line message naming the file, the
column or the line.
"""

import contextlib
import csv
import json
import math
import os
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np


TEXT_SUFFIXES = (".csv", ".tsv", ".tab", ".txt", ".dat", "")
INPUT_SUFFIXES = TEXT_SUFFIXES + (".npy", ".npz", ".parquet", ".pq")
OUTPUT_SUFFIXES = (".csv", ".tsv", ".json", ".parquet")


class InputError(ValueError):
    """A problem with the user's files or options; its message is one line for the user."""


@dataclass
class Table:
    """Named columns read from a file, not yet converted to numbers.

    Attributes:
        path: the file the columns came from.
        names: one name per column (from the header, the ``.npz`` keys, or ``"0"``, ``"1"``...).
        columns: one 1-D array per column (strings for text files, numbers otherwise).
        header: whether the names came from the file.
        lines: for text files, the 1-based line number of every data row (for messages).
    """

    path: str
    names: list[str]
    columns: list[np.ndarray]
    header: bool = False
    lines: list[int] | None = None

    def where(self, row: int) -> str:
        """Where data row ``row`` (0-based) is in the file, for messages."""
        return f"line {self.lines[row]}" if self.lines else f"row {row}"

    def index_of(self, spec: str | int, role: str) -> int:
        """The position of the column named (or numbered, from 0) ``spec``."""
        spec = str(spec).strip()
        if spec in self.names:
            return self.names.index(spec)
        try:
            i = int(spec)
        except ValueError:
            i = None
        if i is not None and 0 <= i < len(self.names):
            return i
        known = ", ".join(repr(n) for n in self.names[:12])
        more = ", ..." if len(self.names) > 12 else ""
        raise InputError(
            f"{self.path}: no {role} column {spec!r}; the columns are {known}{more} "
            f"(or a 0-based index below {len(self.names)})"
        )


def suffix(path: str | os.PathLike) -> str:
    """The lower-case file extension of ``path`` (``""`` when none)."""
    return os.path.splitext(os.fspath(path))[1].lower()


# ---------------------------------------------------------------------------- reading
def read_table(path: str | os.PathLike) -> Table:
    """Read every column of a file into a :class:`Table` (text stays text until converted).

    Args:
        path: a ``.csv``, ``.tsv``, ``.txt``/``.dat`` (whitespace), ``.npy``, ``.npz`` or
            ``.parquet`` file.

    Returns:
        The file's columns and their names.

    Raises:
        InputError: the file is missing, unreadable, empty, or of an unknown format.
    """
    path = os.fspath(path)
    if not os.path.exists(path):
        raise InputError(f"{path}: no such file")
    if os.path.isdir(path):
        raise InputError(f"{path}: is a folder, not a file")
    ext = suffix(path)
    if ext not in INPUT_SUFFIXES:
        raise InputError(
            f"{path}: unsupported input format {ext!r} "
            "(use .csv, .tsv, .txt, .dat, .npy, .npz or .parquet)"
        )
    if ext == ".npy":
        table = _read_npy(path)
    elif ext == ".npz":
        table = _read_npz(path)
    elif ext in (".parquet", ".pq"):
        table = _read_parquet(path)
    else:
        table = _read_text(path, "\t" if ext in (".tsv", ".tab") else None)
    if not table.columns or all(len(c) == 0 for c in table.columns):
        raise InputError(f"{path}: the file holds no data")
    return table


def _is_number(field: str) -> bool:
    try:
        float(field)
    except ValueError:
        return False
    return True


def _split_lines(texts: list[str], delimiter: str | None) -> list[list[str]]:
    """Fields of every line: whitespace split, plain split, or the csv module for quotes."""
    if delimiter is None:
        return [t.split() for t in texts]
    if not any('"' in t for t in texts):
        return [t.split(delimiter) for t in texts]  # fast path, same result without quotes
    return list(csv.reader(texts, delimiter=delimiter))


def _fast_numeric(texts: list[str], delimiter: str | None, width: int) -> np.ndarray | None:
    """The rows as an ``(N, width)`` float64 array when every field is a plain number.

    None when anything needs the careful path: quotes, empty cells, text, ragged rows, or
    integers too large for float64 to hold exactly (those stay int64 there).
    """
    if not texts or any('"' in t for t in texts[:1000]):
        return None
    try:
        grid = np.loadtxt(texts, delimiter=delimiter, dtype=np.float64, ndmin=2, comments=None)
    except (ValueError, IndexError):
        return None
    if grid.shape != (len(texts), width):
        return None
    with np.errstate(invalid="ignore"):
        if np.any(np.abs(grid) >= 2.0**53):  # maybe a rounded big integer (or inf)
            return None
    return grid


def _read_text(path: str, delimiter: str | None) -> Table:
    try:
        with open(path, encoding="utf-8-sig", newline="") as f:
            text = f.read()
    except UnicodeDecodeError:
        raise InputError(f"{path}: cannot read the file as UTF-8 text (is it binary?)") from None
    except OSError as e:
        raise InputError(f"{path}: cannot read the file: {e.strerror}") from None
    if "\x00" in text:
        raise InputError(f"{path}: cannot read the file as text (it holds NUL bytes)")
    # Data lines with their 1-based line numbers; blank lines and '#' comments are skipped.
    lines = [
        (n, line)
        for n, line in enumerate(text.splitlines(), start=1)
        if line.strip() and not line.lstrip().startswith("#")
    ]
    if not lines:
        raise InputError(f"{path}: the file holds no data")
    if delimiter is None:
        first = lines[0][1]
        delimiter = next((d for d in ("\t", ",", ";") if d in first), None)
    numbers = [n for n, _ in lines]
    texts = [line for _, line in lines]
    head = [f.strip() for f in _split_lines(texts[:1], delimiter)[0]]
    header = any(f and not _is_number(f) for f in head)
    fast = _fast_numeric(texts[1:] if header else texts, delimiter, len(head))
    if fast is not None:  # all plain numbers: NumPy's C parser, no strings
        names = [f if f else str(i) for i, f in enumerate(head)] if header else None
        names = names or [str(i) for i in range(len(head))]
        lines_kept = numbers[1:] if header else numbers
        cols = [fast[:, j] for j in range(fast.shape[1])]
        return Table(path, names, cols, header=header, lines=lines_kept)
    try:
        fields = _split_lines(texts, delimiter)
    except csv.Error as e:
        raise InputError(f"{path}: cannot parse the file as delimited text: {e}") from None
    head = [f.strip() for f in fields[0]]
    header = any(f and not _is_number(f) for f in head)
    width = len(head)
    if header:
        names = [f if f else str(i) for i, f in enumerate(head)]
        fields, numbers = fields[1:], numbers[1:]
    else:
        names = [str(i) for i in range(width)]
    if not fields:
        raise InputError(f"{path}: the file has a header but no data rows")
    for n, row in zip(numbers, fields, strict=True):
        if len(row) != width:
            raise InputError(
                f"{path}: line {n} has {len(row)} field(s), expected {width} like the "
                f"{'header' if header else 'first line'}"
            )
    grid = np.char.strip(np.array(fields, dtype=str).reshape(len(fields), width))
    cols = [grid[:, j] for j in range(width)]
    return Table(path, names, cols, header=header, lines=numbers)


def _load_numpy(path: str, what: str):
    try:
        return np.load(path, allow_pickle=False)
    except ValueError as e:
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        if "pickle" in msg.lower():
            msg = "it holds Python objects, which are not loaded for safety"
        raise InputError(f"{path}: cannot read the file as {what}: {msg}") from None
    except (OSError, EOFError) as e:
        raise InputError(f"{path}: cannot read the file as {what}: {e}") from None


def _read_npy(path: str) -> Table:
    a = _load_numpy(path, "a NumPy .npy array")
    if a.dtype.names:  # structured array: one column per field
        names = list(a.dtype.names)
        return Table(path, names, [np.asarray(a[n]).reshape(-1) for n in names], header=True)
    if a.ndim == 1:
        return Table(path, ["0"], [a])
    if a.ndim != 2:
        raise InputError(
            f"{path}: expected a 1-D array, a 2-column (N, 2) array or a pair (2, N), "
            f"got shape {a.shape}"
        )
    if a.shape[0] == 2 and a.shape[1] != 2:  # a pair of rows: x then y
        a = a.T
    return Table(path, [str(j) for j in range(a.shape[1])], [a[:, j] for j in range(a.shape[1])])


def _read_npz(path: str) -> Table:
    archive = _load_numpy(path, "a NumPy .npz archive")
    if not isinstance(archive, np.lib.npyio.NpzFile):
        raise InputError(f"{path}: the file is not a .npz archive")
    with archive:
        names = list(archive.files)
        try:
            cols = [np.asarray(archive[k]) for k in names]
        except ValueError as e:
            raise InputError(f"{path}: cannot read the archive: {e}") from None
    for name, c in zip(names, cols, strict=True):
        if c.ndim != 1:
            raise InputError(f"{path}: array {name!r} must be 1-D, got shape {c.shape}")
    return Table(path, names, cols, header=True)


def _read_parquet(path: str) -> Table:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise InputError(
            f"{path}: reading Parquet needs pyarrow: pip install 'jaxsubset[parquet]'"
        ) from None
    try:
        t = pq.read_table(path)
    except Exception as e:  # pyarrow raises its own ArrowInvalid/OSError family
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise InputError(f"{path}: cannot read the file as Parquet: {msg}") from None
    cols = []
    for name in t.column_names:
        col = t.column(name)
        try:
            cols.append(col.to_numpy(zero_copy_only=False))
        except Exception:  # nested or otherwise unconvertible column: keep as objects
            cols.append(np.asarray(col.to_pylist(), dtype=object))
    return Table(path, list(t.column_names), cols, header=True)


def to_numeric(table: Table, index: int, role: str) -> np.ndarray:
    """Column ``index`` of ``table`` as a 1-D int64 or float64 array, or a one-line error.

    Numbers become float64, except integers beyond 2**53, which float64 cannot hold exactly
    (nanosecond time stamps): those become int64; an empty cell is a missing value (NaN). A
    column with no values, or a cell that is not a number, is an :class:`InputError` naming the
    column and the line.
    """
    name = table.names[index]
    col = table.columns[index]
    label = f"{table.path}: {role} column {name!r}"
    if col.size == 0:
        raise InputError(f"{label} is empty")
    if col.dtype.kind in "iu":
        return col.astype(np.int64)
    if col.dtype.kind == "b":
        return col.astype(np.int64)
    if col.dtype.kind == "f":
        return col.astype(np.float64)
    if col.dtype.kind in "mM":
        raise InputError(f"{label} holds dates or times, which are not supported yet")
    if col.dtype.kind not in "UO":
        raise InputError(f"{label} is not numeric (dtype {col.dtype})")
    if col.dtype.kind == "U":
        arr = np.char.strip(col)
    else:  # objects (e.g. Parquet strings with nulls)
        arr = np.array([("" if v is None else str(v).strip()) for v in col.tolist()], dtype=str)
    if not np.any(arr != ""):
        raise InputError(f"{label} is empty")
    with contextlib.suppress(ValueError, OverflowError):
        ints = arr.astype(np.int64)
        # Integers float64 cannot hold exactly (e.g. nanosecond time stamps) stay int64.
        return ints if np.any(np.abs(ints) > 2**53) else ints.astype(np.float64)
    with contextlib.suppress(ValueError):
        return arr.astype(np.float64)
    strings = arr.tolist()
    out = np.empty(len(strings), np.float64)
    for i, s in enumerate(strings):
        if s == "":
            out[i] = np.nan
            continue
        try:
            out[i] = float(s)
        except ValueError:
            raise InputError(f"{label} is not numeric: {table.where(i)} holds {s!r}") from None
    return out


# ---------------------------------------------------------------------------- writing
def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def check_output_path(
    path: str | os.PathLike, inputs: Sequence[str | os.PathLike], allowed: Sequence[str]
) -> str:
    """Validate an output path before any work is done, so a bad one fails fast.

    Args:
        path: where the output will go.
        inputs: the input files, which are never overwritten.
        allowed: the accepted extensions (lower case, with the dot).

    Returns:
        ``path`` as a string.

    Raises:
        InputError: wrong extension, missing folder, a folder in the way, or an input file.
    """
    path = os.fspath(path)
    ext = suffix(path)
    if ext not in allowed:
        raise InputError(
            f"{path}: unsupported output format {ext or '(no extension)'!r} "
            f"(use {', '.join(allowed)})"
        )
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise InputError(f"{path}: the output folder {folder} does not exist")
    if os.path.isdir(path):
        raise InputError(f"{path}: is a folder; give a file name")
    for src in inputs:
        if src is not None and os.path.exists(path) and _same_file(path, os.fspath(src)):
            raise InputError(f"{path}: refusing to overwrite the input file; choose another name")
    if ext == ".parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise InputError(
                f"{path}: writing Parquet needs pyarrow: pip install 'jaxsubset[parquet]'"
            ) from None
    return path


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike) -> Iterator[str]:
    """Yield a temporary path next to ``path``; rename it onto ``path`` only on success.

    On any exception the temporary file is removed and ``path`` is left as it was, so no
    partial output is ever visible.
    """
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    base = os.path.basename(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{base}.", suffix=".tmp" + suffix(path), dir=folder)
    os.close(fd)
    try:
        # mkstemp makes the file private (0600); give it the mode a plain open() would.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise


def format_value(v: object) -> str:
    """One value as text with full precision: ints as ints, floats by ``repr`` (round-trips)."""
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, bool):
        return str(int(v))
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v)
    return str(v)


def _json_value(v: object) -> object:
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return None  # JSON has no NaN or infinity
    return v


def write_table(path: str | os.PathLike, columns: dict[str, np.ndarray]) -> None:
    """Write equal-length columns to ``path`` as CSV, TSV, JSON or Parquet (by extension).

    The file appears complete or not at all (see :func:`atomic_output`). CSV/TSV hold a header
    row and full-precision numbers (NaN as ``nan``); JSON is a list of one object per row with
    NaN as ``null``; Parquet keeps the column dtypes.

    Args:
        path: the output file; its extension picks the format.
        columns: column name -> 1-D array, all of the same length.
    """
    path = os.fspath(path)
    ext = suffix(path)
    names = list(columns)
    arrays = [np.asarray(columns[k]) for k in names]
    n_rows = len(arrays[0]) if arrays else 0
    with atomic_output(path) as tmp:
        if ext in (".csv", ".tsv"):
            with open(tmp, "w", encoding="utf-8", newline="") as f:
                w = csv.writer(f, delimiter="\t" if ext == ".tsv" else ",", lineterminator="\n")
                w.writerow(names)
                lists = [a.tolist() for a in arrays]
                for i in range(n_rows):
                    w.writerow([format_value(c[i]) for c in lists])
        elif ext == ".json":
            lists = [a.tolist() for a in arrays]
            rows = [
                {k: _json_value(c[i]) for k, c in zip(names, lists, strict=True)}
                for i in range(n_rows)
            ]
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump(rows, f, indent=1, allow_nan=False)
                f.write("\n")
        elif ext == ".parquet":
            import pyarrow as pa
            import pyarrow.parquet as pq

            pq.write_table(pa.table(dict(zip(names, arrays, strict=True))), tmp)
        else:  # pragma: no cover - check_output_path rejects these first
            raise InputError(f"{path}: unsupported output format {ext!r}")


# ---------------------------------------------------------------------------- (x, y) data
@dataclass
class XY:
    """The ``(x, y)`` data the command works on.

    Attributes:
        x: ``(N,)`` int64 or float64, sorted ascending, no NaN.
        y: ``(N, C)`` float64, one column per requested y column (NaN = missing).
        x_name: the x column's name (``"index"`` when the file has a single column).
        y_names: the ``C`` y column names.
        sorted_rows: True when the rows were reordered by ``--sort``.
    """

    x: np.ndarray
    y: np.ndarray
    x_name: str
    y_names: list[str]
    sorted_rows: bool = False


def read_xy(
    path: str | os.PathLike,
    x: str | int | None = None,
    y: Sequence[str | int] | None = None,
    *,
    sort: bool = False,
) -> XY:
    """Read the x column and the y column(s) of a file, checked for the analysis.

    Defaults: x is the first column and y the second (a ``.npz`` with arrays ``x`` and ``y``
    uses those); a file with a single column is y, with x the row index 0, 1, ...

    Args:
        path: the input file (see :func:`read_table` for the formats).
        x: x column, by name or 0-based index.
        y: y columns, by name or 0-based index.
        sort: reorder the rows by x (stable) instead of rejecting an unsorted x.

    Returns:
        An :class:`XY`.

    Raises:
        InputError: unknown or non-numeric column, length mismatch, NaN in x, x not sorted.
    """
    table = read_table(path)
    path = table.path
    names = table.names
    if x is None and y is None and len(names) == 1:
        yy = to_numeric(table, 0, "y").astype(np.float64)
        return XY(np.arange(len(yy), dtype=np.int64), yy[:, None], "index", [names[0]])
    if x is None:
        x = "x" if ("x" in names and table.header) else 0
    ix = table.index_of(x, "x")
    if not y:
        if "y" in names and table.header and names.index("y") != ix:
            y = ["y"]
        else:
            rest = [i for i in range(len(names)) if i != ix]
            if not rest:
                raise InputError(f"{path}: needs a y column besides the x column {names[ix]!r}")
            y = [rest[0]]
    iy = [table.index_of(spec, "y") for spec in y]
    xv = to_numeric(table, ix, "x")
    ys = [to_numeric(table, i, "y").astype(np.float64) for i in iy]
    for i, col in zip(iy, ys, strict=True):
        if len(col) != len(xv):
            raise InputError(
                f"{path}: length mismatch: x column {names[ix]!r} has {len(xv)} values, "
                f"y column {names[i]!r} has {len(col)}"
            )
    if xv.dtype.kind == "f":
        nan = np.isnan(xv)
        if nan.any():
            k = int(np.argmax(nan))
            raise InputError(
                f"{path}: x column {names[ix]!r} has {int(nan.sum())} missing/NaN value(s), "
                f"the first at {table.where(k)}; every point needs a position"
            )
    yv = np.stack(ys, axis=1)
    did_sort = False
    if xv.size > 1:
        bad = xv[1:] < xv[:-1]
        if bad.any():
            if not sort:
                k = int(np.argmax(bad))
                raise InputError(
                    f"{path}: x column {names[ix]!r} is not sorted ascending "
                    f"({table.where(k + 1)}: {format_value(xv[k + 1])} after "
                    f"{format_value(xv[k])}); "
                    "pass --sort to sort the rows by x"
                )
            order = np.argsort(xv, kind="stable")
            xv, yv, did_sort = xv[order], yv[order], True
    return XY(xv, yv, names[ix], [names[i] for i in iy], did_sort)
