"""Reading the ``(x, y)`` columns of the command's input files.

Readers: CSV/TSV/whitespace text (header detected), ``.npy`` (a 2-column array, a pair of rows,
a 1-D array or a structured array), ``.npz`` (arrays by key) and Parquet (needs ``pyarrow``).
Columns are chosen by name or by 0-based index.

Time axes: a text column of ISO-8601 dates or datetimes (``2001-12-29``, ``2001-12-29T06:00``,
``2001-12-29 06:00:00``, optionally ``Z`` or ``+01:00``, converted to UTC), a column of any
``strptime`` format given as ``x_format`` (``%Y%m%d`` for ``20011229``), or a datetime64/timestamp
column of a ``.npy``/``.npz``/Parquet file becomes exact int64 nanoseconds since the epoch.

Every problem with a file is an :class:`InputError` with a one-line message naming the file, the
column or the line.
"""

import contextlib
import csv
import datetime as _dt
import math
import os
import warnings
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from ._dates import checked_ns, is_iso_date, iso_strings, parse_dates
from ._files import INPUT_SUFFIXES, InputError, check_memory, suffix
from ._writer import format_value


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


# The first bytes of every binary format the reader knows (the file's content decides its kind;
# the extension only has to be one of INPUT_SUFFIXES).
MAGIC = (
    (b"\x93NUMPY", "npy"),
    (b"PK\x03\x04", "npz"),
    (b"PK\x05\x06", "npz"),  # an empty zip archive
    (b"PAR1", "parquet"),
)
FOREIGN = (  # binary formats the reader does not read, named in the message
    (b"\x1f\x8b", "a gzip-compressed file; decompress it first"),
    (b"BZh", "a bzip2-compressed file; decompress it first"),
    (b"\xfd7zXZ\x00", "an xz-compressed file; decompress it first"),
    (b"\x28\xb5\x2f\xfd", "a zstd-compressed file; decompress it first"),
    (b"\x80", "a Python pickle, which is never loaded for safety"),
    (b"\x89HDF", "an HDF5 file (not supported)"),
    (b"\x89PNG", "a PNG image, not data"),
    (b"\xd0\xcf\x11\xe0", "an old Excel/Office file (not supported)"),
)
KIND_NAMES = {"npy": "a NumPy .npy array", "npz": "a NumPy .npz archive", "parquet": "Parquet"}


def sniff(path: str) -> str | None:
    """The kind of file ``path`` holds by its first bytes: ``"npy"``, ``"npz"``, ``"parquet"``,
    or None for anything else (text, or not a known format).

    Raises:
        InputError: the file cannot be opened, or holds a known format the reader refuses.
    """
    try:
        with open(path, "rb") as f:
            head = f.read(8)
    except OSError as e:
        raise InputError(f"{path}: cannot read the file: {e.strerror or e}") from None
    for magic, kind in MAGIC:
        if head.startswith(magic):
            return kind
    for magic, what in FOREIGN:
        if head.startswith(magic):
            raise InputError(f"{path}: the file is {what}")
    return None


