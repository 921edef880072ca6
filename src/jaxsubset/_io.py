"""Reading ``(x, y)`` columns from files and writing result tables safely (used by the command).

Readers: CSV/TSV/whitespace text (header detected), ``.npy`` (a 2-column array, a pair of rows,
a 1-D array or a structured array), ``.npz`` (arrays by key) and Parquet (needs ``pyarrow``).
Columns are chosen by name or by 0-based index. Writers: CSV/TSV, JSON and Parquet by extension,
every float written with full precision (``repr``: the shortest text that reads back to the same
float64), always through a temporary file in the same folder renamed into place, so a failed run
never leaves a partial file and a reader never sees one.

Time axes: a text column of ISO-8601 dates or datetimes (``2001-12-29``, ``2001-12-29T06:00``,
``2001-12-29 06:00:00``, optionally ``Z`` or ``+01:00``, converted to UTC), a column of any
``strptime`` format given as ``x_format`` (``%Y%m%d`` for ``20011229``), or a datetime64/timestamp
column of a ``.npy``/``.npz``/Parquet file becomes exact int64 nanoseconds since the epoch, and
result columns of ``datetime64`` are written as ISO text (CSV, JSON, the table) or timestamps
(Parquet).

Every problem with a file is an :class:`InputError` with a one-line message naming the file, the
column or the line.
"""

import contextlib
import csv
import datetime as _dt
import json
import math
import os
import re
import tempfile
import warnings
import zipfile
from collections.abc import Callable, Iterator, Sequence
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


# The first bytes of every binary format the reader knows (the file's content decides its kind;
# the extension only has to be one of INPUT_SUFFIXES).
_MAGIC = (
    (b"\x93NUMPY", "npy"),
    (b"PK\x03\x04", "npz"),
    (b"PK\x05\x06", "npz"),  # an empty zip archive
    (b"PAR1", "parquet"),
)
_FOREIGN = (  # binary formats the reader does not read, named in the message
    (b"\x1f\x8b", "a gzip-compressed file; decompress it first"),
    (b"BZh", "a bzip2-compressed file; decompress it first"),
    (b"\xfd7zXZ\x00", "an xz-compressed file; decompress it first"),
    (b"\x28\xb5\x2f\xfd", "a zstd-compressed file; decompress it first"),
    (b"\x80", "a Python pickle, which is never loaded for safety"),
    (b"\x89HDF", "an HDF5 file (not supported)"),
    (b"\x89PNG", "a PNG image, not data"),
    (b"\xd0\xcf\x11\xe0", "an old Excel/Office file (not supported)"),
)
_KIND_NAMES = {"npy": "a NumPy .npy array", "npz": "a NumPy .npz archive", "parquet": "Parquet"}


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
    for magic, kind in _MAGIC:
        if head.startswith(magic):
            return kind
    for magic, what in _FOREIGN:
        if head.startswith(magic):
            raise InputError(f"{path}: the file is {what}")
    return None


def available_memory() -> int:
    """Bytes of memory this process may still allocate (MemAvailable; 2**62 when unknown)."""
    with contextlib.suppress(OSError, ValueError, IndexError):
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    with contextlib.suppress(OSError, ValueError, AttributeError):
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    return 1 << 62


def _gib(n: float) -> str:
    return f"{n / 2**30:.3g} GiB"


def check_memory(need: float, what: str) -> None:
    """Raise an :class:`InputError` when ``need`` bytes for ``what`` exceed the free memory."""
    have = available_memory()
    if need > have:
        raise InputError(
            f"{what} needs about {_gib(need)} of memory, more than the {_gib(have)} available"
        )


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
            f"{path}: the file is not {_KIND_NAMES[named]}: it does not start with {sig} "
            "(an empty, truncated or different kind of file?)"
        )
    if kind == "npy":
        table = _read_npy(path, mmap)
    elif kind == "npz":
        table = _read_npz(path)
    elif kind == "parquet":
        table = _read_parquet(path)
    else:
        table = _read_text(path, "\t" if ext in (".tsv", ".tab") else None, x_format)
    if not table.columns or all(len(c) == 0 for c in table.columns):
        raise InputError(f"{path}: the file holds no data")
    return table