# ---------------------------------------------------------------------------- reading
def read_table(
    path: str | os.PathLike, x_format: str | None = None, *, mmap: bool = False
) -> Table:
    """Read every column of a file into a :class:`Table` (text stays text until converted).

    Args:
        path: a ``.csv``, ``.tsv``, ``.txt``/``.dat`` (whitespace), ``.npy``, ``.npz`` or
            ``.parquet`` file.
        x_format: a ``strptime`` format of dates in the file; text of that form (like numbers
            and ISO dates) is data, not a header, when a header is detected.
        mmap: memory-map a ``.npy`` file (its columns are views; nothing is loaded).

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
    if not os.path.isfile(path):  # a pipe or a device would block or never end
        raise InputError(f"{path}: not a regular file (a pipe or a device?); give a data file")
    ext = suffix(path)
    if ext not in INPUT_SUFFIXES:
        raise InputError(
            f"{path}: unsupported input format {ext!r} "
            "(use .csv, .tsv, .txt, .dat, .npy, .npz or .parquet)"
        )
    kind = sniff(path)  # by content: an .npz named .npy is read as the archive it is
    named = {".npy": "npy", ".npz": "npz", ".parquet": "parquet", ".pq": "parquet"}.get(ext)
    if named is not None and kind is None:
        sig = {"npy": "\\x93NUMPY", "npz": "PK (zip)", "parquet": "PAR1"}[named]
        raise InputError(
            f"{path}: the file is not {KIND_NAMES[named]}: it does not start with {sig} "
            "(an empty, truncated or different kind of file?)"
        )
    if kind == "npy":
        table = read_npy(path, mmap)
    elif kind == "npz":
        table = read_npz(path)
    elif kind == "parquet":
        table = read_parquet(path)
    else:
        table = read_text(path, "\t" if ext in (".tsv", ".tab") else None, x_format)
    if not table.columns or all(len(c) == 0 for c in table.columns):
        raise InputError(f"{path}: the file holds no data")
    return table


def is_number(field: str) -> bool:
    try:
        float(field)
    except ValueError:
        return False
    return True


def is_value(field: str, x_format: str | None) -> bool:
    """A field that is data, not a header name: a number, an ISO date, or an ``x_format`` date."""
    if is_number(field) or is_iso_date(field):
        return True
    if x_format is not None:
        try:
            _dt.datetime.strptime(field, x_format)
        except ValueError:
            return False
        return True
    return False


def split_lines(
    texts: list[str], delimiter: str | None, numbers: Sequence[int] | None = None
) -> list[list[str]]:
    """Fields of every line: whitespace split, plain split, or the csv module for quotes.

    Every line is one row (a quoted field never spans lines); a line whose quotes do not
    parse is a ``csv.Error`` naming its line number (from ``numbers``).
    """
    if delimiter is None:
        return [t.split() for t in texts]
    if not any('"' in t for t in texts):
        return [t.split(delimiter) for t in texts]  # fast path, same result without quotes
    rows = []
    for k, t in enumerate(texts):
        if '"' not in t:
            rows.append(t.split(delimiter))
            continue
        try:
            rows.append(next(csv.reader([t], delimiter=delimiter, strict=True)))
        except csv.Error as e:
            n = numbers[k] if numbers is not None else k + 1
            raise csv.Error(f"line {n}: {e} (an unterminated or misplaced quote?)") from None
    return rows


def fast_numeric(texts: list[str], delimiter: str | None, width: int) -> np.ndarray | None:
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


def read_text(path: str, delimiter: str | None, x_format: str | None = None) -> Table:
    # The text, its lines and their fields take several times the file's size in memory.
    check_memory(6 * os.path.getsize(path), f"{path}: reading the text file")
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
    # Without either (checked in C: no '#' anywhere, no line empty once stripped) every line
    # is a data line, numbered in order, and no per-line Python loop runs.
    every = text.splitlines()
    if "#" not in text and all(map(str.strip, every)):
        numbers, texts = list(range(1, len(every) + 1)), every
    else:
        kept = [
            (n, line)
            for n, line in enumerate(every, start=1)
            if line.strip() and not line.lstrip().startswith("#")
        ]
        numbers, texts = [n for n, _ in kept], [line for _, line in kept]
    if not texts:
        raise InputError(f"{path}: the file holds no data")
    if delimiter is None:
        first = texts[0]
        delimiter = next((d for d in ("\t", ",", ";") if d in first), None)
    try:
        head = [f.strip() for f in split_lines(texts[:1], delimiter, numbers)[0]]
    except csv.Error as e:
        raise InputError(f"{path}: cannot parse the file as delimited text: {e}") from None
    header = any(f and not is_value(f, x_format) for f in head)
    fast = fast_numeric(texts[1:] if header else texts, delimiter, len(head))
    if fast is not None:  # all plain numbers: NumPy's C parser, no strings
        names = [f if f else str(i) for i, f in enumerate(head)] if header else None
        names = names or [str(i) for i in range(len(head))]
        lines_kept = numbers[1:] if header else numbers
        cols = [fast[:, j] for j in range(fast.shape[1])]
        return Table(path, names, cols, header=header, lines=lines_kept)
    try:
        fields = split_lines(texts, delimiter, numbers)
    except csv.Error as e:
        raise InputError(f"{path}: cannot parse the file as delimited text: {e}") from None
    head = [f.strip() for f in fields[0]]
    header = any(f and not is_value(f, x_format) for f in head)
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
    longest = max((len(f) for row in fields for f in row), default=0)
    check_memory(4 * longest * width * len(fields), f"{path}: reading the text cells")
    grid = np.char.strip(np.array(fields, dtype=str).reshape(len(fields), width))
    cols = [grid[:, j] for j in range(width)]
    return Table(path, names, cols, header=header, lines=numbers)


# A damaged zip archive fails in zipfile and NumPy in many ways: BadZipFile (a bad CRC, a
# truncated member), OSError, EOFError, zlib.error, struct.error, IndexError, KeyError,
# UnicodeDecodeError, RuntimeError (an encrypted member), NotImplementedError (an unknown
# compression method)... all of them mean the same to the user.
NPZ_ERRORS = (Exception,)


@contextlib.contextmanager
def quiet_numpy() -> Iterator[None]:
    """NumPy's reader warns about headers it had to repair (files "created on Python 2"):
    the file is read or refused as a whole, never with a warning beside the one line."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        yield


def npy_header(f, what: str) -> tuple[tuple[int, ...], np.dtype, bool]:
    """Shape, dtype and Fortran order from the header of the ``.npy`` data open in ``f``.

    Raises:
        InputError: a header that is not a ``.npy`` header, or a dtype holding Python objects.
    """
    fmt = np.lib.format
    try:
        version = fmt.read_magic(f)
        with quiet_numpy():
            if version == (1, 0):
                shape, fortran, dtype = fmt.read_array_header_1_0(f)
            elif version == (2, 0):
                shape, fortran, dtype = fmt.read_array_header_2_0(f)
            else:
                raise ValueError(f"unsupported .npy format version {version[0]}.{version[1]}")
    except Exception as e:  # NumPy's header parser: ValueError, SyntaxError, TokenError...
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise InputError(f"{what}: not a valid .npy header: {msg}") from None
    if dtype.hasobject:
        raise InputError(f"{what}: it holds Python objects, which are not loaded for safety")
    return tuple(int(n) for n in shape), dtype, fortran


def check_npy_size(shape, dtype: np.dtype, have: int, what: str) -> int:
    """The bytes of data a ``.npy`` header promises, checked against the ``have`` bytes there."""
    need = math.prod(shape) * dtype.itemsize
    if need > have:
        raise InputError(
            f"{what}: truncated: the header promises a {dtype} array of shape {shape} "
            f"({need} bytes of data), but only {have} bytes follow"
        )
    return need


def read_npy(path: str, mmap: bool = False) -> Table:
    what = f"{path}: cannot read the file as a NumPy .npy array"
    with open(path, "rb") as f:
        shape, dtype, _ = npy_header(f, what)
        offset = f.tell()
    need = check_npy_size(shape, dtype, os.path.getsize(path) - offset, what)
    if not mmap:
        check_memory(need, f"{path}: reading the {dtype} array of shape {shape}")
    try:
        with quiet_numpy():
            a = np.load(path, allow_pickle=False, mmap_mode="r" if mmap else None)
    except Exception as e:  # a damaged file, whatever NumPy makes of it
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise InputError(f"{what}: {msg}") from None
    if not isinstance(a, np.ndarray):  # np.load's answer to a zip archive
        raise InputError(f"{path}: the file is not a .npy array")
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