def _is_number(field: str) -> bool:
    try:
        float(field)
    except ValueError:
        return False
    return True


def _is_value(field: str, x_format: str | None) -> bool:
    """A field that is data, not a header name: a number, an ISO date, or an ``x_format`` date."""
    if _is_number(field) or is_iso_date(field):
        return True
    if x_format is not None:
        try:
            _dt.datetime.strptime(field, x_format)
        except ValueError:
            return False
        return True
    return False


def _split_lines(
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


def _read_text(path: str, delimiter: str | None, x_format: str | None = None) -> Table:
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
    try:
        head = [f.strip() for f in _split_lines(texts[:1], delimiter, numbers)[0]]
    except csv.Error as e:
        raise InputError(f"{path}: cannot parse the file as delimited text: {e}") from None
    header = any(f and not _is_value(f, x_format) for f in head)
    fast = _fast_numeric(texts[1:] if header else texts, delimiter, len(head))
    if fast is not None:  # all plain numbers: NumPy's C parser, no strings
        names = [f if f else str(i) for i, f in enumerate(head)] if header else None
        names = names or [str(i) for i in range(len(head))]
        lines_kept = numbers[1:] if header else numbers
        cols = [fast[:, j] for j in range(fast.shape[1])]
        return Table(path, names, cols, header=header, lines=lines_kept)
    try:
        fields = _split_lines(texts, delimiter, numbers)
    except csv.Error as e:
        raise InputError(f"{path}: cannot parse the file as delimited text: {e}") from None
    head = [f.strip() for f in fields[0]]
    header = any(f and not _is_value(f, x_format) for f in head)
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
_NPZ_ERRORS = (Exception,)


@contextlib.contextmanager
def _quiet_numpy() -> Iterator[None]:
    """NumPy's reader warns about headers it had to repair (files "created on Python 2"):
    the file is read or refused as a whole, never with a warning beside the one line."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        yield


def _npy_header(f, what: str) -> tuple[tuple[int, ...], np.dtype, bool]:
    """Shape, dtype and Fortran order from the header of the ``.npy`` data open in ``f``.

    Raises:
        InputError: a header that is not a ``.npy`` header, or a dtype holding Python objects.
    """
    fmt = np.lib.format
    try:
        version = fmt.read_magic(f)
        with _quiet_numpy():
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


def _check_npy_size(shape, dtype: np.dtype, have: int, what: str) -> int:
    """The bytes of data a ``.npy`` header promises, checked against the ``have`` bytes there."""
    need = math.prod(shape) * dtype.itemsize
    if need > have:
        raise InputError(
            f"{what}: truncated: the header promises a {dtype} array of shape {shape} "
            f"({need} bytes of data), but only {have} bytes follow"
        )
    return need


def _read_npy(path: str, mmap: bool = False) -> Table:
    what = f"{path}: cannot read the file as a NumPy .npy array"
    with open(path, "rb") as f:
        shape, dtype, _ = _npy_header(f, what)
        offset = f.tell()
    need = _check_npy_size(shape, dtype, os.path.getsize(path) - offset, what)
    if not mmap:
        check_memory(need, f"{path}: reading the {dtype} array of shape {shape}")
    try:
        with _quiet_numpy():
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


def _read_npz(path: str) -> Table:
    """An ``.npz`` archive: every member checked (a ``.npy`` header, its size, the CRC) and its
    total size compared with the free memory before any array is loaded."""
    what = f"{path}: cannot read the file as a NumPy .npz archive"
    try:
        zf = zipfile.ZipFile(path)
    except _NPZ_ERRORS as e:
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
                    shape, dtype, _ = _npy_header(f, f"{what}: member {info.filename!r}")
                    have = info.file_size - f.tell()
                total += _check_npy_size(shape, dtype, have, f"{what}: member {info.filename!r}")
            check_memory(total, f"{path}: reading the arrays of the archive")
            for info in infos:
                with zf.open(info) as f, _quiet_numpy():
                    cols.append(np.lib.format.read_array(f, allow_pickle=False))
                names.append(info.filename[: -len(".npy")])
        except InputError:
            raise
        except _NPZ_ERRORS as e:
            raise InputError(f"{what}: {e or type(e).__name__}") from None
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


# ---------------------------------------------------------------------------- dates
MISSING_TEXT = ("na", "n/a", "nan", "null", "none")  # besides the empty cell: a missing value
_ISO_DATE = re.compile(
    r"^[0-9]{4}-[0-9]{2}(-[0-9]{2}"
    r"([T ][0-9]{2}:[0-9]{2}(:[0-9]{2}([.,][0-9]{1,9})?)?\s*(Z|[+-][0-9]{2}(:?[0-9]{2})?)?)?)?$"
)
_NS_FIRST = np.datetime64("1677-09-22", "s")  # datetime64[ns] holds 1677-09-21 .. 2262-04-11
_NS_LAST = np.datetime64("2262-04-10", "s")


def is_iso_date(text: str) -> bool:
    """Whether ``text`` is an ISO-8601 date or datetime (``2001-12-29``, ``2001-12-29 06:00``)."""
    return bool(_ISO_DATE.match(text.strip()))


def _checked_ns(
    dates: np.ndarray,
    label: str,
    where: Callable[[int], str],
    rows: np.ndarray | None = None,
    cells: np.ndarray | None = None,
) -> np.ndarray:
    """datetime64 values (any unit) as int64 ns, or an error naming the first bad row (and
    quoting its text from ``cells``, the file's own text of every value, when given)."""
    rows = np.arange(len(dates)) if rows is None else rows
    nat = np.isnat(dates)
    if nat.any():
        i = int(rows[np.flatnonzero(nat)].min())
        raise InputError(f"{label} has a missing date at {where(i)}; every point needs a position")
    coarse = dates.astype("datetime64[s]")
    out = (coarse < _NS_FIRST) | (coarse > _NS_LAST)
    if out.any():
        k = int(np.flatnonzero(out)[np.argmin(rows[out])])
        shown = str(cells[k]) if cells is not None else str(dates[k])
        raise InputError(
            f"{label}: {where(int(rows[k]))} holds {shown!r}, outside "
            "1677-09-22 .. 2262-04-10 (the range of int64 nanoseconds)"
        )
    return dates.astype("datetime64[ns]").view(np.int64)


def _parse_one(text: str, x_format: str | None) -> np.datetime64:
    """One date: by ``strptime(x_format)``, else ISO-8601 (an offset or ``Z`` converted to UTC)."""
    if x_format is None and not is_iso_date(text):
        raise ValueError(text)
    if x_format is None:
        t = text.replace(",", ".")
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            try:
                return np.datetime64(t)
            except (ValueError, UserWarning, DeprecationWarning):
                pass
        d = _dt.datetime.fromisoformat(t)  # offsets and "Z"
    else:
        d = _dt.datetime.strptime(text, x_format)
    if d.tzinfo is not None:
        d = d.astimezone(_dt.UTC).replace(tzinfo=None)
    return np.datetime64(d, "us")


_FIELDS = {"Y": 4, "m": 2, "d": 2, "H": 2, "M": 2, "S": 2}


def _fixed_width_dates(arr: np.ndarray, x_format: str) -> np.ndarray | None:
    """Dates of a fixed-width numeric ``strptime`` format (``%Y%m%d``, ``%Y-%m-%d %H:%M``...)
    parsed without a Python loop, as datetime64[s]; None when the format or a cell needs
    ``strptime`` itself (other directives, ragged widths, a bad or impossible date)."""
    layout: list[tuple[str, int]] = []  # (field or literal character, position)
    pos, i = 0, 0
    while i < len(x_format):
        c = x_format[i]
        if c == "%":
            key = x_format[i + 1 : i + 2]
            if key not in _FIELDS:
                return None
            layout.append((key, pos))
            pos += _FIELDS[key]
            i += 2
        else:
            layout.append(("=" + c, pos))
            pos += 1
            i += 1
    lengths = np.char.str_len(arr)
    if arr.size == 0 or lengths.min() != pos or lengths.max() != pos:
        return None
    codes = np.ascontiguousarray(arr.astype(f"U{pos}")).view(np.uint32).reshape(len(arr), pos)
    codes = codes.astype(np.int64)
    fields = {"m": 1, "d": 1, "H": 0, "M": 0, "S": 0}
    for key, at in layout:
        if key.startswith("="):
            if np.any(codes[:, at] != ord(key[1])):
                return None
            continue
        digits = codes[:, at : at + _FIELDS[key]] - ord("0")
        if np.any((digits < 0) | (digits > 9)):
            return None
        fields[key] = digits @ (10 ** np.arange(_FIELDS[key] - 1, -1, -1))
    if "Y" not in fields:
        return None
    month = fields["m"]
    if np.any((month < 1) | (month > 12)):
        return None
    first = (np.asarray((fields["Y"] - 1970) * 12 + month - 1)).astype("datetime64[M]")
    days = (first + 1).astype("datetime64[D]") - first.astype("datetime64[D]")
    day = np.asarray(fields["d"])
    if np.any((day < 1) | (day > days.astype(np.int64))):
        return None
    hms = [np.asarray(fields[k]) for k in ("H", "M", "S")]
    if np.any(hms[0] > 23) or np.any(hms[1] > 59) or np.any(hms[2] > 59):
        return None
    secs = (hms[0] * 60 + hms[1]) * 60 + hms[2]
    return (
        first.astype("datetime64[D]").astype("datetime64[s]")
        + (day - 1) * np.timedelta64(86_400, "s")
        + secs * np.timedelta64(1, "s")
    )


def parse_dates(
    cells: Sequence[str] | np.ndarray,
    label: str,
    where: Callable[[int], str] = lambda i: f"row {i}",
    x_format: str | None = None,
) -> np.ndarray:
    """Text dates as exact int64 nanoseconds since the epoch (UTC).

    Args:
        cells: the text of every row (stripped here).
        label: what the values are, for messages (``"data.csv: x column 't'"``).
        where: row index -> its place in the file, for messages.
        x_format: a ``strptime`` format (``"%Y%m%d"``); default ISO-8601.

    Returns:
        ``(N,)`` int64 nanoseconds.

    Raises:
        InputError: an empty cell, a cell that is not a date (of ``x_format``), or a date
            outside 1677-09-22 .. 2262-04-10; the message names the first such row.
    """
    arr = np.char.strip(np.asarray(cells, dtype=str))
    if arr.size == 0:
        raise InputError(f"{label} is empty")
    empty = arr == ""
    if empty.any():
        i = int(np.argmax(empty))
        raise InputError(f"{label} has a missing date at {where(i)}; every point needs a position")
    if x_format is None:  # the vectorised road: NumPy parses ISO-8601 itself
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a time zone warns: the careful road converts it
            try:
                dates = arr.astype("datetime64")
            except (ValueError, UserWarning, DeprecationWarning, OverflowError):
                dates = None
        if dates is not None:
            return _checked_ns(dates, label, where, cells=arr)
    else:
        dates = _fixed_width_dates(arr, x_format)
        if dates is not None:
            return _checked_ns(dates, label, where, cells=arr)
    uniq, first, inv = np.unique(arr, return_index=True, return_inverse=True)
    values = np.empty(len(uniq), "datetime64[ns]")
    bad_rows, far_rows = [], []
    for j, text in enumerate(uniq.tolist()):
        try:
            v = _parse_one(text, x_format)
        except (ValueError, OverflowError):
            bad_rows.append(int(first[j]))
            continue
        # Checked before the assignment: datetime64[ns] would wrap a far date silently.
        if not _NS_FIRST <= v.astype("datetime64[s]") <= _NS_LAST:
            far_rows.append(int(first[j]))
            continue
        values[j] = v
    if bad_rows:
        i = min(bad_rows)
        what = f"a date of --x-format {x_format!r}" if x_format else "an ISO-8601 date"
        raise InputError(f"{label} is not {what}: {where(i)} holds {str(arr[i])!r}")
    if far_rows:
        i = min(far_rows)
        raise InputError(
            f"{label}: {where(i)} holds {str(arr[i])!r}, outside 1677-09-22 .. 2262-04-10 "
            "(the range of int64 nanoseconds)"
        )
    return _checked_ns(values[inv.reshape(-1)], label, where, None)


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
        return _checked_ns(col, label, table.where)
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


def iso_unit(*columns: np.ndarray) -> str:
    """The coarsest ``datetime_as_string`` unit that shows every date of ``columns`` exactly:
    ``"D"`` for whole days, ``"s"`` for whole seconds, else ``"ms"``, ``"us"`` or ``"ns"``."""
    for unit, step in (("D", 86_400 * 10**9), ("s", 10**9), ("ms", 10**6), ("us", 10**3)):
        if not any(
            np.any(d[~np.isnat(d)].view(np.int64) % step)
            for d in (np.asarray(c).astype("datetime64[ns]") for c in columns)
        ):
            return unit
    return "ns"


def iso_strings(dates: np.ndarray, unit: str | None = None) -> list[str | None]:
    """datetime64 values as ISO-8601 text, None for NaT.

    Whole days print as ``2001-12-29``, whole seconds as ``2001-12-29T06:00:00``, finer times
    with the fractional digits they need (see :func:`iso_unit`; pass ``unit`` to print several
    columns alike).
    """
    dates = np.asarray(dates).astype("datetime64[ns]")
    text = np.datetime_as_string(dates, unit=unit or iso_unit(dates)).tolist()
    return [None if t == "NaT" else t for t in text]


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
    # Writable, tried for real (permissions, a read-only mount; root ignores the mode bits).
    try:
        fd, probe = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", dir=folder)
        os.close(fd)
        os.remove(probe)
    except OSError as e:
        raise InputError(
            f"{path}: cannot write to the output folder {folder}: {e.strerror or e}"
        ) from None
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
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{base}.", suffix=".tmp" + suffix(path), dir=folder)
    except OSError as e:
        raise InputError(f"{path}: cannot write the file: {e.strerror or e}") from None
    os.close(fd)
    try:
        # mkstemp makes the file private (0600); give it the mode a plain open() would.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        yield tmp
        os.replace(tmp, path)
    except OSError as e:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        if e.filename not in (None, tmp, path):
            raise
        # Named by the output, not by the temporary file it was being written to.
        raise InputError(f"{path}: cannot write the file: {e.strerror or e}") from None
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
    if v is None:
        return ""  # a missing date (NaT), as pandas writes it
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
    NaN as ``null``; Parquet keeps the column dtypes. ``datetime64`` columns are ISO-8601
    text in CSV/TSV (empty for NaT) and JSON (``null`` for NaT), timestamps in Parquet.

    Args:
        path: the output file; its extension picks the format.
        columns: column name -> 1-D array, all of the same length.
    """
    path = os.fspath(path)
    ext = suffix(path)
    names = list(columns)
    arrays = [np.asarray(columns[k]) for k in names]
    n_rows = len(arrays[0]) if arrays else 0

    def as_lists() -> list[list]:  # dates as ISO text (None for NaT), numbers as numbers
        unit = iso_unit(*(a for a in arrays if a.dtype.kind == "M"))
        return [iso_strings(a, unit) if a.dtype.kind == "M" else a.tolist() for a in arrays]

    with atomic_output(path) as tmp:
        if ext in (".csv", ".tsv"):
            with open(tmp, "w", encoding="utf-8", newline="") as f:
                w = csv.writer(f, delimiter="\t" if ext == ".tsv" else ",", lineterminator="\n")
                w.writerow(names)
                lists = as_lists()
                for i in range(n_rows):
                    w.writerow([format_value(c[i]) for c in lists])
        elif ext == ".json":
            lists = as_lists()
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