def read_npz(path: str) -> Table:
    """An ``.npz`` archive: every member checked (a ``.npy`` header, its size, the CRC) and its
    total size compared with the free memory before any array is loaded."""
    what = f"{path}: cannot read the file as a NumPy .npz archive"
    try:
        zf = zipfile.ZipFile(path)
    except NPZ_ERRORS as e:
        raise InputError(f"{what}: {e or type(e).__name__}") from None
    names, cols = [], []
    with zf:
        try:
            infos = [i for i in zf.infolist() if not i.is_dir()]
            total = 0
            for info in infos:
                if not info.filename.endswith(".npy"):
                    raise InputError(f"{what}: member {info.filename!r} is not a .npy array")
                with zf.open(info) as f:
                    shape, dtype, _ = npy_header(f, f"{what}: member {info.filename!r}")
                    have = info.file_size - f.tell()
                total += check_npy_size(shape, dtype, have, f"{what}: member {info.filename!r}")
            check_memory(total, f"{path}: reading the arrays of the archive")
            for info in infos:
                with zf.open(info) as f, quiet_numpy():
                    cols.append(np.lib.format.read_array(f, allow_pickle=False))
                names.append(info.filename[: -len(".npy")])
        except InputError:
            raise
        except NPZ_ERRORS as e:
            raise InputError(f"{what}: {e or type(e).__name__}") from None
    for name, c in zip(names, cols, strict=True):
        if c.ndim != 1:
            raise InputError(f"{path}: array {name!r} must be 1-D, got shape {c.shape}")
    return Table(path, names, cols, header=True)


def read_parquet(path: str) -> Table:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise InputError(
            f"{path}: reading Parquet needs pyarrow: pip install 'jaxsubset[parquet]'"
        ) from None
    try:
        meta = pq.ParquetFile(path).metadata
        need = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    except Exception as e:  # pyarrow raises its own ArrowInvalid/OSError family
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise InputError(f"{path}: cannot read the file as Parquet: {msg}") from None
    check_memory(need, f"{path}: reading the Parquet columns")
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
    if col.dtype.kind == "u" and col.dtype.itemsize == 8 and col.size and col.max() >= 2**63:
        return col.astype(np.float64)  # beyond int64: as float64 (rounded), never wrapped
    if col.dtype.kind in "iu":
        return col.astype(np.int64)
    if col.dtype.kind == "b":
        return col.astype(np.int64)
    if col.dtype.kind == "f":
        return col.astype(np.float64)
    if col.dtype.kind in "mM":
        raise InputError(f"{label} holds dates or times; only the x column may be a time axis")
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
        if s == "" or s.lower() in MISSING_TEXT:
            out[i] = np.nan
            continue
        try:
            out[i] = float(s)
        except ValueError:
            hint = ""
            if is_iso_date(s):
                hint = " (a date: only the x column may be a time axis)"
            raise InputError(
                f"{label} is not numeric: {table.where(i)} holds {s!r}{hint}"
            ) from None
    return out


MISSING_TEXT = ("na", "n/a", "nan", "null", "none")  # besides the empty cell: a missing value


def to_time(table: Table, index: int, role: str, x_format: str | None = None) -> np.ndarray | None:
    """Column ``index`` as int64 nanoseconds when it holds dates, else None (it is numbers).

    A datetime64/timestamp column is a time axis; with ``x_format`` every column is read as
    dates of that ``strptime`` format (numbers such as ``20011229`` as their digits); otherwise
    a text column whose first value is an ISO-8601 date is a time axis.
    """
    name = table.names[index]
    col = table.columns[index]
    label = f"{table.path}: {role} column {name!r}"
    if col.size == 0:
        raise InputError(f"{label} is empty")
    if col.dtype.kind == "M":
        return checked_ns(col, label, table.where)
    if col.dtype.kind == "m":
        raise InputError(f"{label} holds durations, not dates; an x axis of dates is supported")
    if col.dtype.kind == "O":
        col = np.array([("" if v is None else str(v).strip()) for v in col.tolist()], dtype=str)
    if x_format is not None:
        if col.dtype.kind in "biu":
            col = col.astype(np.int64).astype(str)
        elif col.dtype.kind == "f":
            col = np.array(
                [
                    "" if v != v else (str(int(v)) if v.is_integer() else repr(v))
                    for v in col.tolist()
                ],
                dtype=str,
            )
        elif col.dtype.kind != "U":
            raise InputError(f"{label} cannot be read as dates (dtype {col.dtype})")
        return parse_dates(col, label, table.where, x_format)
    if col.dtype.kind != "U":
        return None
    filled = col[np.char.strip(col) != ""]
    if filled.size == 0 or not is_iso_date(str(filled[0])):
        return None
    return parse_dates(col, label, table.where)


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
        x_time: True when x is a time axis: ``x`` then holds int64 nanoseconds since the epoch.
        lines: for messages, the 1-based line in the file of every row, in the order of ``x``
            (``(N,)`` int64); None for binary files.
    """

    x: np.ndarray
    y: np.ndarray
    x_name: str
    y_names: list[str]
    sorted_rows: bool = False
    x_time: bool = False
    lines: np.ndarray | None = None

    def where(self, row: int) -> str:
        """Where row ``row`` (in the order of ``x``) is in the file, for messages."""
        return f"line {int(self.lines[row])}" if self.lines is not None else f"row {row}"


def read_xy(
    path: str | os.PathLike,
    x: str | int | None = None,
    y: Sequence[str | int] | None = None,
    *,
    sort: bool = False,
    x_format: str | None = None,
) -> XY:
    """Read the x column and the y column(s) of a file, checked for the analysis.

    Defaults: x is the first column and y the second (a ``.npz`` with arrays ``x`` and ``y``
    uses those); a file with a single column is y, with x the row index 0, 1, ...
    An x column of dates (see :func:`to_time`) is a time axis of int64 nanoseconds. Duplicate
    x values are legal and keep their order in the file (``sort`` is stable).

    Args:
        path: the input file (see :func:`read_table` for the formats).
        x: x column, by name or 0-based index.
        y: y columns, by name or 0-based index.
        sort: reorder the rows by x (stable) instead of rejecting an unsorted x.
        x_format: a ``strptime`` format of the x column's dates (``"%Y%m%d"``).

    Returns:
        An :class:`XY`.

    Raises:
        InputError: unknown or non-numeric column, length mismatch, NaN in x, x not sorted.
    """
    table = read_table(path, x_format)
    path = table.path
    names = table.names
    if x is None and y is None and len(names) == 1 and x_format is None:
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
    xt = to_time(table, ix, "x", x_format)
    xv = to_numeric(table, ix, "x") if xt is None else xt
    ys = [to_numeric(table, i, "y").astype(np.float64) for i in iy]
    for i, col in zip(iy, ys, strict=True):
        if len(col) != len(xv):
            raise InputError(
                f"{path}: length mismatch: x column {names[ix]!r} has {len(xv)} values, "
                f"y column {names[i]!r} has {len(col)}"
            )
    if xt is None and xv.dtype.kind == "f":
        nan = np.isnan(xv)
        if nan.any():
            k = int(np.argmax(nan))
            raise InputError(
                f"{path}: x column {names[ix]!r} has {int(nan.sum())} missing/NaN value(s), "
                f"the first at {table.where(k)}; every point needs a position"
            )
    yv = np.stack(ys, axis=1)
    did_sort = False
    lines = np.asarray(table.lines, dtype=np.int64) if table.lines else None

    def shown(v: np.generic) -> str:
        if xt is not None:
            return str(iso_strings(np.array([v]).view("datetime64[ns]"))[0])
        return format_value(v)

    raw = table.columns[ix]

    def cell(row: int) -> str:  # the file's own text where it has one, else the value
        return str(raw[row]).strip() if raw.dtype.kind == "U" else shown(xv[row])

    if xv.size > 1:
        bad = xv[1:] < xv[:-1]
        if bad.any():
            if not sort:
                k = int(np.argmax(bad))
                raise InputError(
                    f"{path}: x column {names[ix]!r} is not sorted ascending "
                    f"({table.where(k + 1)}: {cell(k + 1)} after {cell(k)}); "
                    "pass --sort to sort the rows by x"
                )
            order = np.argsort(xv, kind="stable")
            xv, yv, did_sort = xv[order], yv[order], True
            lines = lines[order] if lines is not None else None
    y_names = [names[i] for i in iy]
    return XY(xv, yv, names[ix], y_names, did_sort, xt is not None, lines)
